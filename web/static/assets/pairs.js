// cc-pairs: a new one (PUT /manage/connector/{c}/credential/{k}), and one
// pair's view (GET /manage/admin/cc-pair/{id}, Onyx's CCPairFullInfo) with
// links to its connector, credential and groups; renamed (PUT …/name),
// paused or resumed (PUT …/status, with If-Match), deleted (POST
// /manage/admin/deletion-attempt). Its indexing: its state, runs asked for
// (POST /manage/admin/connector/run-once), its index attempts (GET
// …/index-attempts, newest first, a page at a time) and their errors (GET
// …/errors), refreshed every few seconds while an attempt waits or runs
// (or a run asked for, or a new pair's first attempt, is still to be made)
// and the view is on screen; whether Quarry indexes its source. Its
// documents and pruning: pairdocs.js.

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, said, confirmAction, confirmDelete, groupPicker, fmtInt, fmtTime,
  loadingRow, emptyRow, keepFocus, ago, words, attemptBadge, safeLink, personName } from './ui.js';
import { sourceName, indexedSources, indexing } from './sources.js';
import { isAdmin, groupChoices, holds } from './session.js';
import * as status from './status.js';
import { current, go, href } from './route.js';
import * as pairdocs from './pairdocs.js';
import * as pairsync from './pairsync.js';

const state = {
  connectors: [], credentials: [], groups: () => [], id: null, pair: null, etag: null,
  indexed: null,          // the sources Quarry indexes (sources.js), or null: not known
  attemptsPage: 0, errorsPage: 0,
  attemptRows: new Map(), // attempt id → { key, tr }: rows redrawn only when they change
  asked: null,            // a run asked for here and not yet made: { at, attempts }
  timer: 0,               // the view's clock: ages, and refreshes while attempts are live
  lastFetch: 0,
  inflight: false,
  liveText: '',
  whole: true,            // the person sees the whole pair, and its figures
};

/** The sizes of the pages of attempts and errors. */
const attemptsPageSize = 10;
const errorsPageSize = 10;
/** How often the view refreshes while an attempt waits or runs, in ms. */
export const pollEvery = 3000;
/** How long a run asked for here is waited for, in ms. */
const askedFor = 120_000;

/** The statuses of an attempt that has yet to end. */
const liveStatuses = ['not_started', 'in_progress'];

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

/** The badge class of a pair's status. */
const pairBadge = (s) => ({ PAUSED: 'paused', ACTIVE: 'active', SCHEDULED: 'waiting', INITIAL_INDEXING: 'waiting',
  DELETING: 'failed', INVALID: 'failed' })[s] || '';

/** statusBadge is the badge of a pair's status. */
const statusBadge = (s) => el('span', { class: `badge ${pairBadge(s)}`, id: 'pair-status-badge' }, words(s));

/** since is a span whose text the view's clock keeps as "N s ago". */
const since = (t, prefix = '') => el('span', { 'data-since': t, 'data-prefix': prefix }, `${prefix}${ago(t)}`);

/** fill shows pair p, and keeps its ETag for the changes made here. */
function fill(p, etag) {
  state.pair = p;
  state.etag = etag;
  $('pair-title').textContent = `cc-pair #${p.id}: ${p.name}`;
  const k = p.credential;
  const groups = p.groups || [];
  $('pair-facts').replaceChildren(
    ...fact('Status', statusBadge(p.status)),
    ...fact('Connector', el('a', { href: href('connector', p.connector.id) }, `${p.connector.name} (#${p.connector.id})`),
      ` · ${sourceName(p.connector.source)}`),
    ...indexedFact(p.connector.source),
    ...fact('Credential', el('a', { href: href('credential', k.id) }, `${k.name || 'Credential'} (#${k.id})`),
      ` · owner ${k.user_email ? personName(k.user_email) : 'none'}`),
    ...fact('Access type', el('span', { class: `badge ${p.access_type}` }, p.access_type)),
    ...fact('Groups', ...(groups.length ? groups.flatMap((g, i) => [i ? ', ' : '',
      isAdmin() ? el('a', { href: href('group', g) }, `Group #${g}`) : `Group #${g}`]) : [el('span', { class: 'muted' }, 'none')])),
    ...fact('Created by', p.creator_email ? personName(p.creator_email) : 'unknown'),
  );
  $('pair-rename').value = p.name;
  const editable = p.is_editable_for_current_user;
  $('pair-rename-form').hidden = !editable;
  $('pair-toggle').hidden = !editable;
  $('pair-delete').hidden = !editable;
  $('pair-readonly').hidden = editable;
  $('pair-run-buttons').hidden = !editable;
  $('pair-run-hint').hidden = !editable;
  fillIndexing(p);
  $('pair-body').hidden = false;
}

