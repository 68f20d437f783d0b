// The connector status table: every cc-pair the person can see, loaded
// once, indexed, then searched, filtered, sorted and paged in memory, so
// that 10,000 pairs stay responsive: only one page of rows is ever in the
// DOM. Search, filters, sort and page live in the location
// (#status?q=…&source=…&access=…&sort=…&dir=…&page=…). Each pair's
// indexing (its latest attempt's status and its documents) comes from one
// more request, POST /manage/admin/connector/indexing-status, made after
// the listing (so that it does not slow it) and when the view is shown
// again; the table does not wait for it.

import { call } from './api.js';
import { $, el, fmtInt, plural, showError, clearError, keepFocus, attemptBadge, words } from './ui.js';
import { setParams, href } from './route.js';
import { sourceName } from './sources.js';
import { isAdmin, curatesOrAdmin } from './session.js';

export const pageSize = 100;

const columns = ['id', 'name', 'connector', 'source', 'credential', 'access', 'groups'];
const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

const state = {
  rows: null,     // indexed cc-pairs, ascending id
  loading: null,  // the promise of the load in flight
  groupNames: new Map(),
  sorted: null,   // rows in the current sort order
  sortedBy: '',   // "column dir" of sorted
  matches: [],    // the sorted rows that pass the filters
  view: { q: '', source: '', access: '', sort: 'id', dir: 'asc', page: 0 },
  stale: false,   // something changed since the load
  indexing: null, // cc-pair id → its indexing status (Onyx's ConnectorIndexingStatusLite)
  indexingAt: 0,  // when it was asked for
  indexingSeq: 0, // the latest request's number: only its answer is shown
};

/** How old the pairs' indexing may be when the view is shown again, in ms. */
const indexingMaxAge = 10_000;

/** index keeps what the table shows of one ConnectorStatus. */
function index(s) {
  const conn = s.connector || {};
  const cred = s.credential || {};
  const name = s.name ?? '';
  const connName = conn.name ?? '';
  const credName = cred.name ?? '';
  return {
    id: s.cc_pair_id,
    name,
    connID: conn.id,
    connName,
    source: conn.source ?? '',
    credID: cred.id,
    credName,
    access: s.access_type,
    groups: s.groups || [],
    search: `${name}\n${connName}\n${credName}`.toLowerCase(),
  };
}

/** markStale makes the next visit reload the listing. */
export function markStale() {
  state.stale = true;
}

/** reset forgets everything (sign-out). */
export function reset() {
  Object.assign(state, { rows: null, loading: null, groupNames: new Map(), sorted: null, sortedBy: '', matches: [], stale: false,
    indexing: null, indexingAt: 0, indexingSeq: state.indexingSeq + 1 });
  state.view = { q: '', source: '', access: '', sort: 'id', dir: 'asc', page: 0 };
  $('status-rows').replaceChildren();
  $('status-summary').textContent = '';
  $('status-timing').textContent = '';
  $('status-search').value = '';
  $('status-source').value = '';
  $('status-access').value = '';
}

/**
 * pairs returns the indexed pairs, loading them if needed (for the views
 * that list the pairs of a connector or a credential).
 */
export async function pairs() {
  if (!state.rows || state.stale) await load();
  return state.rows || [];
}

/** readParams takes the view's state from the location's params. */
function readParams(params) {
  const sort = params.get('sort');
  const page = Number.parseInt(params.get('page') || '1', 10);
  state.view = {
    q: params.get('q') || '',
    source: params.get('source') || '',
    access: params.get('access') || '',
    sort: columns.includes(sort) ? sort : 'id',
    dir: params.get('dir') === 'desc' ? 'desc' : 'asc',
    page: Number.isFinite(page) && page > 0 ? page - 1 : 0,
  };
  $('status-search').value = state.view.q;
  $('status-access').value = state.view.access;
}

