// The credential editor: GET /manage/credential/{id} (keeping its ETag),
// the masked credential_json shown as one field per key, and
// PATCH /manage/credential/{id} with If-Match. Values the user did not
// touch are sent back exactly as they came, masked: the server recognises
// a mask of the stored value and keeps the secret.

import { call } from './api.js';
import { $, el, showError, clearError, fmtTime, isMasked, uid } from './ui.js';
import { markStale } from './status.js';

const state = { id: null, etag: null, cred: null, fields: [] };

/** kindOf is how a value is edited. */
function kindOf(v) {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  return 'json'; // objects and lists, as JSON text
}

/** fieldRow builds the editor of one credential_json entry. */
function fieldRow(key, value) {
  const kind = key === null ? 'new' : kindOf(value);
  const id = uid('cred-field');
  const f = { key, kind, original: value };
  const remove = el('button', { type: 'button', class: 'danger' }, 'Remove');
  let label;
  let input;
  let hint = null;
  if (kind === 'new') {
    f.keyInput = el('input', { type: 'text', id: `${id}-key`, class: 'key-input', autocomplete: 'off', spellcheck: false, placeholder: 'key' });
    label = el('div', {}, el('label', { for: `${id}-key`, class: 'visually-hidden' }, 'New key'), f.keyInput);
    input = el('input', { type: 'text', id, autocomplete: 'off', spellcheck: false, 'aria-label': 'New value' });
    remove.setAttribute('aria-label', 'Remove the new value');
  } else {
    label = el('label', { for: id }, key);
    remove.setAttribute('aria-label', `Remove ${key}`);
    if (kind === 'boolean') {
      input = el('select', { id }, el('option', { value: 'true' }, 'true'), el('option', { value: 'false' }, 'false'));
      input.value = String(value);
    } else if (kind === 'json') {
      const text = JSON.stringify(value, null, 2);
      input = el('textarea', { id, class: 'code', rows: Math.min(12, text.split('\n').length + 1), spellcheck: false });
      input.value = text;
    } else {
      input = el('input', { type: 'text', id, autocomplete: 'off', spellcheck: false });
      input.value = value === null ? '' : String(value);
      if (kind === 'null') input.placeholder = 'null';
    }
    if (kind === 'json' || isMasked(value)) {
      hint = el('p', { id: `${id}-hint`, class: 'hint muted small' },
        kind === 'json' ? 'JSON text; masked values inside it are kept if left as they are.'
          : 'Masked secret: left as it is, the stored value is kept.');
      input.setAttribute('aria-describedby', `${id}-hint`);
    }
  }
  f.input = input;
  f.error = el('div', { class: 'error', role: 'alert', id: `${id}-error` });
  f.row = el('div', { class: 'kv' }, label, input, remove, hint, f.error);
  remove.addEventListener('click', () => {
    const i = state.fields.indexOf(f);
    state.fields.splice(i, 1);
    f.row.remove();
    const next = state.fields[i] || state.fields[i - 1];
    (next ? next.input : $('credential-add')).focus();
  });
  return f;
}

/** valueOf reads one field back, or throws a message for its error box. */
function valueOf(f) {
  const text = f.input.value;
  switch (f.kind) {
    case 'boolean':
      return text === 'true';
    case 'null':
      return text === '' ? null : text;
    case 'number': {
      const n = Number(text);
      return text.trim() !== '' && Number.isFinite(n) ? n : text;
    }
    case 'json':
      try {
        return JSON.parse(text);
      } catch (e) {
        throw new Error(`Not valid JSON: ${e.message}`);
      }
    default:
      return text;
  }
}

