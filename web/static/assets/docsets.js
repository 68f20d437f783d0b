// Document sets (Onyx's routes, api/documentset.go): the list of the sets
// the person sees (GET manage/document-set) and of those they may change
// (?get_editable=true), and the page of one (#document-set/<id>, or
// #document-set/new): its name, description and cc-pairs, public or shared
// with groups and people, made (POST manage/admin/document-set), changed
// (PATCH, the whole set) or deleted (DELETE …/{id}). The pairs offered are
// those of the connector status listing (the pairs the person can see);
// for someone who may not list them (who only manages document sets), the
// pairs of the sets they see. The server decides: every refusal it sends
// is shown.

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, said, confirmDelete, loadingRow, emptyRow, groupPicker, uid,
  plural, personName } from './ui.js';
import { session, curatesOrAdmin, groupChoices } from './session.js';
import { go, href } from './route.js';
import { sourceName } from './sources.js';
import * as status from './status.js';

/** How many pairs not chosen the picker lists for a search. */
const shownPairs = 50;

const state = {
  id: null,         // 'new' or the set's id
  set: null,        // the set shown (Onyx's DocumentSetSummary), null for a new one
  pairs: [],        // the pairs offered: {id, name, connName, credName, source, access, search}
  chosen: new Set(), // the ids of the pairs chosen
  people: [],       // the people offered: {id, label}
  shared: [],       // the ids of the people the set is shared with
  groups: null,     // reads the groups chosen
  flash: '',        // what to say once the page of a set is shown
};

/** sharing says who sees set s, as the list shows it. */
function sharing(s) {
  const parts = [];
  if (s.is_public) parts.push('everyone (public)');
  if (s.groups.length) parts.push(plural(s.groups.length, 'group'));
  if (s.users.length) parts.push(plural(s.users.length, 'person', 'people'));
  return parts.length ? parts.join(', ') : 'its maker and those who manage document sets';
}

/** list shows the sets the person sees. */
export async function list() {
  const box = $('document-sets-error');
  clearError(box);
  const tbody = $('document-sets-rows');
  tbody.replaceChildren(loadingRow(6, 'Loading document sets…'));
  try {
    const [{ data: sets }, { data: editable }] = await Promise.all([call('GET', 'manage/document-set'),
      call('GET', 'manage/document-set?get_editable=true')]);
    const mine = new Set(editable.map((s) => s.id));
    tbody.replaceChildren(...sets.map((s) => el('tr', {},
      el('td', { class: 'num' }, String(s.id)),
      el('td', {}, el('a', { href: href('document-set', s.id) }, s.name)),
      el('td', {}, s.description || ''),
      el('td', {}, s.cc_pair_summaries.map((p) => p.name || `cc-pair #${p.id}`).join(', ') ||
        el('span', { class: 'muted' }, 'none left')),
      el('td', {}, sharing(s)),
      el('td', {}, mine.has(s.id) ? 'change and delete it' : el('span', { class: 'muted' }, 'search by it')))));
    if (sets.length === 0) {
      tbody.replaceChildren(emptyRow(6, 'No document sets yet.', el('a', { href: '#document-set/new' }, 'Make the first one.')));
    }
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  }
}

/** summaryPair is a pair of a set's summary (Onyx's CCPairSummary) as the picker offers it. */
const summaryPair = (p) => ({ id: p.id, name: p.name, connName: '', credName: '', source: p.source, access: p.access_type,
  search: (p.name || '').toLowerCase() });

/**
 * loadPairs returns the pairs to offer, and a note on where they come
 * from: the connector status listing (the server's CanReachConnectors:
 * curators, and those who manage connectors), or else the pairs of the
 * sets the person sees.
 */
async function loadPairs(sets) {
  if (curatesOrAdmin() || session.permissions.includes('manage:connectors')) return { pairs: await status.pairs(), note: '' };
  const seen = new Map();
  for (const s of sets) for (const p of s.cc_pair_summaries) seen.set(p.id, summaryPair(p));
  return { pairs: [...seen.values()],
    note: 'Only curators and those who manage connectors list every cc-pair: these are the pairs of the sets you see.' };
}

/**
 * loadPeople returns the people and API keys' accounts a set (or an
 * assistant) may be shared with (GET manage/users, for curators and those
 * who may read people), or null when the person may not list them.
 */
