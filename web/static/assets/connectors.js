// Connectors: the list (GET /manage/connector), and one connector created
// (POST /manage/admin/connector), changed (PATCH, which replaces it whole)
// or deleted (DELETE: a 409 while cc-pairs use it, which are listed).

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, said, confirmDelete, loadingRow, emptyRow,
  groupPicker, setFreq, getFreq, fmtFreq, fmtTime } from './ui.js';
import { configEditor } from './sourceforms.js';
import { sourceName, sourceOptions, indexedSources, indexing, forgetIndexed } from './sources.js';
import { isAdmin, groupChoices } from './session.js';
import * as status from './status.js';
import { go, href } from './route.js';
import { fileUpload } from './fileupload.js';

const state = { id: null, conn: null, config: null, groups: () => [], upload: null, indexed: null };

/** list shows every connector the person can see. */
export async function list() {
  const box = $('connectors-error');
  clearError(box);
  const tbody = $('connectors-rows');
  tbody.replaceChildren(loadingRow(7, 'Loading connectors…'));
  try {
    const { data } = await call('GET', 'manage/connector');
    tbody.replaceChildren(...data.map((c) => el('tr', {},
      el('td', { class: 'num' }, String(c.id)),
      el('td', {}, el('a', { href: href('connector', c.id) }, c.name)),
      el('td', {}, el('span', { class: 'badge' }, sourceName(c.source))),
      el('td', {}, c.input_type),
      el('td', {}, fmtFreq(c.refresh_freq)),
      el('td', {}, fmtFreq(c.prune_freq)),
      el('td', {}, c.credential_ids.length ? c.credential_ids.map((k) => `#${k}`).join(', ') : el('span', { class: 'muted' }, 'none')),
    )));
    if (data.length === 0) tbody.replaceChildren(emptyRow(7, 'No connectors yet.', el('a', { href: '#connector/new' }, 'Create the first one.')));
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  }
}

/** toLocalInput renders an RFC 3339 UTC time for a datetime-local input (as UTC). */
function toLocalInput(s) {
  return s ? s.replace(/(\.\d+)?Z$/, '') : '';
}

/** showIndexing says under the picker whether Quarry indexes the source chosen. */
function showIndexing() {
  $('connector-source-hint').textContent = indexing($('connector-source').value, state.indexed);
}

/** fill shows conn (null: a new connector) in the form. */
async function fill(conn) {
  state.conn = conn;
  const isNew = conn === null;
  // The picker, grouped by what Quarry indexes once the server said.
  state.indexed = await indexedSources();
  $('connector-source').replaceChildren(...sourceOptions(el, state.indexed));
  $('connector-name').value = isNew ? '' : conn.name;
  $('connector-source').value = isNew ? 'web' : conn.source;
  showIndexing();
  $('connector-input-type').value = isNew ? 'poll' : conn.input_type;
  $('connector-indexing-start').value = isNew ? '' : toLocalInput(conn.indexing_start);
  setFreq($('connector-refresh'), $('connector-refresh-unit'), isNew ? null : conn.refresh_freq);
  setFreq($('connector-prune'), $('connector-prune-unit'), isNew ? null : conn.prune_freq);
  state.config = configEditor($('connector-config'), $('connector-source').value, isNew ? {} : conn.connector_specific_config, { isNew });
  state.upload.show($('connector-source').value === 'file');
  // The connector routes show the sharing when the server sends it; if
  // not, the form says that saving sets it.
  const known = isNew || conn.access_type !== undefined;
  $('connector-access').value = isNew || !known ? 'private' : conn.access_type;
  $('connector-sharing-hint').textContent = known
    ? 'Who besides its creator sees the connector: every curator if it is public or sync, otherwise the curators of its groups.'
    : 'This server does not show a connector\'s sharing: saving sets it to what is chosen here.';
  let groups = [];
  try {
    groups = await groupChoices();
  } catch {
    groups = [];
  }
  state.groups = groupPicker($('connector-groups'), groups, isNew || !known ? [] : conn.groups || []);
  $('connector-save').textContent = isNew ? 'Create connector' : 'Save connector';
  $('connector-delete').hidden = isNew || !isAdmin();
  $('connector-form').hidden = false;
}