/** indexedFact says whether Quarry indexes the pair's source (nothing when not known). */
function indexedFact(source) {
  const said = indexing(source, state.indexed);
  if (!said) return [];
  const yes = state.indexed.has(source);
  return fact('Indexed by Quarry', el('span', { class: `badge ${yes ? 'active' : 'paused'}`, id: 'pair-indexed' }, yes ? 'yes' : 'no'), ` ${said}`);
}

/**
 * awaitsFirst reports whether the scheduler is about to make the pair's
 * first attempt: a new pair, not paused, never attempted, of a source
 * Quarry indexes (or the server did not say).
 */
const awaitsFirst = (p) => p.status === 'SCHEDULED' && !(p.number_of_index_attempts ?? 0) &&
  (!state.indexed || state.indexed.has(p.connector.source));

/** live reports whether the pair's latest attempt waits or runs. */
const live = (p) => liveStatuses.includes(p.last_index_attempt_status);

/**
 * fillIndexing shows the pair's indexing fields and what its buttons may
 * do. It only sets text and attributes in place, so that a refresh moves
 * no focus.
 */
function fillIndexing(p) {
  const badge = $('pair-status-badge');
  if (badge) {
    badge.textContent = words(p.status);
    badge.className = `badge ${pairBadge(p.status)}`;
  }
  const paused = p.status === 'PAUSED';
  $('pair-toggle').textContent = paused ? 'Resume' : 'Pause';
  const lastStatus = p.last_index_attempt_status;
  $('pair-indexing-facts').replaceChildren(
    ...(p.status === 'INVALID'
      ? fact('Invalid', el('span', { class: 'badge failed' }, 'yes'), ' Quarry cannot run this pair: its latest attempt below says why. ' +
        'Nothing runs until it is resumed or run, its connector or credential is edited, or a Quarry with a connector for its source starts.')
      : []),
    ...(p.in_repeated_error_state
      ? fact('Repeated errors', el('span', { class: 'badge failed' }, 'yes'), ' its latest attempts failed in a row: see their errors below')
      : []),
    ...fact('Indexing now', p.indexing ? 'yes: an attempt is running' : (lastStatus === 'not_started' ? 'no: an attempt waits for a worker' : 'no')),
    ...fact('Latest attempt', lastStatus ? el('span', { class: `badge ${attemptBadge(lastStatus)}` }, words(lastStatus)) : el('span', { class: 'muted' }, 'none yet'),
      ` (${fmtInt(p.number_of_index_attempts ?? 0)} in all)`),
    ...(state.whole ? fact('Documents indexed', fmtInt(p.num_docs_indexed ?? 0))
      : fact('Documents indexed', `${fmtInt(p.num_docs_indexed ?? 0)} you may read`, el('span', { class: 'muted' },
        ' (its connector says who may read each document; the pair\'s own counts are for those who manage connectors)'))),
    ...fact('Last indexed', p.last_indexed ? `${fmtTime(p.last_indexed)} (${ago(p.last_indexed)})` : el('span', { class: 'muted' }, 'never')),
    ...checkpointFact(p.latest_checkpoint_description),
  );
  const running = live(p);
  $('pair-run').disabled = paused;
  $('pair-reindex').disabled = paused;
  // Cancel pauses the pair: there is something to cancel only while an
  // attempt waits or runs.
  $('pair-cancel').hidden = paused || !running;
  $('pair-run-hint').textContent = paused
    ? 'The pair is paused: resume it to index it. Runs asked for wait until then.'
    : running
      ? 'An attempt waits or runs: a run asked for now is not made until it ends. Cancel pauses the pair, which cancels the attempt.'
      : 'A run is made by Quarry\'s scheduler within seconds and run by the next free worker: from where the last run left off, or everything when from the beginning.';
}