export async function loadPeople() {
  try {
    const { data } = await call('GET', 'manage/users?include_api_keys=true');
    return data.accepted.filter((u) => u.is_active).map((u) => ({ id: u.id, label: personName(u.email) }));
  } catch (e) {
    if (e.status === 403) return null;
    throw e;
  }
}

/** open shows set id, or the form of a new one ("new"). */
export async function open(id) {
  state.id = id;
  const box = $('document-set-error');
  clearError(box);
  $('document-set-saved').textContent = state.flash;
  state.flash = '';
  $('document-set-form').hidden = true;
  $('document-set-readonly').hidden = true;
  $('document-set-title').textContent = id === 'new' ? 'New document set' : `Document set #${id}`;
  const view = $('view-document-set');
  view.setAttribute('aria-busy', 'true');
  try {
    const [{ data: sets }, { data: editable }, groups, people] = await Promise.all([call('GET', 'manage/document-set'),
      call('GET', 'manage/document-set?get_editable=true'), groupChoices().catch(() => []), loadPeople()]);
    const set = id === 'new' ? null : sets.find((s) => s.id === id);
    if (id !== 'new' && !set) throw new Error(`Document set ${id} does not exist, or you may not see it.`);
    const { pairs, note } = await loadPairs(sets);
    if (state.id !== id) return;
    fill(set, set === null || editable.some((s) => s.id === id), pairs, note, groups, people);
  } catch (e) {
    if (state.id === id) showError(box, e);
  } finally {
    if (state.id === id) view.setAttribute('aria-busy', 'false');
  }
}

/** fill shows set (null: a new one), editable or not, with what may be chosen. */
function fill(set, editable, pairs, note, groups, people) {
  state.set = set;
  if (set) $('document-set-title').textContent = `Document set #${set.id}: ${set.name}`;
  $('document-set-name').value = set ? set.name : '';
  $('document-set-description').value = set ? set.description ?? '' : '';
  // The set's own pairs are offered even when the listing lacks them.
  const offered = new Map(pairs.map((p) => [p.id, p]));
  for (const p of set ? set.cc_pair_summaries : []) if (!offered.has(p.id)) offered.set(p.id, summaryPair(p));
  state.pairs = [...offered.values()].sort((a, b) => a.id - b.id);
  state.chosen = new Set(set ? set.cc_pair_summaries.map((p) => p.id) : []);
  $('document-set-pairs-note').textContent = note;
  $('document-set-pair-filter').value = '';
  showPairs();
  $('document-set-public').checked = set ? set.is_public : false;
  state.groups = groupPicker($('document-set-groups'), groups, set ? set.groups : []);
  state.people = people || [];
  state.shared = set ? [...set.users] : [];
  $('document-set-people-note').textContent = people === null
    ? 'Only curators and those who may read the list of people can share with people here.'
    : '';
  $('document-set-person-row').hidden = people === null || !editable;
  showPeople();
  $('document-set-fieldset').disabled = !editable;
  $('document-set-buttons').hidden = !editable;
  $('document-set-readonly').hidden = editable;
  $('document-set-save').textContent = set ? 'Save document set' : 'Make document set';
  $('document-set-delete').hidden = !set;
  $('document-set-form').hidden = false;
}

/** pairLabel names a pair in the picker. */
function pairLabel(p) {
  const via = p.connName ? ` · ${p.connName}${p.credName ? ` with ${p.credName}` : ''}` : '';
  return `${p.name || `cc-pair #${p.id}`} (#${p.id}) · ${sourceName(p.source)} · ${p.access}${via}`;
}

/**
 * showPairs lists the chosen pairs, then up to shownPairs of the others
 * that match the filter's words.
 */
function showPairs() {
  const words = $('document-set-pair-filter').value.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const matches = (p) => words.every((w) => p.search.includes(w) || String(p.id) === w);
  const chosen = state.pairs.filter((p) => state.chosen.has(p.id));
  const others = state.pairs.filter((p) => !state.chosen.has(p.id) && matches(p));
  const shown = [...chosen, ...others.slice(0, shownPairs)];
  $('document-set-pairs').replaceChildren(...shown.map((p) => {
    const id = uid('document-set-pair');
    const box = el('input', { type: 'checkbox', id, value: String(p.id), checked: state.chosen.has(p.id) });
    box.addEventListener('change', () => {
      if (box.checked) state.chosen.add(p.id);
      else state.chosen.delete(p.id);
      countPairs(others.length);
    });
    return el('div', { class: 'checks' }, box, el('label', { for: id }, pairLabel(p)));
  }));
  if (shown.length === 0) {
    $('document-set-pairs').replaceChildren(el('p', { class: 'muted small' },
      state.pairs.length ? 'No cc-pair matches these words.' : 'No cc-pairs to choose from.'));
  }
  countPairs(others.length);
}