/** open shows connector id, or the form of a new one ("new"). */
export async function open(id) {
  state.id = id;
  const box = $('connector-error');
  clearError(box);
  $('connector-saved').textContent = '';
  $('connector-form').hidden = true;
  $('connector-pairs-box').hidden = true;
  if (id === 'new') {
    // A connector still loading when "new" was asked is not shown.
    $('view-connector').setAttribute('aria-busy', 'false');
    $('connector-title').textContent = 'New connector';
    $('connector-meta').textContent = 'Choose its source, then how it reads it. You pair it with a credential afterwards.';
    await fill(null);
    return;
  }
  $('connector-title').textContent = `Connector #${id}`;
  $('connector-meta').textContent = 'Loading…';
  const view = $('view-connector');
  view.setAttribute('aria-busy', 'true');
  try {
    const { data } = await call('GET', `manage/connector/${encodeURIComponent(id)}`);
    if (state.id !== id) return;
    $('connector-title').textContent = `Connector #${data.id}: ${data.name}`;
    $('connector-meta').textContent = `${sourceName(data.source)} · created ${fmtTime(data.time_created)} · updated ${fmtTime(data.time_updated)}`;
    await fill(data);
    await showPairs(data.id);
  } catch (e) {
    $('connector-meta').textContent = '';
    showError(box, e);
  } finally {
    if (state.id === id) view.setAttribute('aria-busy', 'false');
  }
}

/** showPairs lists the cc-pairs of connector id. */
async function showPairs(id) {
  let rows = [];
  try {
    rows = (await status.pairs()).filter((r) => r.connID === id);
  } catch {
    return;
  }
  status.pairLinks($('connector-pairs'), rows, 'No cc-pair uses this connector.');
  $('connector-pair-new').href = href('pair', 'new', { connector: id });
  $('connector-pairs-box').hidden = false;
}

/** body reads the form, or throws a message (the field is marked). */
function body() {
  const freq = (input, unit) => {
    input.removeAttribute('aria-invalid');
    try {
      return getFreq(input, unit);
    } catch (e) {
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      throw e;
    }
  };
  const start = $('connector-indexing-start').value;
  return {
    name: $('connector-name').value.trim(),
    source: $('connector-source').value,
    input_type: $('connector-input-type').value,
    connector_specific_config: state.config.get(),
    refresh_freq: freq($('connector-refresh'), $('connector-refresh-unit')),
    prune_freq: freq($('connector-prune'), $('connector-prune-unit')),
    indexing_start: start ? `${start.length === 16 ? `${start}:00` : start}Z` : null,
    access_type: $('connector-access').value,
    groups: state.groups(),
  };
}

async function save(ev) {
  ev.preventDefault();
  const box = $('connector-error');
  clearError(box);
  $('connector-saved').textContent = '';
  let b;
  try {
    b = body();
  } catch (e) {
    showError(box, e);
    return;
  }
  await busy($('connector-save'), async () => {
    try {
      if (state.id === 'new') {
        const { data } = await call('POST', 'manage/admin/connector', { body: b });
        status.markStale();
        go(href('connector', data.id));
        return;
      }
      const { data } = await call('PATCH', `manage/admin/connector/${encodeURIComponent(state.id)}`, { body: b });
      status.markStale();
      $('connector-title').textContent = `Connector #${data.id}: ${data.name}`;
      await fill(data);
      said($('connector-saved'), `Saved at ${new Date().toLocaleTimeString()}.`);
    } catch (e) {
      writeError(box, e);
    }
  });
}

async function remove() {
  const conn = state.conn;
  if (!conn) return;
  await confirmDelete({
    question: `Delete the connector "${conn.name}" (#${conn.id})? This cannot be undone.`,
    box: $('connector-error'),
    button: $('connector-delete'),
    request: () => call('DELETE', `manage/admin/connector/${encodeURIComponent(conn.id)}`),
    done: () => {
      status.markStale();
      go('#connectors');
    },
    // Which pairs still use it: delete those first.
    conflict: () => status.pairsUsing((r) => r.connID === conn.id),
  });
}

/**
 * changeSource shows the configuration form of the source chosen: the
 * connector's own settings when it goes back to its source, else a new
 * form's.
 */
function changeSource() {
  const source = $('connector-source').value;
  const conn = state.conn;
  const same = conn !== null && conn.source === source;
  state.config = configEditor($('connector-config'), source, same ? conn.connector_specific_config : {}, { isNew: !same });
  state.upload.show(source === 'file');
  showIndexing();
}

/** wire connects the controls, once. */
export function wire() {
  $('connector-source').replaceChildren(...sourceOptions(el));
  // The file connector's upload (fileupload.js) fills the file form.
  state.upload = fileUpload($('connector-file-box'), (keys) => state.config.merge?.(keys));
  $('connector-source').addEventListener('change', changeSource);
  $('connector-form').addEventListener('submit', save);
  $('connector-delete').addEventListener('click', remove);
}

export function reset() {
  Object.assign(state, { id: null, conn: null, config: null, indexed: null });
  forgetIndexed();
  state.upload?.show(false);
  $('connector-form').hidden = true;
  $('connectors-rows').replaceChildren();
}