/** open shows cc-pair id. */
export async function open(id) {
  const other = state.id !== id;
  state.id = id;
  const box = $('pair-error');
  clearError(box);
  $('pair-saved').textContent = '';
  $('pair-indexing-done').textContent = '';
  $('pair-body').hidden = true;
  $('pair-title').textContent = `cc-pair #${id}`;
  if (other) {
    Object.assign(state, { attemptsPage: 0, errorsPage: 0, asked: null, liveText: '' });
    state.attemptRows = new Map();
    $('pair-attempts-rows').replaceChildren(loadingRow(9, 'Loading index attempts…'));
    $('pair-errors-rows').replaceChildren();
    delete $('pair-errors-rows').dataset.key;
    $('pair-errors-resolved').checked = false;
    $('pair-live').textContent = '';
    $('pair-live-age').replaceChildren();
  }
  const view = $('view-pair');
  view.setAttribute('aria-busy', 'true');
  try {
    const [{ data, etag }, indexed, manages] = await Promise.all([
      call('GET', `manage/admin/cc-pair/${encodeURIComponent(id)}`),
      indexedSources(),
      isAdmin() || holds('manage:connectors'),
      loadAttempts(id).catch((e) => $('pair-attempts-rows').replaceChildren(emptyRow(9, `The attempts could not be loaded: ${e.message}`))),
      loadErrors(id).catch((e) => $('pair-errors-rows').replaceChildren(emptyRow(6, `The errors could not be loaded: ${e.message}`))),
    ]);
    if (state.id !== id) return;
    state.indexed = indexed;
    // Of a sync pair, those who do not manage connectors see the documents
    // open to them, not the figures of the whole pair (the attempts'
    // counts, which the server sends as 0).
    state.whole = data.access_type !== 'sync' || manages;
    view.classList.toggle('figures-withheld', !state.whole);
    fill(data, etag);
    state.lastFetch = Date.now();
    // A new pair's page follows its first attempt as a run asked for here.
    if (awaitsFirst(data) && !state.asked) state.asked = { at: Date.now(), attempts: 0 };
    startClock();
    await Promise.all([pairdocs.open(id, data, { editable: data.is_editable_for_current_user }),
      pairsync.open(id, data, { editable: data.is_editable_for_current_user })]);
  } catch (e) {
    showError(box, e);
  } finally {
    if (state.id === id) view.setAttribute('aria-busy', 'false');
  }
}

/** onView reports whether the pair's view, of pair id, is on screen. */
function onView(id) {
  const r = current();
  return !$('view-pair').hidden && r.view === 'pair' && r.id === String(id) && state.id === id;
}

/**
 * startClock runs the view's clock: each second it renews the ages shown,
 * and every pollEvery ms, while an attempt waits or runs (or a run asked
 * for here, or a new pair's first, is not made yet), it refreshes the
 * pair, its attempts and its errors. It stops when the view is left.
 */
function startClock() {
  stopClock();
  const id = state.id;
  state.timer = setInterval(() => {
    if (!onView(id)) {
      stopClock();
      return;
    }
    const now = Date.now();
    for (const e of document.querySelectorAll('#view-pair [data-since]')) e.textContent = `${e.dataset.prefix}${ago(e.dataset.since, now)}`;
    if (!document.hidden && !state.inflight && now - state.lastFetch >= pollEvery && polling()) refresh(id);
  }, 1000);
}

