// Credentials: the list (GET /manage/credential), a new one (POST
// /manage/credential, owned by whoever makes it), and the editor: GET
// /manage/credential/{id} (keeping its ETag), the masked credential_json
// shown as one field per key, and PATCH /manage/credential/{id} with
// If-Match. Values the user did not touch are sent back exactly as they
// came, masked: the server recognises a mask of the stored value and keeps
// the secret. Deleting answers 409 while cc-pairs use it; they are listed.

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, confirmDelete, fmtTime, isMasked, uid, loadingRow, emptyRow,
  groupPicker, personName } from './ui.js';
import { kvEditor } from './kv.js';
import { sourceName, sourceOptions, credentialKeysOf } from './sources.js';
import { groupChoices, role, isAdmin } from './session.js';
import * as status from './status.js';
import { go, href } from './route.js';

const { markStale } = status;

const state = { id: null, etag: null, cred: null, fields: [], groups: null, values: null };

/** list shows the credentials the person can see. */
export async function list() {
  const box = $('credentials-error');
  clearError(box);
  const tbody = $('credentials-rows');
  tbody.replaceChildren(loadingRow(7, 'Loading credentials…'));
  try {
    const { data } = await call('GET', 'manage/credential');
    const rows = [...data].sort((a, b) => a.id - b.id);
    tbody.replaceChildren(...rows.map((k) => {
      const label = k.name || `Credential #${k.id}`;
      const sharing = [k.admin_public ? 'admin public' : null, k.curator_public ? 'curator public' : null].filter(Boolean);
      return el('tr', {},
        el('td', { class: 'num' }, String(k.id)),
        el('td', {}, el('a', { href: href('credential', k.id), 'aria-label': `Edit credential ${label}` }, label)),
        el('td', {}, el('span', { class: 'badge' }, sourceName(k.source))),
        el('td', {}, k.user_email ? personName(k.user_email) : el('span', { class: 'muted' }, 'none')),
        el('td', {}, sharing.length ? sharing.join(', ') : el('span', { class: 'muted' }, 'private')),
        el('td', {}, k.groups && k.groups.length ? k.groups.map((g) => `#${g}`).join(', ') : el('span', { class: 'muted' }, 'none')),
        el('td', {}, fmtTime(k.time_updated)),
      );
    }));
    if (rows.length === 0) tbody.replaceChildren(emptyRow(7, 'No credentials yet.', el('a', { href: '#credential/new' }, 'Create the first one.')));
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  }
}

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

/** sharingControls shows the group picker to those who may name groups (not basic users). */
async function sharingControls(selected) {
  const box = $('credential-groups');
  box.hidden = role() === 'basic';
  state.groups = null;
  if (box.hidden) return;
  let groups = [];
  try {
    groups = await groupChoices();
  } catch {
    groups = [];
  }
  state.groups = groupPicker(box, groups, selected);
}

async function fill(cred, etag) {
  state.cred = cred;
  state.etag = etag;
  $('credential-title').textContent = `Credential #${cred.id}${cred.name ? `: ${cred.name}` : ''}`;
  const groups = cred.groups && cred.groups.length ? cred.groups.map((g) => `#${g}`).join(', ') : 'none';
  $('credential-meta').textContent = `Source ${cred.source} · owner ${cred.user_email ? personName(cred.user_email) : 'none'} · groups ${groups} · ` +
    `updated ${fmtTime(cred.time_updated)} · version ${etag ?? '?'}`;
  $('credential-name').value = cred.name ?? '';
  $('credential-admin-public').checked = !!cred.admin_public;
  $('credential-curator-public').checked = !!cred.curator_public;
  $('credential-source-field').hidden = true;
  const json = cred.credential_json && typeof cred.credential_json === 'object' ? cred.credential_json : {};
  state.values = null;
  state.fields = Object.entries(json).map(([k, v]) => fieldRow(k, v));
  $('credential-fields').replaceChildren(...state.fields.map((f) => f.row));
  $('credential-add').hidden = false;
  $('masked-hint').hidden = false;
  $('credential-save').textContent = 'Save credential';
  $('credential-reload').hidden = false;
  $('credential-delete').hidden = false;
  await sharingControls(cred.groups || []);
  $('credential-form').hidden = false;
}

/** fillNew shows the form of a new credential. */
async function fillNew() {
  state.cred = null;
  state.etag = null;
  $('credential-title').textContent = 'New credential';
  $('credential-meta').textContent = 'It will be yours: you own it, and it is shared as you choose below.';
  $('credential-name').value = '';
  $('credential-admin-public').checked = isAdmin();
  $('credential-curator-public').checked = false;
  $('credential-source-field').hidden = false;
  $('credential-source').value = 'web';
  state.fields = [];
  state.values = kvEditor($('credential-fields'), {}, { name: 'value' });
  offerKeys();
  $('credential-add').hidden = true;
  $('masked-hint').hidden = true;
  $('credential-save').textContent = 'Create credential';
  $('credential-reload').hidden = true;
  $('credential-delete').hidden = true;
  $('credential-pairs-box').hidden = true;
  await sharingControls([]);
  $('credential-form').hidden = false;
}

/**
 * offerKeys gives a new credential a value for each key of its source's
 * credential_json (as Onyx's forms name them), keeping the values typed
 * already, and says which keys the source takes.
 */