/** writeParams records the view's state in the location. */
function writeParams(push) {
  const v = state.view;
  setParams('status', {
    q: v.q, source: v.source, access: v.access,
    sort: v.sort === 'id' ? '' : v.sort, dir: v.dir === 'asc' ? '' : v.dir,
    page: v.page > 0 ? v.page + 1 : '',
  }, { push });
}

/** show displays the view in the state params say, loading the listing the first time. */
export async function show(params) {
  readParams(params);
  $('status-refresh').hidden = false;
  for (const a of document.querySelectorAll('#view-status [data-needs="pair"]')) a.hidden = !curatesOrAdmin();
  if (state.rows && !state.stale) {
    fillSources();
    applyFilters({ keepPage: true });
    if (Date.now() - state.indexingAt > indexingMaxAge) loadIndexing();
    return;
  }
  await load();
  applyFilters({ keepPage: true });
}

/**
 * loadIndexing asks for every pair's indexing status, in one request, and
 * redraws the page when it comes. A refusal or a failure leaves the
 * columns empty: the listing is what the view is for.
 */
function loadIndexing() {
  state.indexingAt = Date.now();
  const seq = ++state.indexingSeq;
  return call('POST', 'manage/admin/connector/indexing-status', { body: { get_all_connectors: true } })
    .then(({ data }) => {
      if (seq !== state.indexingSeq || !state.rows || !Array.isArray(data)) return;
      const m = new Map();
      for (const page of data) for (const s of page.indexing_statuses || []) m.set(s.cc_pair_id, s);
      state.indexing = m;
      if (!$('view-status').hidden) render();
    })
    .catch(() => {});
}

/** indexingCells are a row's indexing columns. */
function indexingCells(r) {
  if (!state.indexing) return [el('td', { class: 'muted' }, '…'), el('td', { class: 'num' }, '')];
  const s = state.indexing.get(r.id);
  if (!s) return [el('td', { class: 'muted' }, '—'), el('td', { class: 'num' }, '')];
  const parts = [];
  if (s.cc_pair_status === 'PAUSED') parts.push(el('span', { class: 'badge paused' }, 'paused'), ' ');
  parts.push(s.last_status
    ? el('span', { class: `badge ${attemptBadge(s.last_status)}` }, words(s.last_status))
    : el('span', { class: 'muted' }, 'not indexed yet'));
  if (s.in_repeated_error_state) parts.push(' ', el('span', { class: 'badge failed' }, 'repeated errors'));
  return [el('td', {}, ...parts), el('td', { class: 'num' }, fmtInt(s.docs_indexed ?? 0))];
}

async function load() {
  if (state.loading) return state.loading;
  const errBox = $('status-error');
  clearError(errBox);
  $('status-summary').textContent = 'Loading cc-pairs…';
  const view = $('view-status');
  view.setAttribute('aria-busy', 'true');
  const run = async () => {
    const t0 = performance.now();
    try {
      // Group names are for admins only; others see group ids. The group
      // listing holds every pair of every group, so it can be slower than
      // the status listing: the table does not wait for it, and shows the
      // names when they come.
      const groups = isAdmin() ? call('GET', 'manage/admin/user-group').catch(() => null) : Promise.resolve(null);
      const { data } = await call('GET', 'manage/admin/connector/status');
      const t1 = performance.now();
      const rows = data.map(index);
      rows.sort((a, b) => a.id - b.id);
      for (const r of rows) r.groupText = groupText(r.groups);
      state.rows = rows;
      groups.then((g) => {
        if (state.rows !== rows || !g || !Array.isArray(g.data)) return;
        state.groupNames = new Map(g.data.map((x) => [x.id, x.name]));
        for (const r of rows) r.groupText = groupText(r.groups);
        if (state.view.sort === 'groups') state.sorted = null;
        if (!$('view-status').hidden) applyFilters({ keepPage: true });
      });
      state.sorted = null;
      state.stale = false;
      state.indexing = null;
      fillSources();
      const t2 = performance.now();
      const timing = $('status-timing');
      timing.dataset.rows = String(rows.length);
      timing.dataset.fetchMs = (t1 - t0).toFixed(1);
      timing.dataset.indexMs = (t2 - t1).toFixed(1);
    } catch (e) {
      $('status-summary').textContent = '';
      showError(errBox, e);
    } finally {
      state.loading = null;
      view.setAttribute('aria-busy', 'false');
    }
    if (state.rows) loadIndexing();
  };
  state.loading = run();
  return state.loading;
}