/** stopClock stops the view's clock. */
export function stopClock() {
  if (state.timer) clearInterval(state.timer);
  state.timer = 0;
}

/** polling reports whether the view should refresh by itself. */
function polling() {
  const p = state.pair;
  if (!p) return false;
  // A prune that waits for a pair that is paused or INVALID waits for a
  // person: nothing to follow.
  if (live(p) || (p.pruning && p.status !== 'PAUSED' && p.status !== 'INVALID')) return true;
  if (p.permission_syncing || p.last_permission_sync_attempt_status === 'not_started') return true;
  return Boolean(state.asked && Date.now() - state.asked.at < askedFor && (p.number_of_index_attempts ?? 0) <= state.asked.attempts);
}

/**
 * refresh reloads the pair's indexing, its current pages of attempts and
 * errors. The name a person may be typing is left as it is.
 */
async function refresh(id) {
  state.inflight = true;
  state.lastFetch = Date.now();
  try {
    const [{ data, etag }] = await Promise.all([call('GET', `manage/admin/cc-pair/${encodeURIComponent(id)}`), loadAttempts(id), loadErrors(id),
      pairdocs.refresh(id)]);
    if (state.id !== id) return;
    // Indexing changes the pair's status (scheduled, initial indexing,
    // active) and so its ETag: that one is taken. A rename, a pause or a
    // resume by someone else is not, so that a change here then answers
    // 412 and offers to reload.
    const old = state.pair;
    if (old && old.name === data.name && (old.status === 'PAUSED') === (data.status === 'PAUSED')) state.etag = etag;
    state.pair = data;
    fillIndexing(data);
    pairdocs.pruned(data);
    await pairsync.synced(data);
    if (state.asked && (data.number_of_index_attempts ?? 0) > state.asked.attempts) state.asked = null;
  } catch (e) {
    if (state.id === id) showError($('pair-error'), e);
  } finally {
    state.inflight = false;
  }
}

/** attemptRow draws one attempt. */
function attemptRow(a) {
  const trace = a.full_exception_trace
    ? el('details', { class: 'trace' }, el('summary', {}, 'Trace'),
      el('pre', { class: 'code', tabIndex: 0, 'aria-label': `Trace of attempt ${a.id}` }, a.full_exception_trace))
    : null;
  const isLive = liveStatuses.includes(a.status);
  // A window from the epoch is from the beginning of the source.
  const from = (t) => (!t ? '…' : new Date(t).getTime() <= 0 ? 'the beginning' : fmtTime(t));
  const pollWindow = a.poll_range_start || a.poll_range_end
    ? `${from(a.poll_range_start)} – ${a.poll_range_end ? fmtTime(a.poll_range_end) : '…'}`
    : el('span', { class: 'muted' }, 'set when a worker takes it');
  return el('tr', { 'data-attempt': a.id, 'data-status': a.status },
    el('td', { class: 'num' }, String(a.id)),
    el('td', {}, el('span', { class: `badge ${attemptBadge(a.status)}` }, words(a.status))),
    el('td', {}, a.from_beginning ? 'yes' : 'no'),
    el('td', { class: 'num' }, el('span', { class: 'figures' }, `${fmtInt(a.new_docs_indexed)} / ${fmtInt(a.total_docs_indexed)}`),
      el('span', { class: 'withheld muted' }, 'not shown')),
    el('td', { class: 'num' }, fmtInt(a.error_count)),
    el('td', { class: 'nowrap' }, a.time_started ? fmtTime(a.time_started) : el('span', { class: 'muted' }, 'not yet')),
    el('td', { class: 'nowrap' }, fmtTime(a.time_updated), isLive ? el('br') : null, isLive ? since(a.time_updated, 'last update ') : null),
    el('td', { class: 'small' }, pollWindow),
    el('td', { class: 'wrap' }, a.error_msg ? el('span', { class: 'error-text' }, a.error_msg) : null, trace));
}

