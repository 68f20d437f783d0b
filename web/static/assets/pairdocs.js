// A cc-pair's documents in its view: how many it holds, a page at a time
// (GET /manage/admin/cc-pair/{id}/documents), one's text (…/documents/{id}),
// and pruning: when it was last pruned (…/last_pruned) and a prune asked
// for (POST …/prune).

import { call } from './api.js';
import { $, el, showError, busy, said, fmtInt, fmtTime, loadingRow, emptyRow, keepFocus, safeLink } from './ui.js';

const state = { id: null, page: 0, opener: null };

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

/** lastPruned says when pair id was last pruned. */
async function lastPruned(id) {
  const { data } = await call('GET', `manage/admin/cc-pair/${encodeURIComponent(id)}/last_pruned`);
  if (state.id !== id) return;
  $('pair-prune-done').textContent = data ? `Last pruned ${fmtTime(data)}.` : 'Never pruned.';
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
    } catch (e) {
      if (e.status === 409) said($('pair-prune-done'), 'A prune of this pair waits or runs already.');
      else showError($('pair-error'), e);
    }
  });
}

/** open shows pair id's documents (editable: it may ask for a prune). */
export async function open(id, { editable = false } = {}) {
  if (state.id !== id) {
    state.page = 0;
    $('pair-doc').hidden = true;
    $('pair-prune-done').textContent = '';
    $('pair-docs-rows').replaceChildren(loadingRow(5, 'Loading documents…'));
    delete $('pair-docs-rows').dataset.key;
  }
  state.id = id;
  $('pair-prune-buttons').hidden = !editable;
  $('pair-prune-hint').hidden = !editable;
  await Promise.all([
    load(id).catch((e) => $('pair-docs-rows').replaceChildren(emptyRow(5, `The documents could not be loaded: ${e.message}`))),
    lastPruned(id).catch(() => {}),
  ]);
}

/** refresh reloads the current page of documents, as the pair's view refreshes. */
export async function refresh(id) {
  if (state.id === id) await load(id);
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

/** wire connects the controls, once. */
export function wire() {
  $('pair-docs-prev').addEventListener('click', () => pageTo(state.page - 1, $('pair-docs-prev'), $('pair-docs-next')));
  $('pair-docs-next').addEventListener('click', () => pageTo(state.page + 1, $('pair-docs-next'), $('pair-docs-prev')));
  $('pair-doc-close').addEventListener('click', close);
  $('pair-prune').addEventListener('click', prune);
}

export function reset() {
  Object.assign(state, { id: null, page: 0, opener: null });
  $('pair-docs-rows').replaceChildren();
  delete $('pair-docs-rows').dataset.key;
  $('pair-doc').hidden = true;
}
