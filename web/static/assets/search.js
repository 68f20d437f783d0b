// The search page, the start page of everyone signed in: the company's
// documents, found with the person's own rights by Onyx's
// POST /search/send-search-message. The query and the filters live in the
// location (#search?q=…&set=…&source=…&time=…), so that links, reloads
// and the back button bring the same results. A document set (one of
// those the person sees, GET /manage/document-set) narrows the search
// itself (filters.document_set): the source and time filters, and their
// counts, are within it. The counts beside the filters are
// of the search's results without them (up to facetHits of them): Onyx's
// search answers results, not counts. The page lists those same results
// (a filter picks among them when they are every match), so that its
// count and the filters' say the same thing. Each result is one pair's
// copy of a document, and says which pair it is from: a document that
// several pairs hold is a result for each copy, and the copy opens as its
// own in the page (#document/<id>?pair=<cc_pair_id>, GET
// /search/document/{document_id}?cc_pair_id=…) and at its source.
//
// Keyboard: "/" (outside a field) comes back to the query box; ↓ from it
// goes to the first result, ↑ and ↓ move through the results, Enter opens
// one, Escape goes back to the query box. Document text is only ever set
// as text: the server's <hi>…</hi> highlights become <mark> elements.

import { call } from './api.js';
import { $, el, showError, clearError, fmtInt, plural, safeLink, fmtTime, ago } from './ui.js';
import { setParams, href, go } from './route.js';
import { sourceName } from './sources.js';

/** How many results a search asks for: the page lists them, and counts them beside the filters. */
export const facetHits = 100;

/** The time windows of the "Updated" filter, in ms. */
const windows = [
  ['', 'Any time', 0],
  ['day', 'Past day', 86_400_000],
  ['week', 'Past week', 7 * 86_400_000],
  ['month', 'Past month', 31 * 86_400_000],
  ['year', 'Past year', 366 * 86_400_000],
];

const state = {
  seq: 0,         // the latest search's number: only its answer is shown
  view: { q: '', set: '', source: '', time: '' },
  all: null,      // the results of view.q in view.set, without the other filters
  allFor: null,   // the query and set all is of
  sets: null,     // the names of the document sets the person sees, once read
  setsSeq: 0,     // the latest reading's number: only its answer is kept
  focusQuery: false,
};

/**
 * marked returns the nodes of a highlighted text: the parts between
 * <hi> and </hi> in <mark>, the rest as text (any other markup stays
 * text, never HTML).
 */
export function marked(s) {
  const out = [];
  const re = /<hi>([\s\S]*?)<\/hi>/g;
  let last = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    if (m.index > last) out.push(document.createTextNode(s.slice(last, m.index)));
    out.push(el('mark', {}, m[1]));
    last = re.lastIndex;
  }
  if (last < s.length) out.push(document.createTextNode(s.slice(last)));
  return out;
}

/** snippet returns the text a result shows: its first highlight, else its blurb. */
function snippet(d) {
  const h = (d.match_highlights || []).find((x) => x && x.trim());
  return h ?? d.blurb ?? '';
}

/** inWindow reports whether d was updated within the time window ms (0: any time) before now. */
const inWindow = (d, ms, now) => !ms || Boolean(d.updated_at && now - Date.parse(d.updated_at) <= ms);

/**
 * request builds the body of send-search-message for view v: narrowed to
 * its document set, and when filtered to its source and time window.
 */
function request(v, filtered) {
  const body = { search_query: v.q, num_hits: facetHits, include_content: false };
  const filters = {};
  if (v.set) filters.document_set = [v.set];
  if (filtered) {
    if (v.source) filters.source_type = [v.source];
    const w = windows.find(([k]) => k === v.time);
    if (w && w[2]) filters.time_cutoff = new Date(Date.now() - w[2]).toISOString();
  }
  if (Object.keys(filters).length) body.filters = filters;
  return body;
}

/** search posts one search and returns its documents. */
async function search(body) {
  const { data } = await call('POST', 'search/send-search-message', { body });
  if (data && data.error) throw new Error(data.error);
  return (data && data.search_docs) || [];
}

/** readView reads the view's state from the location's params. */
function readView(params) {
  const time = params.get('time') ?? '';
  return { q: params.get('q') ?? '', set: params.get('set') ?? '', source: params.get('source') ?? '',
    time: windows.some(([k]) => k === time) ? time : '' };
}

/**
 * fillSets offers the document sets the person sees (and the view's set,
 * if it is not one of them: the server says why), hidden when there are
 * none.
 */
function fillSets() {
  const names = [...(state.sets || [])];
  const set = state.view.set;
  if (set && !names.includes(set)) names.push(set);
  $('search-set').replaceChildren(el('option', { value: '' }, 'All documents'), ...names.map((n) => el('option', { value: n }, n)));
  $('search-set').value = set;
  $('search-set-field').hidden = names.length === 0;
}

