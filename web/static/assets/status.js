// The connector status table: every cc-pair the key can see, loaded once,
// indexed, then searched, filtered and paged in memory, so that 10,000
// pairs stay responsive: only one page of rows is ever in the DOM.

import { call } from './api.js';
import { $, el, fmtInt, showError, clearError } from './ui.js';

export const pageSize = 100;

const state = {
  rows: null,     // indexed cc-pairs, ascending id
  loading: null,  // the promise of the load in flight
  groupNames: new Map(),
  matches: [],    // the rows that pass the filters
  page: 0,
  stale: false,   // a credential changed since the load
};

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
  state.rows = null;
  state.loading = null;
  state.groupNames = new Map();
  state.matches = [];
  state.page = 0;
  $('status-rows').replaceChildren();
  $('status-summary').textContent = '';
  $('status-timing').textContent = '';
  $('status-search').value = '';
  $('status-source').value = '';
  $('status-access').value = '';
}

/** show displays the view, loading the listing the first time. */
export async function show(me) {
  if (state.rows && !state.stale) {
    render();
    return;
  }
  await load(me);
}

async function load(me) {
  if (state.loading) return state.loading;
  const errBox = $('status-error');
  clearError(errBox);
  $('status-summary').textContent = 'Loading cc-pairs…';
  const view = $('view-status');
  view.setAttribute('aria-busy', 'true');
  const run = async () => {
    const t0 = performance.now();
    try {
      // Group names are for admins only; others see group ids.
      const groups = me && me.role === 'admin'
        ? call('GET', 'manage/admin/user-group').catch(() => null)
        : Promise.resolve(null);
      const { data } = await call('GET', 'manage/admin/connector/status');
      const t1 = performance.now();
      const rows = data.map(index);
      rows.sort((a, b) => a.id - b.id);
      const g = await groups;
      state.groupNames = new Map((g && Array.isArray(g.data) ? g.data : []).map((x) => [x.id, x.name]));
      state.rows = rows;
      state.stale = false;
      fillSources(rows);
      const t2 = performance.now();
      const timing = $('status-timing');
      timing.dataset.rows = String(rows.length);
      timing.dataset.fetchMs = (t1 - t0).toFixed(1);
      timing.dataset.indexMs = (t2 - t1).toFixed(1);
      applyFilters();
    } catch (e) {
      $('status-summary').textContent = '';
      showError(errBox, e);
    } finally {
      state.loading = null;
      view.setAttribute('aria-busy', 'false');
    }
  };
  state.loading = run();
  return state.loading;
}

/** fillSources offers the sources present in the listing. */
function fillSources(rows) {
  const select = $('status-source');
  const keep = select.value;
  const sources = [...new Set(rows.map((r) => r.source))].sort();
  select.replaceChildren(el('option', { value: '' }, 'All sources'),
    ...sources.map((s) => el('option', { value: s }, s)));
  select.value = sources.includes(keep) ? keep : '';
}

/** applyFilters recomputes the matching rows and shows their first page. */
function applyFilters() {
  if (!state.rows) return;
  const t0 = performance.now();
  const q = $('status-search').value.trim().toLowerCase();
  const source = $('status-source').value;
  const access = $('status-access').value;
  state.matches = state.rows.filter((r) =>
    (!q || r.search.includes(q)) && (!source || r.source === source) && (!access || r.access === access));
  state.page = 0;
  const t1 = performance.now();
  render();
  const t2 = performance.now();
  const timing = $('status-timing');
  timing.dataset.filterMs = (t1 - t0).toFixed(1);
  timing.dataset.renderMs = (t2 - t1).toFixed(1);
  timing.textContent = `${fmtInt(state.rows.length)} cc-pairs loaded in ${timing.dataset.fetchMs} ms ` +
    `(indexed in ${timing.dataset.indexMs} ms); last filter ${timing.dataset.filterMs} ms, page drawn in ${timing.dataset.renderMs} ms.`;
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
  state.page = Math.min(state.page, pages - 1);
  const start = state.page * pageSize;
  const slice = state.matches.slice(start, start + pageSize);
  const frag = document.createDocumentFragment();
  for (const r of slice) {
    const credLabel = r.credName ? `${r.credName} (#${r.credID})` : `Credential #${r.credID}`;
    frag.append(el('tr', {},
      el('td', { class: 'num' }, String(r.id)),
      el('td', {}, r.name || '—'),
      el('td', {}, r.connName),
      el('td', {}, el('span', { class: 'badge' }, r.source)),
      el('td', {}, el('a', { href: `#credential/${r.credID}`, 'aria-label': `Edit credential ${credLabel}` }, credLabel)),
      el('td', {}, el('span', { class: `badge ${r.access}` }, r.access)),
      el('td', {}, groupText(r.groups) || el('span', { class: 'muted' }, 'none')),
    ));
  }
  if (slice.length === 0) {
    frag.append(el('tr', {}, el('td', { colSpan: 7, class: 'muted' },
      state.rows && state.rows.length ? 'No cc-pair matches these filters.' : 'No cc-pairs yet.')));
  }
  $('status-rows').replaceChildren(frag);
  const of = state.rows ? state.rows.length : 0;
  $('status-summary').textContent = total === 0
    ? `No matching cc-pairs (of ${fmtInt(of)}).`
    : `Showing ${fmtInt(start + 1)}–${fmtInt(start + slice.length)} of ${fmtInt(total)} matching cc-pairs` +
      (total === of ? '.' : ` (${fmtInt(of)} in all).`);
  $('status-page').textContent = `Page ${fmtInt(state.page + 1)} of ${fmtInt(pages)}`;
  $('status-first').disabled = $('status-prev').disabled = state.page === 0;
  $('status-next').disabled = $('status-last').disabled = state.page >= pages - 1;
}

function goTo(page) {
  state.page = page;
  render();
}

/** wire connects the controls, once. */
export function wire(getMe) {
  let timer = 0;
  $('status-search').addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(applyFilters, 120);
  });
  $('status-filters').addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(timer);
    applyFilters();
  });
  $('status-source').addEventListener('change', applyFilters);
  $('status-access').addEventListener('change', applyFilters);
  $('status-refresh').addEventListener('click', () => {
    state.stale = true;
    load(getMe());
  });
  $('status-first').addEventListener('click', () => goTo(0));
  $('status-prev').addEventListener('click', () => goTo(state.page - 1));
  $('status-next').addEventListener('click', () => goTo(state.page + 1));
  $('status-last').addEventListener('click', () => goTo(Math.ceil(state.matches.length / pageSize) - 1));
}