/** fillSources offers the sources present in the listing. */
function fillSources() {
  const select = $('status-source');
  const sources = [...new Set((state.rows || []).map((r) => r.source))].sort();
  if (state.view.source && !sources.includes(state.view.source)) sources.push(state.view.source);
  select.replaceChildren(el('option', { value: '' }, 'All sources'),
    ...sources.map((s) => el('option', { value: s }, sourceName(s))));
  select.value = state.view.source;
}

/** sortKey is what a column sorts by. */
function sortKey(r, col) {
  switch (col) {
    case 'name': return r.name;
    case 'connector': return r.connName;
    case 'source': return sourceName(r.source);
    case 'credential': return r.credName || `#${r.credID}`;
    case 'access': return r.access;
    case 'groups': return r.groupText;
    default: return '';
  }
}

/** sortedRows returns the rows in the view's order, sorting once per order. */
function sortedRows() {
  const { sort, dir } = state.view;
  const by = `${sort} ${dir}`;
  if (state.sorted && state.sortedBy === by) return state.sorted;
  let out;
  if (sort === 'id') {
    out = dir === 'asc' ? state.rows : [...state.rows].reverse();
  } else {
    const keys = new Map(state.rows.map((r) => [r, sortKey(r, sort)]));
    const sign = dir === 'asc' ? 1 : -1;
    // Ties keep the id order either way.
    out = [...state.rows].sort((a, b) => sign * collator.compare(keys.get(a), keys.get(b)) || a.id - b.id);
  }
  state.sorted = out;
  state.sortedBy = by;
  return out;
}

/** applyFilters recomputes the matching rows, their counts, and draws a page. */
function applyFilters({ keepPage = false } = {}) {
  if (!state.rows) return;
  const t0 = performance.now();
  const { q: query, source, access } = state.view;
  const q = query.trim().toLowerCase();
  const bySource = new Map();
  const byAccess = new Map();
  const matches = [];
  for (const r of sortedRows()) {
    if (q && !r.search.includes(q)) continue;
    const okSource = !source || r.source === source;
    const okAccess = !access || r.access === access;
    // Each count follows the other filter, as a facet does.
    if (okAccess) bySource.set(r.source, (bySource.get(r.source) || 0) + 1);
    if (okSource) byAccess.set(r.access, (byAccess.get(r.access) || 0) + 1);
    if (okSource && okAccess) matches.push(r);
  }
  state.matches = matches;
  if (!keepPage) state.view.page = 0;
  const t1 = performance.now();
  render();
  renderCounts(bySource, byAccess);
  const t2 = performance.now();
  const timing = $('status-timing');
  timing.dataset.filterMs = (t1 - t0).toFixed(1);
  timing.dataset.renderMs = (t2 - t1).toFixed(1);
  timing.textContent = `${fmtInt(state.rows.length)} cc-pairs loaded in ${timing.dataset.fetchMs} ms ` +
    `(indexed in ${timing.dataset.indexMs} ms); last filter ${timing.dataset.filterMs} ms, page drawn in ${timing.dataset.renderMs} ms.`;
}