/** countPairs says how many pairs are chosen, and how many others match. */
function countPairs(others) {
  const more = others > shownPairs ? ` The first ${shownPairs} of ${others} others that match are listed: more words narrow them.` : '';
  $('document-set-pairs-count').textContent = `${plural(state.chosen.size, 'cc-pair')} chosen.${more}`;
}

/** personLabel names a person of the set. */
function personLabel(id) {
  const p = state.people.find((x) => x.id === id);
  return p ? p.label : `Person ${id}`;
}

/** showPeople lists the people the set is shared with, and offers the others. */
function showPeople() {
  const list = $('document-set-people');
  list.replaceChildren(...state.shared.map((id, i) => {
    const name = personLabel(id);
    const remove = el('button', { type: 'button', class: 'danger small-button', 'aria-label': `Stop sharing with ${name}` }, 'Stop sharing');
    remove.addEventListener('click', () => {
      state.shared.splice(i, 1);
      showPeople();
      const next = list.querySelectorAll('button')[Math.min(i, state.shared.length - 1)];
      (next || $('document-set-person')).focus();
    });
    return el('li', {}, `${name} `, remove);
  }));
  if (state.shared.length === 0) list.replaceChildren(el('li', { class: 'muted' }, 'Shared with nobody in person.'));
  const others = state.people.filter((p) => !state.shared.includes(p.id));
  $('document-set-person').replaceChildren(...(others.length
    ? others.map((p) => el('option', { value: p.id }, p.label))
    : [el('option', { value: '' }, 'Everyone listed is chosen')]));
}

/** addPerson shares the set with the person chosen. */
function addPerson() {
  const id = $('document-set-person').value;
  if (!id) return;
  state.shared.push(id);
  showPeople();
  said($('document-set-saved'), `${personLabel(id)} is added: save the set to share it.`);
  $('document-set-person').focus();
}

/** save makes the set, or replaces it with the form's. */
async function save(ev) {
  ev.preventDefault();
  const box = $('document-set-error');
  clearError(box);
  $('document-set-saved').textContent = '';
  const body = {
    name: $('document-set-name').value.trim(),
    description: $('document-set-description').value.trim(),
    cc_pair_ids: [...state.chosen].sort((a, b) => a - b),
    is_public: $('document-set-public').checked,
    users: state.shared,
    groups: state.groups(),
  };
  await busy($('document-set-save'), async () => {
    try {
      if (!state.set) {
        const { data } = await call('POST', 'manage/admin/document-set', { body });
        state.flash = `The document set “${body.name}” is made.`;
        go(href('document-set', data));
        return;
      }
      await call('PATCH', 'manage/admin/document-set', { body: { id: state.set.id, ...body } });
      state.flash = `Saved at ${new Date().toLocaleTimeString()}.`;
      await open(state.set.id);
      $('document-set-save').focus();
    } catch (e) {
      writeError(box, e);
    }
  });
}

/** remove deletes the set, once confirmed. */
async function remove() {
  const s = state.set;
  if (!s) return;
  await confirmDelete({
    question: `Delete the document set "${s.name}" (#${s.id})? Searches can no longer be narrowed to it; its cc-pairs and their documents stay.`,
    box: $('document-set-error'),
    button: $('document-set-delete'),
    request: () => call('DELETE', `manage/admin/document-set/${s.id}`),
    done: () => go('#document-sets'),
  });
}

/** wire connects the controls, once. */
export function wire() {
  $('document-set-form').addEventListener('submit', save);
  $('document-set-delete').addEventListener('click', remove);
  $('document-set-pair-filter').addEventListener('input', showPairs);
  $('document-set-person-add').addEventListener('click', addPerson);
}

/** reset forgets what was shown (sign-out). */
export function reset() {
  Object.assign(state, { id: null, set: null, pairs: [], chosen: new Set(), people: [], shared: [], groups: null, flash: '' });
  $('document-sets-rows').replaceChildren();
  $('document-set-pairs').replaceChildren();
  $('document-set-people').replaceChildren();
  $('document-set-form').hidden = true;
}
