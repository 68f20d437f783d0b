// A key/value editor for a JSON object (a connector's
// connector_specific_config, a new credential's values): one row per key,
// each with its kind (text, number, true/false, or JSON for lists and
// objects), and a JSON view of the whole object to paste or read.

import { el, uid } from './ui.js';

const kinds = [['text', 'text'], ['number', 'number'], ['boolean', 'true/false'], ['json', 'JSON']];

function kindOf(v) {
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'text';
  return 'json';
}

/**
 * kvEditor fills container and returns {get, set}: get returns the object,
 * or throws an Error whose message says what to fix (and marks the field).
 */
export function kvEditor(container, initial = {}, { name = 'value' } = {}) {
  const base = uid(container.id || 'kv');
  let rows = [];
  let asJSON = false;
  const list = el('div', { class: 'kv-rows' });
  const empty = el('p', { class: 'muted small' }, `No ${name}s yet.`);
  const add = el('button', { type: 'button', class: 'secondary' }, `Add a ${name}`);
  const jsonID = `${base}-json`;
  const jsonArea = el('textarea', { id: jsonID, class: 'code', rows: 8, spellcheck: false });
  const jsonError = el('div', { class: 'error', role: 'alert', id: `${jsonID}-error` });
  jsonArea.setAttribute('aria-describedby', `${jsonID}-error`);
  const jsonBox = el('div', { class: 'field', hidden: true },
    el('label', { for: jsonID }, 'As JSON (an object)'), jsonArea, jsonError);
  const toggle = el('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false' }, 'Edit as JSON');

  function row(key, value) {
    const n = uid(base);
    const k = el('input', { type: 'text', id: `${n}-k`, autocomplete: 'off', spellcheck: false, value: key });
    const kind = el('select', { id: `${n}-t` }, ...kinds.map(([v, t]) => el('option', { value: v }, t)));
    kind.value = kindOf(value);
    const text = kind.value === 'json' ? JSON.stringify(value) : value === undefined ? '' : String(value);
    const v = kind.value === 'boolean'
      ? el('select', { id: `${n}-v` }, el('option', { value: 'true' }, 'true'), el('option', { value: 'false' }, 'false'))
      : el('input', { type: 'text', id: `${n}-v`, autocomplete: 'off', spellcheck: false, value: text });
    if (kind.value === 'boolean') v.value = String(value);
    const remove = el('button', { type: 'button', class: 'danger' }, 'Remove');
    const error = el('div', { class: 'error', role: 'alert' });
    const r = { k, kind, v, error };
    const setLabels = () => {
      const label = k.value.trim() || 'new key';
      remove.setAttribute('aria-label', `Remove ${label}`);
    };
    r.el = el('div', { class: 'kv-row' },
      el('div', { class: 'field' }, el('label', { for: `${n}-k` }, 'Key'), k),
      el('div', { class: 'field' }, el('label', { for: `${n}-t` }, 'Kind'), kind),
      el('div', { class: 'field' }, el('label', { for: `${n}-v` }, 'Value'), v),
      remove, error);
    setLabels();
    k.addEventListener('input', setLabels);
    kind.addEventListener('change', () => {
      // Swap the value editor for the new kind, keeping the text.
      const keep = r.v.value;
      const next = kind.value === 'boolean'
        ? el('select', { id: `${n}-v` }, el('option', { value: 'true' }, 'true'), el('option', { value: 'false' }, 'false'))
        : el('input', { type: 'text', id: `${n}-v`, autocomplete: 'off', spellcheck: false, value: keep === 'true' || keep === 'false' ? keep : keep });
      if (kind.value === 'boolean') next.value = keep === 'false' ? 'false' : 'true';
      r.v.replaceWith(next);
      r.v = next;
    });
    remove.addEventListener('click', () => {
      const i = rows.indexOf(r);
      rows.splice(i, 1);
      r.el.remove();
      empty.hidden = rows.length > 0;
      const next = rows[i] || rows[i - 1];
      (next ? next.k : add).focus();
    });
    return r;
  }

  function valueOf(r) {
    const t = r.v.value;
    switch (r.kind.value) {
      case 'boolean': return t === 'true';
      case 'number': {
        const x = Number(t);
        if (t.trim() === '' || !Number.isFinite(x)) throw new Error('Not a number.');
        return x;
      }
      case 'json':
        try {
          return JSON.parse(t);
        } catch (e) {
          throw new Error(`Not valid JSON: ${e.message}`);
        }
      default: return t;
    }
  }

  /** fromRows reads the rows, marking the first bad one. */
  function fromRows() {
    const out = {};
    let bad = null;
    for (const r of rows) {
      r.error.replaceChildren();
      r.v.removeAttribute('aria-invalid');
      r.k.removeAttribute('aria-invalid');
      const key = r.k.value.trim();
      try {
        if (key === '') {
          if (r.v.value === '') continue; // an empty row is ignored
          r.k.setAttribute('aria-invalid', 'true');
          throw new Error('Give this value a key.');
        }
        if (Object.hasOwn(out, key)) throw new Error(`The key "${key}" is there twice.`);
        out[key] = valueOf(r);
      } catch (e) {
        r.error.textContent = e.message;
        if (!r.k.hasAttribute('aria-invalid')) r.v.setAttribute('aria-invalid', 'true');
        bad = bad || (r.k.hasAttribute('aria-invalid') ? r.k : r.v);
      }
    }
    if (bad) {
      bad.focus();
      throw new Error(`Some ${name}s need fixing.`);
    }
    return out;
  }

  function fromJSON() {
    jsonError.replaceChildren();
    jsonArea.removeAttribute('aria-invalid');
    let v;
    try {
      v = JSON.parse(jsonArea.value.trim() === '' ? '{}' : jsonArea.value);
    } catch (e) {
      v = new Error(`Not valid JSON: ${e.message}`);
    }
    if (!(v instanceof Error) && (v === null || typeof v !== 'object' || Array.isArray(v))) {
      v = new Error('The JSON must be an object: {"key": "value", …}.');
    }
    if (v instanceof Error) {
      jsonError.textContent = v.message;
      jsonArea.setAttribute('aria-invalid', 'true');
      jsonArea.focus();
      throw v;
    }
    return v;
  }

  function set(obj) {
    rows = Object.entries(obj || {}).map(([k, v]) => row(k, v));
    list.replaceChildren(...rows.map((r) => r.el));
    empty.hidden = rows.length > 0;
    jsonArea.value = JSON.stringify(obj || {}, null, 2);
  }

  function show(json) {
    asJSON = json;
    list.hidden = json;
    add.hidden = json;
    empty.hidden = json || rows.length > 0;
    jsonBox.hidden = !json;
    toggle.textContent = json ? 'Edit as rows' : 'Edit as JSON';
    toggle.setAttribute('aria-pressed', String(json));
  }

  toggle.addEventListener('click', () => {
    try {
      if (asJSON) {
        set(fromJSON());
        show(false);
        (rows[0] ? rows[0].k : add).focus();
      } else {
        jsonArea.value = JSON.stringify(fromRows(), null, 2);
        show(true);
        jsonArea.focus();
      }
    } catch {
      // The message is shown where the problem is.
    }
  });
  add.addEventListener('click', () => {
    const r = row('', '');
    rows.push(r);
    list.append(r.el);
    empty.hidden = true;
    r.k.focus();
  });

  container.replaceChildren(list, empty, jsonBox, el('div', { class: 'buttons' }, add, toggle));
  set(initial);
  show(false);
  return { get: () => (asJSON ? fromJSON() : fromRows()), set: (o) => { set(o); show(false); } };
}
