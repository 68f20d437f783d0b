// A cc-pair's documents in its view: how many it holds, a page at a time
// (GET /manage/admin/cc-pair/{id}/documents), one's text (…/documents/{id}),
// and pruning: what the pair's page says of it (last_pruned and Quarry's
// pruning, last_prune_attempt_*: a prune that waits, and why; one that
// did not run, and why) and a prune asked for (POST …/prune).

import { call } from './api.js';
import { $, el, showError, busy, said, fmtInt, fmtTime, loadingRow, emptyRow, keepFocus, safeLink } from './ui.js';

const state = { id: null, page: 0, opener: null, asked: () => {} };

/** The size of a page of documents. */
const pageSize = 20;

const fact = (term, ...def) => [el('dt', {}, term), el('dd', {}, ...def)];

/** row is a document's row: its name opens its text. */
function row(d) {
  const open = el('button', { type: 'button', class: 'link', 'aria-label': `Show the text of ${d.semantic_id}` }, d.semantic_id);
  open.addEventListener('click', () => show(d.document_id, open));
  const link = safeLink(d.link);
  return el('tr', {},
    el('td', {}, open, el('div', { class: 'muted small' }, d.document_id)),
    el('td', {}, link ? el('a', { href: link, target: '_blank', rel: 'noopener noreferrer' }, 'Open at the source') : el('span', { class: 'muted' }, 'none')),
    el('td', {}, d.from_ingestion_api ? 'Pushed (ingestion API)' : 'Its connector'),
    el('td', {}, d.doc_updated_at ? fmtTime(d.doc_updated_at) : el('span', { class: 'muted' }, 'not said')),
    el('td', {}, fmtTime(d.indexed_at)));
}

/** load shows the current page of pair id's documents. */
async function load(id) {
  const page = state.page;
  const { data } = await call('GET', `manage/admin/cc-pair/${encodeURIComponent(id)}/documents?page_num=${page}&page_size=${pageSize}`);
  if (state.id !== id || state.page !== page) return;
  const total = data.total_items;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  // Redrawn only when they changed: a focused button stays focused.
  const key = JSON.stringify(data);
  const tbody = $('pair-docs-rows');
  if (tbody.dataset.key !== key) {
    tbody.dataset.key = key;
    tbody.replaceChildren(...(data.items.length ? data.items.map(row)
      : [emptyRow(5, total === 0 ? 'No documents yet.' : 'No documents on this page.')]));
  }
  const start = page * pageSize;
  $('pair-docs-summary').textContent = total === 0 ? 'It holds no documents.'
    : `It holds ${fmtInt(total)} document${total === 1 ? '' : 's'}; ${fmtInt(Math.min(start + 1, total))}–${fmtInt(start + data.items.length)} by id.`;
  $('pair-docs-page').textContent = `Page ${fmtInt(page + 1)} of ${fmtInt(pages)}`;
  $('pair-docs-prev').disabled = page === 0;
  $('pair-docs-next').disabled = page >= pages - 1;
}

/**
 * pruneState says what pair p's page says of its pruning: a prune that
 * waits (and, when the pair is paused or INVALID, why it waits), one that
 * runs, the newest one that ended without pruning and why, in its own
 * words; else when the pair was last pruned.
 */
function pruneState(p) {
  const box = $('pair-prune-state');
  const last = p.last_pruned ? `Last pruned ${fmtTime(p.last_pruned)}.` : 'Never pruned.';
  let text = last;
  let failed = false;
  if (p.pruning) {
    if (p.status === 'PAUSED') text = 'A prune is asked for: it runs once the pair is resumed.';
    else if (p.status === 'INVALID') text = 'A prune is asked for: it runs once the pair can run again (see its latest attempt).';
    else if (p.last_prune_attempt_status === 'in_progress') text = 'A prune is running.';
    else if (p.last_prune_attempt_status === 'not_started') text = 'A prune waits for a worker.';
    else text = 'A prune is asked for: the scheduler makes it shortly, after the pair\'s current attempt if any.';
  } else if (p.last_prune_attempt_error_message) {
    failed = true;
    const why = p.last_prune_attempt_error_message.trim();
    text = `The last prune (${p.last_prune_attempt_status}, ${fmtTime(p.last_prune_attempt_finished)}) did not prune: ` +
      `${why}${/[.!?]$/.test(why) ? '' : '.'} ${last}`;
  }
  // The confirmation of a prune asked for is done with once it ended.
  if (!p.pruning) $('pair-prune-done').textContent = '';
  box.className = failed ? 'error-text' : '';
  if (box.textContent !== text) box.textContent = text;
}