/**
 * loadAttempts shows the current page of the pair's attempts. Rows that
 * did not change are kept, so that an open trace and the focus stay put.
 */
async function loadAttempts(id) {
  const page = state.attemptsPage;
  const { data } = await call('GET', `manage/admin/cc-pair/${encodeURIComponent(id)}/index-attempts?page_num=${page}&page_size=${attemptsPageSize}`);
  if (state.id !== id || state.attemptsPage !== page) return;
  const tbody = $('pair-attempts-rows');
  const total = data.total_items;
  const pages = Math.max(1, Math.ceil(total / attemptsPageSize));
  if (data.items.length === 0) {
    state.attemptRows = new Map();
    tbody.replaceChildren(emptyRow(9, total === 0
      ? 'No index attempts yet: the scheduler makes one when the pair is due, or when a run is asked for.'
      : 'No attempts on this page.'));
  } else {
    const rows = new Map();
    const want = data.items.map((a) => {
      const key = JSON.stringify(a);
      const had = state.attemptRows.get(a.id);
      if (had && had.key === key) {
        rows.set(a.id, had);
        return had.tr;
      }
      const tr = attemptRow(a);
      const wasOpen = had && had.tr.querySelector('details')?.open;
      if (wasOpen && tr.querySelector('details')) tr.querySelector('details').open = true;
      if (had && had.tr.isConnected) had.tr.replaceWith(tr);
      rows.set(a.id, { key, tr });
      return tr;
    });
    // Put the rows in order, moving none that is in place already (a moved
    // row would lose the focus).
    for (const tr of [...tbody.children]) if (!want.includes(tr)) tr.remove();
    want.forEach((tr, i) => {
      if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null);
    });
    state.attemptRows = rows;
  }
  const start = page * attemptsPageSize;
  $('pair-attempts-summary').textContent = total === 0 ? ''
    : `Attempts ${fmtInt(Math.min(start + 1, total))}–${fmtInt(start + data.items.length)} of ${fmtInt(total)}, newest first.`;
  $('pair-attempts-page').textContent = `Page ${fmtInt(page + 1)} of ${fmtInt(pages)}`;
  $('pair-attempts-newer').disabled = page === 0;
  $('pair-attempts-older').disabled = page >= pages - 1;
  // The live sentence: said again only when the newest attempt changes.
  if (page === 0) {
    const a = data.items[0];
    let text = '';
    let age = null;
    if (a && a.status === 'not_started') {
      text = `Attempt #${a.id} waits for a worker.`;
    } else if (a && a.status === 'in_progress') {
      const errors = a.error_count ? `${fmtInt(a.error_count)} errors` : '';
      text = state.whole ? `Attempt #${a.id} is running: ${fmtInt(a.total_docs_indexed)} documents so far${errors ? `, ${errors}` : ''}.`
        : `Attempt #${a.id} is running${errors ? `: ${errors}` : ''}.`;
      age = since(a.time_updated, 'Last update ');
    } else if (a) {
      text = `The latest attempt, #${a.id}, ended: ${words(a.status)}.` + (a.error_msg ? ` ${a.error_msg}` : '');
    }
    if (text !== state.liveText) {
      state.liveText = text;
      $('pair-live').textContent = text;
    }
    $('pair-live-age').replaceChildren(...(age ? [age] : []));
  }
}

