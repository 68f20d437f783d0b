// cc-pairs: a new one (PUT /manage/connector/{c}/credential/{k}), and one
// pair's view (GET /manage/admin/cc-pair/{id}, Onyx's CCPairFullInfo) with
// links to its connector, credential and groups; renamed (PUT …/name),
// paused or resumed (PUT …/status, with If-Match), deleted (POST
// /manage/admin/deletion-attempt).

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, said, confirmDelete, groupPicker } from './ui.js';
import { sourceName } from './sources.js';
import { isAdmin, groupChoices } from './session.js';
import * as status from './status.js';
import { go, href } from './route.js';

const state = { connectors: [], credentials: [], groups: () => [], id: null, pair: null, etag: null };

/** fillCredentials offers the credentials that fit the chosen connector. */
function fillCredentials(want) {
  const conn = state.connectors.find((c) => String(c.id) === $('pair-connector').value);
  const select = $('pair-credential');
  const fits = state.credentials.filter((k) => !conn || k.source === conn.source || k.source === 'not_applicable');
  select.replaceChildren(...(fits.length
    ? fits.map((k) => el('option', { value: String(k.id) }, `${k.name || 'Credential'} (#${k.id}, ${sourceName(k.source)})`))
    : [el('option', { value: '' }, conn ? `No credential for ${sourceName(conn.source)} yet` : 'No credentials yet')]));
  if (want && fits.some((k) => String(k.id) === want)) select.value = want;
  if (conn && !$('pair-name').dataset.touched) $('pair-name').value = conn.name;
}

/** openNew shows the form of a new pair, preselecting ?connector= and ?credential=. */
export async function openNew(params) {
  const box = $('pair-new-error');
  clearError(box);
  $('pair-name').value = '';
  delete $('pair-name').dataset.touched;
  try {
    const [conns, creds, groups] = await Promise.all([
      call('GET', 'manage/connector'), call('GET', 'manage/credential'), groupChoices().catch(() => [])]);
    state.connectors = conns.data;
    state.credentials = [...creds.data].sort((a, b) => a.id - b.id);
    $('pair-connector').replaceChildren(...(state.connectors.length
      ? state.connectors.map((c) => el('option', { value: String(c.id) }, `${c.name} (#${c.id}, ${sourceName(c.source)})`))
      : [el('option', { value: '' }, 'No connectors yet')]));
    const want = params.get('connector');
    if (want && state.connectors.some((c) => String(c.id) === want)) $('pair-connector').value = want;
    fillCredentials(params.get('credential'));
    $('pair-access').value = 'private';
    state.groups = groupPicker($('pair-groups'), groups, []);
  } catch (e) {
    showError(box, e);
  }
}

async function create(ev) {
  ev.preventDefault();
  const box = $('pair-new-error');
  clearError(box);
  const c = $('pair-connector').value;
  const k = $('pair-credential').value;
  if (!c || !k) {
    showError(box, new Error(!c ? 'Create a connector first.' : 'Create a credential for this connector\'s source first.'));
    return;
  }
  await busy($('pair-create'), async () => {
    try {
      const { data } = await call('PUT', `manage/connector/${encodeURIComponent(c)}/credential/${encodeURIComponent(k)}`, {
        body: { name: $('pair-name').value.trim(), access_type: $('pair-access').value, groups: state.groups() },
      });
      status.markStale();
      go(href('pair', data.data));
    } catch (e) {
      writeError(box, e);
    }
  });
}

/** fact is one line of the pair's facts. */
const fact = (term, ...def) => [el('dt', {}, term), el('dd', {}, ...def)];