/** renderCounts shows the counts per source and access type, in the selects and the tables. */
function renderCounts(bySource, byAccess) {
  for (const o of $('status-source').options) {
    if (o.value) o.textContent = `${sourceName(o.value)} (${fmtInt(bySource.get(o.value) || 0)})`;
  }
  for (const o of $('status-access').options) {
    if (o.value) o.textContent = `${o.value} (${fmtInt(byAccess.get(o.value) || 0)})`;
  }
  const rows = (m, name) => [...m.entries()].sort((a, b) => b[1] - a[1] || collator.compare(name(a[0]), name(b[0])))
    .map(([k, n]) => el('tr', {}, el('td', {}, name(k)), el('td', { class: 'num' }, fmtInt(n))));
  $('status-count-access').tBodies[0].replaceChildren(...rows(byAccess, (k) => k));
  $('status-count-source').tBodies[0].replaceChildren(...rows(bySource, sourceName));
}

function groupText(ids) {
  return ids.map((id) => {
    const n = state.groupNames.get(id);
    return n ? `${n} (#${id})` : `#${id}`;
  }).join(', ');
}

/** render draws the current page of matches. */
function render() {
  const total = state.matches.length;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  state.view.page = Math.min(state.view.page, pages - 1);
  const start = state.view.page * pageSize;
  const slice = state.matches.slice(start, start + pageSize);
  const frag = document.createDocumentFragment();
  for (const r of slice) {
    const credLabel = r.credName ? `${r.credName} (#${r.credID})` : `Credential #${r.credID}`;
    frag.append(el('tr', {},
      el('td', { class: 'num' }, String(r.id)),
      el('td', {}, el('a', { href: `#pair/${r.id}`, 'aria-label': `cc-pair ${r.name || `#${r.id}`}` }, r.name || `#${r.id}`)),
      el('td', {}, el('a', { href: `#connector/${r.connID}` }, r.connName)),
      el('td', {}, el('span', { class: 'badge' }, sourceName(r.source))),
      el('td', {}, el('a', { href: `#credential/${r.credID}`, 'aria-label': `Edit credential ${credLabel}` }, credLabel)),
      el('td', {}, el('span', { class: `badge ${r.access}` }, r.access)),
      el('td', {}, r.groupText || el('span', { class: 'muted' }, 'none')),
      ...indexingCells(r),
    ));
  }
  $('status-rows').replaceChildren(frag);
  const empty = $('status-empty');
  const of = state.rows ? state.rows.length : 0;
  empty.hidden = slice.length > 0;
  // With no pair at all, the empty table, its pager and counts say nothing.
  for (const sel of ['#view-status .table-wrap', '#view-status .pager', '#status-counts']) document.querySelector(sel).hidden = of === 0;
  if (slice.length === 0 && of === 0) {
    empty.replaceChildren(el('p', {}, curatesOrAdmin() && isAdmin()
      ? 'No cc-pairs yet. A cc-pair shares a connector, with a credential, with people.'
      : 'No cc-pairs you can see yet: they appear here when one is public, or shared with a group of yours.'),
    curatesOrAdmin() ? el('p', {}, el('a', { href: '#connector/new' }, 'Create a connector'), ', ',
      el('a', { href: '#credential/new' }, 'a credential'), ', then ', el('a', { href: '#pair/new' }, 'pair them'), '.') : null);
  } else if (slice.length === 0) {
    const clear = el('button', { type: 'button', class: 'secondary' }, 'Clear the filters');
    clear.addEventListener('click', clearFilters);
    empty.replaceChildren(el('p', {}, 'No cc-pair matches these filters.'), clear);
  }
  $('status-summary').textContent = total === 0
    ? `No matching cc-pairs (of ${fmtInt(of)}).`
    : `Showing ${fmtInt(start + 1)}–${fmtInt(start + slice.length)} of ${fmtInt(total)} matching cc-pairs` +
      (total === of ? '.' : ` (${fmtInt(of)} in all).`);
  $('status-page').textContent = `Page ${fmtInt(state.view.page + 1)} of ${fmtInt(pages)}`;
  $('status-first').disabled = $('status-prev').disabled = state.view.page === 0;
  $('status-next').disabled = $('status-last').disabled = state.view.page >= pages - 1;
  renderSort();
}

/** renderSort marks the sorted column and makes every header a sort button. */
function renderSort() {
  for (const th of document.querySelectorAll('#status-table th[data-sort]')) {
    const col = th.dataset.sort;
    let button = th.querySelector('button');
    if (!button) {
      button = el('button', { type: 'button', class: 'sort' }, th.textContent, el('span', { class: 'arrow', 'aria-hidden': 'true' }));
      button.addEventListener('click', () => sortBy(col));
      th.replaceChildren(button);
    }
    const on = state.view.sort === col;
    if (on) th.setAttribute('aria-sort', state.view.dir === 'asc' ? 'ascending' : 'descending');
    else th.removeAttribute('aria-sort');
    button.querySelector('.arrow').textContent = on ? (state.view.dir === 'asc' ? ' ▲' : ' ▼') : '';
  }
}

function sortBy(col) {
  const v = state.view;
  v.dir = v.sort === col && v.dir === 'asc' ? 'desc' : 'asc';
  v.sort = col;
  v.page = 0;
  writeParams(true);
  applyFilters({ keepPage: true });
}

function goTo(page) {
  state.view.page = page;
  writeParams(true);
  render();
}

function clearFilters() {
  Object.assign(state.view, { q: '', source: '', access: '', page: 0 });
  $('status-search').value = '';
  $('status-source').value = '';
  $('status-access').value = '';
  writeParams(true);
  applyFilters();
  $('status-search').focus();
}

/** filterChanged applies a control's change; a keystroke replaces the location entry, a choice adds one. */
function filterChanged(push) {
  state.view.q = $('status-search').value;
  state.view.source = $('status-source').value;
  state.view.access = $('status-access').value;
  state.view.page = 0;
  writeParams(push);
  applyFilters();
}

/** wire connects the controls, once. */
export function wire() {
  let timer = 0;
  $('status-search').addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => filterChanged(false), 120);
  });
  $('status-filters').addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(timer);
    filterChanged(true);
  });
  $('status-source').addEventListener('change', () => filterChanged(true));
  $('status-access').addEventListener('change', () => filterChanged(true));
  $('status-clear').addEventListener('click', clearFilters);
  $('status-refresh').addEventListener('click', async () => {
    state.stale = true;
    await load();
    fillSources();
    applyFilters({ keepPage: true });
  });
  // On the first or last page, the focus goes from the buttons that are
  // then disabled to those that are not.
  $('status-first').addEventListener('click', () => { goTo(0); keepFocus($('status-first'), $('status-next')); });
  $('status-prev').addEventListener('click', () => { goTo(state.view.page - 1); keepFocus($('status-prev'), $('status-next')); });
  $('status-next').addEventListener('click', () => { goTo(state.view.page + 1); keepFocus($('status-next'), $('status-prev')); });
  $('status-last').addEventListener('click', () => {
    goTo(Math.ceil(state.matches.length / pageSize) - 1);
    keepFocus($('status-last'), $('status-prev'));
  });
}

/** pairLinks renders pairs as a list of links to their views. */
export function pairLinks(list, rows, empty) {
  list.replaceChildren(...(rows.length ? rows.map((r) => el('li', {},
    el('a', { href: href('pair', r.id) }, r.name || `cc-pair #${r.id}`),
    ` (#${r.id}) · ${r.connName} with ${r.credName || `credential #${r.credID}`} · `,
    el('span', { class: `badge ${r.access}` }, r.access))) : [el('li', { class: 'muted' }, empty)]));
}

/**
 * pairsUsing says which cc-pairs, of those the person can see, use an
 * object that a 409 refused to delete (the rows for which uses is true):
 * a sentence and a list of links, for confirmDelete's conflict.
 */
export async function pairsUsing(uses) {
  const rows = (await pairs().catch(() => [])).filter(uses);
  const list = el('ul', { class: 'links' });
  pairLinks(list, rows, 'None that you can see.');
  return [el('p', {}, `These cc-pairs use it (${plural(rows.length, 'pair')}); delete them first:`), list];
}