/** loadSets reads the names of the document sets the person sees, and offers them. */
async function loadSets() {
  const seq = ++state.setsSeq;
  let sets = null; // The search works without them.
  try {
    const { data } = await call('GET', 'manage/document-set');
    sets = data.map((s) => s.name).sort((a, b) => a.localeCompare(b));
  } catch {
    // Offered none.
  }
  if (seq !== state.setsSeq) return;
  state.sets = sets;
  fillSets();
}

/** show opens the page for the location's params. */
export async function show(params) {
  state.view = readView(params);
  $('search-q').value = state.view.q;
  fillSets();
  loadSets();
  if (state.focusQuery) {
    state.focusQuery = false;
    $('search-q').focus();
  }
  await run();
}

/** run searches for state.view and shows the answer. */
async function run() {
  const v = state.view;
  const seq = ++state.seq;
  clearError($('search-error'));
  if (!v.q.trim()) {
    $('search-results').replaceChildren();
    $('search-facets').hidden = true;
    $('search-summary').textContent = 'Type what you are looking for: words, or "a phrase" in quotes.';
    return;
  }
  $('search-summary').textContent = 'Searching…';
  $('search-results').setAttribute('aria-busy', 'true');
  try {
    const scope = `${v.set}\n${v.q}`;
    if (state.allFor !== scope || !state.all) {
      state.all = null;
      state.all = await search(request(v, false));
      state.allFor = scope;
    }
    const all = state.all;
    const now = Date.now();
    const ms = (windows.find(([k]) => k === v.time) || windows[0])[2];
    // Every match found: a filter picks among them, as the counts do.
    // Otherwise the server searches with the filter, for the best matches
    // beyond those counted.
    let docs = all;
    if (v.source || v.time) {
      docs = all.length < facetHits
        ? all.filter((d) => (!v.source || d.source_type === v.source) && inWindow(d, ms, now))
        : await search(request(v, true));
    }
    if (seq !== state.seq) return;
    facets(all, now);
    results(docs);
  } catch (e) {
    if (seq !== state.seq) return;
    $('search-summary').textContent = '';
    $('search-results').replaceChildren();
    showError($('search-error'), e);
  } finally {
    if (seq === state.seq) $('search-results').removeAttribute('aria-busy');
  }
}

/** choice makes one radio button of a filter, with its count. */
function choice(name, value, label, count, checked) {
  const id = `search-${name}-${value || 'all'}`;
  const input = el('input', { type: 'radio', name: `search-${name}`, id, value, checked });
  input.addEventListener('change', () => {
    if (!input.checked) return;
    state.view = { ...state.view, [name]: value };
    setParams('search', state.view);
    run();
  });
  return el('div', { class: 'checks' }, input, el('label', { for: id }, `${label} `, el('span', { class: 'count' }, `(${fmtInt(count)})`)));
}

/** facets shows the source and time filters, with counts of all at now. */
function facets(all, now) {
  const v = state.view;
  const bySource = new Map();
  for (const d of all) bySource.set(d.source_type, (bySource.get(d.source_type) || 0) + 1);
  const sources = [...bySource.keys()].sort((a, b) => sourceName(a).localeCompare(sourceName(b)));
  if (v.source && !bySource.has(v.source)) sources.push(v.source);
  $('search-sources').replaceChildren(
    choice('source', '', 'All sources', all.length, !v.source),
    ...sources.map((s) => choice('source', s, sourceName(s), bySource.get(s) || 0, v.source === s)));
  $('search-times').replaceChildren(...windows.map(([k, label, ms]) => {
    const n = all.filter((d) => inWindow(d, ms, now)).length;
    return choice('time', k, label, n, v.time === k);
  }));
  $('search-facet-note').textContent = all.length >= facetHits
    ? `Counts are of the ${fmtInt(facetHits)} best matches.`
    : 'Counts are of all the matches.';
  $('search-facets').hidden = false;
}

/** docHref is the page's link to the text of a result's copy of its document. */
const docHref = (d) => href('document', encodeURIComponent(d.document_id), { pair: d.cc_pair_id, q: state.view.q, set: state.view.set });

/**
 * fromPair says which pair a copy is from: its name, id and access type
 * (names need not be unique; the id tells pairs apart).
 */
const fromPair = (name, id, access) => el('span', { class: 'from-pair' }, `from “${name}” (pair #${id}, ${access})`);

/** results shows the documents found. */
function results(docs) {
  const list = $('search-results');
  const v = state.view;
  const filters = [v.set && `in “${v.set}”`, v.source && sourceName(v.source),
    v.time && windows.find(([k]) => k === v.time)[1].toLowerCase()].filter(Boolean);
  const which = `“${v.q}”${filters.length ? ` (${filters.join(', ')})` : ''}`;
  $('search-summary').textContent = docs.length >= facetHits
    ? `The ${fmtInt(facetHits)} best results for ${which}: there may be more, which more words narrow down.`
    : docs.length
      ? `${plural(docs.length, 'result')} for ${which}.`
      : `Nothing found for ${which}. Try other words, or fewer filters.`;
  list.replaceChildren(...docs.map((d) => {
    const link = safeLink(d.link);
    const meta = [el('span', { class: 'badge' }, sourceName(d.source_type)), ' ', fromPair(d.cc_pair_name, d.cc_pair_id, d.cc_pair_access_type)];
    if (d.updated_at) meta.push(' · ', el('time', { dateTime: d.updated_at, title: fmtTime(d.updated_at) }, `updated ${ago(d.updated_at)}`));
    if (link) meta.push(' · ', el('a', { href: link, target: '_blank', rel: 'noopener noreferrer' }, 'Open at the source',
      el('span', { class: 'visually-hidden' }, ` (${d.semantic_identifier}, opens in a new tab)`)));
    return el('li', { class: 'result' },
      el('h2', { class: 'result-title' }, el('a', { href: docHref(d), 'data-result': '' }, d.semantic_identifier || d.document_id)),
      el('p', { class: 'result-meta small' }, ...meta),
      el('p', { class: 'snippet' }, ...marked(snippet(d))));
  }));
}