/** errorRow draws one error of a document or an entity. */
function errorRow(e) {
  const link = safeLink(e.document_link);
  const doc = e.document_id === null && !link
    ? el('span', { class: 'muted' }, 'none')
    : link
      ? el('a', { href: link, target: '_blank', rel: 'noopener noreferrer' }, e.document_id ?? link)
      : e.document_id;
  let entity = e.entity_id ?? el('span', { class: 'muted' }, 'none');
  if (e.entity_id && (e.failed_time_range_start || e.failed_time_range_end)) {
    entity = el('span', {}, e.entity_id, el('br'), el('span', { class: 'muted small' },
      `missed ${fmtTime(e.failed_time_range_start) || '…'} – ${fmtTime(e.failed_time_range_end) || '…'}`));
  }
  return el('tr', {},
    el('td', { class: 'nowrap' }, fmtTime(e.time_created)),
    el('td', { class: 'num' }, `#${e.index_attempt_id}`),
    el('td', { class: 'wrap' }, doc),
    el('td', { class: 'wrap' }, entity),
    el('td', { class: 'wrap' }, e.failure_message),
    el('td', {}, e.is_resolved ? 'yes' : 'no'));
}

/** loadErrors shows the current page of the errors of the pair's attempts. */
async function loadErrors(id) {
  const page = state.errorsPage;
  const resolved = $('pair-errors-resolved').checked;
  const { data } = await call('GET', `manage/admin/cc-pair/${encodeURIComponent(id)}/errors?include_resolved=${resolved}` +
    `&page_num=${page}&page_size=${errorsPageSize}`);
  if (state.id !== id || state.errorsPage !== page || $('pair-errors-resolved').checked !== resolved) return;
  const total = data.total_items;
  const pages = Math.max(1, Math.ceil(total / errorsPageSize));
  const key = JSON.stringify(data);
  const tbody = $('pair-errors-rows');
  // Redrawn only when they changed: a focused link stays focused.
  if (tbody.dataset.key !== key) {
    tbody.dataset.key = key;
    tbody.replaceChildren(...(data.items.length ? data.items.map(errorRow)
      : [emptyRow(6, total === 0 ? (resolved ? 'No errors.' : 'No unresolved errors.') : 'No errors on this page.')]));
  }
  const start = page * errorsPageSize;
  $('pair-errors-summary').textContent = total === 0 ? ''
    : `Errors ${fmtInt(Math.min(start + 1, total))}–${fmtInt(start + data.items.length)} of ${fmtInt(total)}, newest first.`;
  $('pair-errors-page').textContent = `Page ${fmtInt(page + 1)} of ${fmtInt(pages)}`;
  $('pair-errors-newer').disabled = page === 0;
  $('pair-errors-older').disabled = page >= pages - 1;
}

/** pageTo shows another page of attempts or errors. */
async function pageTo(kind, page, pressed, other) {
  const id = state.id;
  if (kind === 'attempts') state.attemptsPage = page;
  else state.errorsPage = page;
  try {
    await (kind === 'attempts' ? loadAttempts(id) : loadErrors(id));
  } catch (e) {
    showError($('pair-error'), e);
  }
  keepFocus(pressed, other);
}

/**
 * runOnce asks for a run of the pair (Onyx's run-once with its credential),
 * from the beginning or not, and waits for the scheduler's attempt.
 */
async function runOnce(fromBeginning) {
  const p = state.pair;
  const button = fromBeginning ? $('pair-reindex') : $('pair-run');
  if (fromBeginning && !(await confirmAction(`Re-index "${p.name}" from the beginning? Its next attempt reads every document of the source again, ` +
    'which takes longer than a run from where the last one left off.', 'Re-index from the beginning'))) return;
  const box = $('pair-error');
  clearError(box);
  $('pair-indexing-done').textContent = '';
  await busy(button, async () => {
    try {
      const { data } = await call('POST', 'manage/admin/connector/run-once', {
        body: { connector_id: p.connector.id, credential_ids: [p.credential.id], from_beginning: fromBeginning },
      });
      const marked = typeof data?.data === 'number' ? data.data : 1;
      if (marked === 0) {
        said($('pair-indexing-done'), 'Nothing asked for: an attempt of this pair waits or runs already.');
        return;
      }
      state.asked = { at: Date.now(), attempts: p.number_of_index_attempts ?? 0 };
      said($('pair-indexing-done'), fromBeginning
        ? 'Asked for a run from the beginning: the scheduler makes the attempt shortly.'
        : 'Asked for a run: the scheduler makes the attempt shortly.');
      state.attemptsPage = 0;
      await refresh(state.id);
    } catch (e) {
      writeError(box, e);
    }
  });
}