function offerKeys() {
  const source = $('credential-source').value;
  const keys = credentialKeysOf(source);
  let typed = {};
  try {
    typed = state.values.get();
  } catch {
    typed = {}; // what cannot be read is shown where it is, and dropped here
  }
  const kept = Object.entries(typed).filter(([, v]) => v !== '');
  state.values.set({ ...Object.fromEntries(keys.map((k) => [k, ''])), ...Object.fromEntries(kept) });
  $('credential-source-hint').textContent = keys.length
    ? `${sourceName(source)} signs in with ${keys.join(', ')} (Onyx's keys): fill in their values.`
    : `${sourceName(source)} needs no secrets: its credential can stay empty.`;
}

/** showPairs lists the cc-pairs that use credential id (for those who see the status listing). */
async function showPairs(id) {
  $('credential-pairs-box').hidden = true;
  if (role() === 'basic') return;
  try {
    const rows = (await status.pairs()).filter((r) => r.credID === id);
    status.pairLinks($('credential-pairs'), rows, 'No cc-pair uses this credential.');
    $('credential-pairs-box').hidden = false;
  } catch {
    // The listing is the status view's to explain.
  }
}

/** open shows credential id, fetched afresh. */
export async function open(id, { keepMessage = false } = {}) {
  state.id = id;
  const errBox = $('credential-error');
  clearError(errBox);
  if (!keepMessage) $('credential-saved').textContent = '';
  $('credential-form').hidden = true;
  if (id === 'new') {
    await fillNew();
    return;
  }
  $('credential-title').textContent = `Credential #${id}`;
  $('credential-meta').textContent = 'Loading…';
  const view = $('view-credential');
  view.setAttribute('aria-busy', 'true');
  try {
    const { data, etag } = await call('GET', `manage/credential/${encodeURIComponent(id)}`);
    if (state.id !== id) return; // another one was opened meanwhile
    await fill(data, etag);
    await showPairs(data.id);
  } catch (e) {
    $('credential-meta').textContent = '';
    showError(errBox, e);
  } finally {
    if (state.id === id) view.setAttribute('aria-busy', 'false');
  }
}

/** readFields reads the edited values back, marking the ones to fix. */
function readFields() {
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
    bad.focus();
    throw new Error('Some values need fixing before saving.');
  }
  return json;
}

async function save(ev) {
  ev.preventDefault();
  const errBox = $('credential-error');
  clearError(errBox);
  $('credential-saved').textContent = '';
  let json;
  try {
    json = state.values ? state.values.get() : readFields();
  } catch (e) {
    showError(errBox, e);
    return;
  }
  const name = $('credential-name').value.trim();
  const body = {
    name: name === '' ? null : name,
    admin_public: $('credential-admin-public').checked,
    curator_public: $('credential-curator-public').checked,
    credential_json: json,
  };
  if (state.groups) body.groups = state.groups();
  // Saving draws the values afresh: the focus goes back to the value it
  // was on (Enter in a field saves), or to the button.
  const at = state.fields.find((f) => f.input === document.activeElement || f.keyInput === document.activeElement);
  const focusKey = at && (at.kind === 'new' ? at.keyInput.value.trim() : at.key);
  let saved = false;
  const button = $('credential-save');
  await busy(button, async () => {
    try {
      if (state.id === 'new') {
        body.source = $('credential-source').value;
        const { data } = await call('POST', 'manage/credential', { body });
        markStale();
        go(href('credential', data.id));
        return;
      }
      const { data, etag } = await call('PATCH', `manage/credential/${encodeURIComponent(state.id)}`, { body, etag: state.etag });
      await fill(data, etag);
      markStale();
      $('credential-saved').textContent = `Saved at ${new Date().toLocaleTimeString()}.`;
      saved = true;
    } catch (e) {
      writeError(errBox, e, { what: 'this credential', reload: () => open(state.id).then(() => $('credential-name').focus()) });
    }
  });
  if (saved) {
    const again = focusKey && state.fields.find((f) => f.key === focusKey);
    if (again) again.input.focus();
    else if (!document.activeElement || document.activeElement === document.body) button.focus();
  }
}

async function remove() {
  const cred = state.cred;
  if (!cred) return;
  const label = cred.name ? `"${cred.name}" (#${cred.id})` : `#${cred.id}`;
  await confirmDelete({
    question: `Delete the credential ${label}? Its secrets are gone for good.`,
    box: $('credential-error'),
    button: $('credential-delete'),
    request: () => call('DELETE', `manage/credential/${encodeURIComponent(cred.id)}`),
    done: () => {
      markStale();
      go('#credentials');
    },
    conflict: () => status.pairsUsing((r) => r.credID === cred.id),
  });
}

/** wire connects the controls, once. */
export function wire() {
  $('credential-source').replaceChildren(...sourceOptions(el));
  $('credential-source').addEventListener('change', () => {
    if (state.id === 'new') offerKeys();
  });
  $('credential-delete').addEventListener('click', remove);
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
  Object.assign(state, { id: null, etag: null, cred: null, fields: [], groups: null, values: null });
  $('credential-fields').replaceChildren();
  $('credential-form').hidden = true;
  $('credentials-rows').replaceChildren();
}