function fill(cred, etag) {
  state.cred = cred;
  state.etag = etag;
  $('credential-title').textContent = `Credential #${cred.id}${cred.name ? `: ${cred.name}` : ''}`;
  const groups = cred.groups && cred.groups.length ? cred.groups.map((g) => `#${g}`).join(', ') : 'none';
  $('credential-meta').textContent = `Source ${cred.source} · owner ${cred.user_email ?? 'none'} · groups ${groups} · ` +
    `updated ${fmtTime(cred.time_updated)} · version ${etag ?? '?'}`;
  $('credential-name').value = cred.name ?? '';
  $('credential-admin-public').checked = !!cred.admin_public;
  $('credential-curator-public').checked = !!cred.curator_public;
  const json = cred.credential_json && typeof cred.credential_json === 'object' ? cred.credential_json : {};
  state.fields = Object.entries(json).map(([k, v]) => fieldRow(k, v));
  $('credential-fields').replaceChildren(...state.fields.map((f) => f.row));
  $('credential-form').hidden = false;
}

/** open shows credential id, fetched afresh. */
export async function open(id, { keepMessage = false } = {}) {
  state.id = id;
  const errBox = $('credential-error');
  clearError(errBox);
  if (!keepMessage) $('credential-saved').textContent = '';
  $('credential-form').hidden = true;
  $('credential-title').textContent = `Credential #${id}`;
  $('credential-meta').textContent = 'Loading…';
  const view = $('view-credential');
  view.setAttribute('aria-busy', 'true');
  try {
    const { data, etag } = await call('GET', `manage/credential/${encodeURIComponent(id)}`);
    if (state.id !== id) return; // another one was opened meanwhile
    fill(data, etag);
  } catch (e) {
    $('credential-meta').textContent = '';
    showError(errBox, e);
  } finally {
    if (state.id === id) view.setAttribute('aria-busy', 'false');
  }
}

async function save(ev) {
  ev.preventDefault();
  const errBox = $('credential-error');
  clearError(errBox);
  $('credential-saved').textContent = '';
  const json = {};
  let bad = null;
  for (const f of state.fields) {
    f.error.replaceChildren();
    f.input.removeAttribute('aria-invalid');
    try {
      const key = f.kind === 'new' ? f.keyInput.value.trim() : f.key;
      if (key === '') {
        if (f.input.value === '') continue; // an empty new row is ignored
        throw new Error('Give the new value a key.');
      }
      if (Object.hasOwn(json, key)) throw new Error(`The key "${key}" is there twice.`);
      json[key] = valueOf(f);
    } catch (e) {
      f.error.textContent = e.message;
      f.input.setAttribute('aria-invalid', 'true');
      bad = bad || f.input;
    }
  }
  if (bad) {
    showError(errBox, new Error('Some values need fixing before saving.'));
    bad.focus();
    return;
  }
  const name = $('credential-name').value.trim();
  const body = {
    name: name === '' ? null : name,
    admin_public: $('credential-admin-public').checked,
    curator_public: $('credential-curator-public').checked,
    credential_json: json,
  };
  const button = $('credential-save');
  button.disabled = true;
  try {
    const { data, etag } = await call('PATCH', `manage/credential/${encodeURIComponent(state.id)}`, { body, etag: state.etag });
    fill(data, etag);
    markStale();
    $('credential-saved').textContent = `Saved at ${new Date().toLocaleTimeString()}.`;
  } catch (e) {
    if (e.status === 412) {
      const reload = el('button', { type: 'button', class: 'secondary' }, 'Reload the current version');
      reload.addEventListener('click', () => open(state.id).then(() => $('credential-name').focus()));
      showError(errBox, new Error('Someone else changed this credential since you opened it, so it was not saved. ' +
        'Reload it to see the current values (your unsaved changes here will be lost), then make your change again.'), reload);
      reload.focus();
    } else {
      showError(errBox, e);
      errBox.scrollIntoView({ block: 'nearest' });
    }
  } finally {
    button.disabled = false;
  }
}

/** wire connects the controls, once. */
export function wire() {
  $('credential-form').addEventListener('submit', save);
  $('credential-reload').addEventListener('click', () => open(state.id));
  $('credential-add').addEventListener('click', () => {
    const f = fieldRow(null, '');
    state.fields.push(f);
    $('credential-fields').append(f.row);
    f.keyInput.focus();
  });
}

/** reset forgets the open credential (sign-out). */
export function reset() {
  Object.assign(state, { id: null, etag: null, cred: null, fields: [] });
  $('credential-fields').replaceChildren();
  $('credential-form').hidden = true;
}