const reload = () => open(state.id).then(() => $('pair-rename').focus());

/**
 * toggle pauses or resumes the pair. Cancel is a pause, from its own
 * button: Quarry cancels the attempt of a paused pair.
 */
async function toggle(ev) {
  const p = state.pair;
  const cancel = ev && ev.currentTarget === $('pair-cancel');
  const next = cancel || p.status !== 'PAUSED' ? 'PAUSED' : 'ACTIVE';
  const box = $('pair-error');
  clearError(box);
  await busy(cancel ? $('pair-cancel') : $('pair-toggle'), async () => {
    try {
      await call('PUT', `manage/admin/cc-pair/${p.id}/status`, { body: { status: next }, etag: state.etag });
      await open(state.id);
      said($('pair-saved'), cancel ? 'Paused: its attempt is canceled. Resume the pair to index it again.'
        : next === 'PAUSED' ? 'Paused.' : 'Resumed.');
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
  pairdocs.wire(() => refresh(state.id));
  pairsync.wire(() => refresh(state.id));
  $('pair-new-form').addEventListener('submit', create);
  $('pair-connector').addEventListener('change', () => fillCredentials(null));
  $('pair-name').addEventListener('input', () => { $('pair-name').dataset.touched = '1'; });
  $('pair-rename-form').addEventListener('submit', rename);
  $('pair-toggle').addEventListener('click', toggle);
  $('pair-cancel').addEventListener('click', toggle);
  $('pair-delete').addEventListener('click', remove);
  $('pair-run').addEventListener('click', () => runOnce(false));
  $('pair-reindex').addEventListener('click', () => runOnce(true));
  $('pair-attempts-newer').addEventListener('click', () =>
    pageTo('attempts', state.attemptsPage - 1, $('pair-attempts-newer'), $('pair-attempts-older')));
  $('pair-attempts-older').addEventListener('click', () =>
    pageTo('attempts', state.attemptsPage + 1, $('pair-attempts-older'), $('pair-attempts-newer')));
  $('pair-errors-newer').addEventListener('click', () =>
    pageTo('errors', state.errorsPage - 1, $('pair-errors-newer'), $('pair-errors-older')));
  $('pair-errors-older').addEventListener('click', () =>
    pageTo('errors', state.errorsPage + 1, $('pair-errors-older'), $('pair-errors-newer')));
  $('pair-errors-resolved').addEventListener('change', () => pageTo('errors', 0, $('pair-errors-resolved'), $('pair-errors-resolved')));
  // Leaving the view stops its clock at once (it would stop at its next tick).
  window.addEventListener('hashchange', () => {
    if (current().view !== 'pair') stopClock();
  });
}

export function reset() {
  stopClock();
  pairdocs.reset();
  pairsync.reset();
  Object.assign(state, { connectors: [], credentials: [], id: null, pair: null, etag: null, asked: null, attemptsPage: 0, errorsPage: 0,
    liveText: '', inflight: false, whole: true });
  state.attemptRows = new Map();
  $('view-pair').classList.remove('figures-withheld');
  $('pair-body').hidden = true;
  $('pair-attempts-rows').replaceChildren();
  $('pair-errors-rows').replaceChildren();
  delete $('pair-errors-rows').dataset.key;
}

// checkpointFact shows how old the latest attempt's checkpoint is, from the
// pair's latest_checkpoint_description ("Attempt N saved its checkpoint at
// <time>"); nothing when it has none.
function checkpointFact(description) {
  const at = /at (\S+)$/.exec(description ?? '')?.[1];
  if (!at) return [];
  return fact('Checkpoint', `saved ${ago(at)} (${fmtTime(at)})`);
}