/** submit searches for the query box's words. */
function submit(ev) {
  ev.preventDefault();
  const q = $('search-q').value.trim();
  state.view = { ...state.view, q };
  setParams('search', state.view);
  run();
}

/** resultLinks returns the results' title links, in order. */
const resultLinks = () => [...document.querySelectorAll('#search-results [data-result]')];

/** keys moves through the results with the arrows. */
function keys(ev) {
  if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const links = resultLinks();
  const i = links.indexOf(document.activeElement);
  if (ev.key === 'ArrowDown' && (ev.target === $('search-q') || i >= 0)) {
    const next = links[i + 1];
    if (next) {
      ev.preventDefault();
      next.focus();
    }
  } else if (ev.key === 'ArrowUp' && i >= 0) {
    ev.preventDefault();
    if (i === 0) $('search-q').focus();
    else links[i - 1].focus();
  } else if (ev.key === 'Escape' && i >= 0) {
    ev.preventDefault();
    $('search-q').focus();
  }
}

/** slash brings "/" typed outside a field to the query box. */
function slash(ev) {
  if (ev.key !== '/' || ev.altKey || ev.ctrlKey || ev.metaKey || $('nav').hidden) return;
  const t = ev.target;
  if (t instanceof HTMLElement && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
  ev.preventDefault();
  if ($('view-search').hidden) {
    state.focusQuery = true;
    go(href('search', undefined, { q: state.view.q }));
  } else {
    $('search-q').focus();
    $('search-q').select();
  }
}

/**
 * open shows the text of a copy of a document (#document/<id>?pair=<n>):
 * pair n's copy; without a pair (a link from before copies were named),
 * the one copy the person may read, or the server's 409 naming the pairs
 * to choose from.
 */
export async function open(id, params) {
  let docID = id;
  try {
    docID = decodeURIComponent(id);
  } catch {
    // Shown as it is: the server answers 404.
  }
  const q = params.get('q') ?? '';
  const pair = params.get('pair') ?? '';
  $('document-back').href = href('search', undefined, { q, set: params.get('set') ?? '' });
  $('document-title').textContent = 'Document';
  $('document-meta').replaceChildren();
  $('document-source').replaceChildren();
  $('document-text').textContent = '';
  clearError($('document-error'));
  try {
    const copy = /^[0-9]+$/.test(pair) ? `?cc_pair_id=${pair}` : '';
    const { data } = await call('GET', `search/document/${encodeURIComponent(docID)}${copy}`);
    $('document-title').textContent = data.title || data.id;
    const md = data.metadata || {};
    const meta = [el('span', { class: 'badge' }, sourceName(md.source_type)), ' ', fromPair(md.cc_pair_name, md.cc_pair_id, md.cc_pair_access_type)];
    if (md.updated_at) meta.push(' · ', el('time', { dateTime: md.updated_at, title: fmtTime(md.updated_at) }, `updated ${ago(md.updated_at)}`));
    meta.push(' · ', 'id ', el('code', {}, data.id));
    $('document-meta').replaceChildren(...meta);
    const link = safeLink(data.url);
    if (link) $('document-source').replaceChildren(el('a', { href: link, target: '_blank', rel: 'noopener noreferrer' }, 'Open at the source (new tab)'));
    $('document-text').textContent = data.text;
  } catch (e) {
    showError($('document-error'), e.status === 404 ? new Error('This document does not exist, or you may not see it.') : e);
  }
}

/** chooseSet narrows the search to the document set chosen. */
function chooseSet() {
  state.view = { ...state.view, set: $('search-set').value };
  setParams('search', state.view);
  run();
}

export function wire() {
  $('search-form').addEventListener('submit', submit);
  $('search-set').addEventListener('change', chooseSet);
  $('view-search').addEventListener('keydown', keys);
  document.addEventListener('keydown', slash);
}

export function reset() {
  state.seq++;
  state.all = null;
  state.allFor = null;
  state.sets = null;
  state.setsSeq++;
  state.view = { q: '', set: '', source: '', time: '' };
  $('search-q').value = '';
  $('search-results').replaceChildren();
  $('search-summary').textContent = '';
  $('search-facets').hidden = true;
  fillSets();
  clearError($('search-error'));
  $('document-text').textContent = '';
}