function fill(p, etag) {
  state.pair = p;
  state.etag = etag;
  $('pair-title').textContent = `cc-pair #${p.id}: ${p.name}`;
  const k = p.credential;
  const groups = p.groups || [];
  $('pair-facts').replaceChildren(
    ...fact('Status', el('span', { class: `badge ${p.status === 'PAUSED' ? 'paused' : 'active'}` }, p.status === 'PAUSED' ? 'paused' : 'active')),
    ...fact('Connector', el('a', { href: href('connector', p.connector.id) }, `${p.connector.name} (#${p.connector.id})`),
      ` · ${sourceName(p.connector.source)}`),
    ...fact('Credential', el('a', { href: href('credential', k.id) }, `${k.name || 'Credential'} (#${k.id})`),
      ` · owner ${k.user_email ?? 'none'}`),
    ...fact('Access type', el('span', { class: `badge ${p.access_type}` }, p.access_type)),
    ...fact('Groups', ...(groups.length ? groups.flatMap((g, i) => [i ? ', ' : '',
      isAdmin() ? el('a', { href: href('group', g) }, `Group #${g}`) : `Group #${g}`]) : [el('span', { class: 'muted' }, 'none')])),
    ...fact('Created by', p.creator_email ?? 'unknown'),
    ...fact('Indexing', el('span', { class: 'muted' }, 'Quarry indexes nothing itself: no documents, no attempts.')),
  );
  $('pair-rename').value = p.name;
  $('pair-toggle').textContent = p.status === 'PAUSED' ? 'Resume' : 'Pause';
  const editable = p.is_editable_for_current_user;
  $('pair-rename-form').hidden = !editable;
  $('pair-toggle').hidden = !editable;
  $('pair-delete').hidden = !editable;
  $('pair-readonly').hidden = editable;
  $('pair-body').hidden = false;
}

/** open shows cc-pair id. */
export async function open(id) {
  state.id = id;
  const box = $('pair-error');
  clearError(box);
  $('pair-saved').textContent = '';
  $('pair-body').hidden = true;
  $('pair-title').textContent = `cc-pair #${id}`;
  const view = $('view-pair');
  view.setAttribute('aria-busy', 'true');
  try {
    const { data, etag } = await call('GET', `manage/admin/cc-pair/${encodeURIComponent(id)}`);
    if (state.id !== id) return;
    fill(data, etag);
  } catch (e) {
    showError(box, e);
  } finally {
    if (state.id === id) view.setAttribute('aria-busy', 'false');
  }
}

const reload = () => open(state.id).then(() => $('pair-rename').focus());

async function toggle() {
  const p = state.pair;
  const next = p.status === 'PAUSED' ? 'ACTIVE' : 'PAUSED';
  const box = $('pair-error');
  clearError(box);
  await busy($('pair-toggle'), async () => {
    try {
      await call('PUT', `manage/admin/cc-pair/${p.id}/status`, { body: { status: next }, etag: state.etag });
      await open(state.id);
      said($('pair-saved'), next === 'PAUSED' ? 'Paused.' : 'Resumed.');
      $('pair-toggle').focus();
    } catch (e) {
      writeError(box, e, { what: 'this pair', reload });
    }
  });
}

async function rename(ev) {
  ev.preventDefault();
  const p = state.pair;
  const box = $('pair-error');
  clearError(box);
  await busy($('pair-rename-save'), async () => {
    try {
      await call('PUT', `manage/admin/cc-pair/${p.id}/name?new_name=${encodeURIComponent($('pair-rename').value.trim())}`, { etag: state.etag });
      status.markStale();
      await open(state.id);
      said($('pair-saved'), 'Renamed.');
    } catch (e) {
      writeError(box, e, { what: 'this pair', reload });
    }
  });
}

async function remove() {
  const p = state.pair;
  await confirmDelete({
    question: `Delete the cc-pair "${p.name}" (#${p.id})? Its connector goes too when this is its last pair; the credential stays.`,
    box: $('pair-error'),
    button: $('pair-delete'),
    request: () => call('POST', 'manage/admin/deletion-attempt', { body: { connector_id: p.connector.id, credential_id: p.credential.id } }),
    done: () => {
      status.markStale();
      go('#status');
    },
  });
}

/** wire connects the controls, once. */
export function wire() {
  $('pair-new-form').addEventListener('submit', create);
  $('pair-connector').addEventListener('change', () => fillCredentials(null));
  $('pair-name').addEventListener('input', () => { $('pair-name').dataset.touched = '1'; });
  $('pair-rename-form').addEventListener('submit', rename);
  $('pair-toggle').addEventListener('click', toggle);
  $('pair-delete').addEventListener('click', remove);
}

export function reset() {
  Object.assign(state, { connectors: [], credentials: [], id: null, pair: null, etag: null });
  $('pair-body').hidden = true;
}