/** show shows document docID's text; opener gets the focus back on close. */
async function show(docID, opener) {
  const id = state.id;
  state.opener = opener;
  try {
    const { data } = await call('GET', `manage/admin/cc-pair/${encodeURIComponent(id)}/documents/${encodeURIComponent(docID)}`);
    if (state.id !== id) return;
    $('pair-doc-title').textContent = data.title || data.semantic_id;
    const link = safeLink(data.link);
    $('pair-doc-facts').replaceChildren(
      ...fact('Id', data.document_id),
      ...fact('Link', link ? el('a', { href: link, target: '_blank', rel: 'noopener noreferrer' }, data.link) : 'none'),
      ...fact('Sections', fmtInt(data.sections.length)),
      ...fact('Written', fmtTime(data.indexed_at)),
      ...(Object.keys(data.metadata).length ? fact('Metadata', JSON.stringify(data.metadata)) : []),
    );
    $('pair-doc-text').textContent = data.text || '(no text)';
    $('pair-doc').hidden = false;
    $('pair-doc-title').focus();
  } catch (e) {
    showError($('pair-error'), e);
  }
}

/** close hides the document, and gives the focus back to what opened it. */
function close() {
  $('pair-doc').hidden = true;
  if (state.opener && state.opener.isConnected) state.opener.focus();
  state.opener = null;
}

/** prune asks for a prune of the pair. */
async function prune() {
  const id = state.id;
  await busy($('pair-prune'), async () => {
    try {
      await call('POST', `manage/admin/cc-pair/${encodeURIComponent(id)}/prune`);
      said($('pair-prune-done'), 'Asked for a prune: the scheduler makes it shortly, after the pair\'s current attempt if any.');
      state.asked();
    } catch (e) {
      if (e.status === 409) said($('pair-prune-done'), 'A prune of this pair waits or runs already.');
      else showError($('pair-error'), e);
    }
  });
}

/**
 * open shows pair id's documents and pruning, of its page p (editable: it
 * may ask for a prune).
 */
export async function open(id, p, { editable = false } = {}) {
  if (state.id !== id) {
    state.page = 0;
    $('pair-doc').hidden = true;
    $('pair-prune-done').textContent = '';
    $('pair-prune-state').textContent = '';
    $('pair-docs-rows').replaceChildren(loadingRow(5, 'Loading documents…'));
    delete $('pair-docs-rows').dataset.key;
  }
  state.id = id;
  $('pair-prune-buttons').hidden = !editable;
  $('pair-prune-hint').hidden = !editable;
  pruneState(p);
  await load(id).catch((e) => $('pair-docs-rows').replaceChildren(emptyRow(5, `The documents could not be loaded: ${e.message}`)));
}

/** refresh reloads the current page of documents, as the pair's view refreshes. */
export async function refresh(id) {
  if (state.id === id) await load(id);
}

/** pruned shows the pruning of pair p's page, fetched again by the pair's view. */
export function pruned(p) {
  if (state.id === p.id) pruneState(p);
}

/** pageTo shows another page of documents. */
async function pageTo(page, pressed, other) {
  state.page = page;
  try {
    await load(state.id);
  } catch (e) {
    showError($('pair-error'), e);
  }
  keepFocus(pressed, other);
}

/**
 * wire connects the controls, once; asked is called when a prune was
 * asked for, so that the pair's view follows it.
 */
export function wire(asked) {
  state.asked = asked;
  $('pair-docs-prev').addEventListener('click', () => pageTo(state.page - 1, $('pair-docs-prev'), $('pair-docs-next')));
  $('pair-docs-next').addEventListener('click', () => pageTo(state.page + 1, $('pair-docs-next'), $('pair-docs-prev')));
  $('pair-doc-close').addEventListener('click', close);
  $('pair-prune').addEventListener('click', prune);
}

export function reset() {
  Object.assign(state, { id: null, page: 0, opener: null });
  $('pair-prune-state').textContent = '';
  $('pair-docs-rows').replaceChildren();
  delete $('pair-docs-rows').dataset.key;
  $('pair-doc').hidden = true;
}
