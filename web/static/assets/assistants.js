// Assistants (Onyx's personas, api/persona.go): the list of those the
// person sees (GET persona), and the page of one (#assistant/<id>, or
// #assistant/new): its name, description and instructions, whether it
// searches (whether it has the built-in search tool) and in which
// document sets, the other tools it may call (GET tool), its model (GET
// llm/provider), its starter messages, and who uses it (public, groups,
// people); made (POST persona), changed and shared (PATCH persona/{id},
// the whole assistant) or deleted (DELETE persona/{id}). Who may change
// one is the server's rule (docs/decisions.md, "Assistants"): the page
// offers the form to those it says hold OWNER or EDITOR, and to those
// GET admin/persona?get_editable=true names; every refusal it sends is
// shown.

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, said, confirmDelete, loadingRow, emptyRow, groupPicker, uid,
  personName } from './ui.js';
import { session, isAdmin, curatesOrAdmin, groupChoices } from './session.js';
import { go, href } from './route.js';
import { loadPeople } from './docsets.js';

/** searchTool is the in_code_tool_id of the built-in search tool (quarry.SearchToolID). */
const searchTool = 'SearchTool';

/** managesAll reports whether the person changes every assistant (admins, manage:agents). */
const managesAll = () => isAdmin() || session.permissions.includes('manage:agents');

const state = {
  id: null,          // 'new' or the assistant's id
  persona: null,     // the assistant shown (Onyx's FullPersonaSnapshot), null for a new one
  search: null,      // the built-in search tool, or null
  sets: [],          // the document sets offered: {id, name}
  chosenSets: new Set(),
  tools: [],         // the other tools offered
  chosenTools: new Set(),
  people: [],        // the people offered: {id, label}
  shared: [],        // the ids of the people it is shared with
  groups: null,      // reads the groups chosen
  flash: '',         // what to say once the page of an assistant is shown
};

/** toolName names a tool as the person reads it. */
export const toolName = (t) => (t.in_code_tool_id === searchTool ? 'Search the company\'s documents' : t.display_name || t.name);

/**
 * searchScope returns the names of the document sets assistant p searches
 * (none: every document its user may read), or null when it does not
 * search (it lacks the built-in search tool).
 */
export function searchScope(p) {
  if (!p.tools.some((t) => t.in_code_tool_id === searchTool)) return null;
  return p.document_sets.map((s) => s.name);
}

/** searches says what assistant p searches, as the list shows it. */
function searches(p) {
  const sets = searchScope(p);
  if (sets === null) return 'does not search';
  return sets.length ? sets.join(', ') : 'all its user may read';
}

/** otherTools lists the tools assistant p may call besides the search. */
export const otherTools = (p) => p.tools.filter((t) => t.in_code_tool_id !== searchTool).map(toolName);

/** usedBy says who uses assistant p, as the list shows it. */
function usedBy(p) {
  if (p.builtin_persona) return 'everyone (built in)';
  if (p.is_public) return 'everyone (public)';
  return p.owner ? `${personName(p.owner.email)} and those it is shared with` : 'those it is shared with';
}

/**
 * mayDo says what the person may do with assistant p here, by what they
 * hold on it (the built-in one is not changed here).
 */
function mayDo(p) {
  if (p.builtin_persona) return el('span', { class: 'muted' }, 'chat with it');
  if (p.user_permission === 'OWNER') return 'change, share and delete it';
  if (p.user_permission === 'EDITOR') return 'change it';
  return el('span', { class: 'muted' }, 'chat with it');
}

/** list shows the assistants the person sees. */
export async function list() {
  const box = $('assistants-error');
  clearError(box);
  const tbody = $('assistants-rows');
  tbody.replaceChildren(loadingRow(7, 'Loading assistants…'));
  try {
    const { data } = await call('GET', 'persona');
    tbody.replaceChildren(...data.map((p) => el('tr', {},
      el('td', { class: 'num' }, String(p.id)),
      el('td', {}, el('a', { href: href('assistant', p.id) }, p.name)),
      el('td', {}, p.description || ''),
      el('td', {}, searches(p)),
      el('td', {}, otherTools(p).join(', ') || el('span', { class: 'muted' }, 'none')),
      el('td', {}, usedBy(p)),
      el('td', {}, mayDo(p)))));
    if (data.length === 0) tbody.replaceChildren(emptyRow(7, 'No assistants.', el('a', { href: '#assistant/new' }, 'Make one.')));
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  }
}

/**
 * editableIDs returns the ids of the assistants the person may change by
 * the server's word (GET admin/persona?get_editable=true, for curators and
 * those who manage assistants: every one, or those shared with groups they
 * curate), or an empty set for others.
 */
async function editableIDs() {
  if (!curatesOrAdmin() && !session.permissions.includes('manage:agents')) return new Set();
  const { data } = await call('GET', 'admin/persona?get_editable=true');
  return new Set(data.map((p) => p.id));
}

/** models returns the models the person may give an assistant (GET llm/provider), none when refused. */
async function models() {
  try {
    const { data } = await call('GET', 'llm/provider');
    return data.providers.flatMap((pr) => pr.model_configurations.filter((m) => m.is_visible)
      .map((m) => ({ id: m.id, label: `${pr.name} · ${m.display_name || m.name}` })));
  } catch (e) {
    if (e.status === 403) return [];
    throw e;
  }
}

/** open shows assistant id, or the form of a new one ("new"). */
export async function open(id) {
  state.id = id;
  const box = $('assistant-error');
  clearError(box);
  $('assistant-saved').textContent = state.flash;
  state.flash = '';
  $('assistant-form').hidden = true;
  $('assistant-readonly').hidden = true;
  $('assistant-title').textContent = id === 'new' ? 'New assistant' : `Assistant #${id}`;
  const view = $('view-assistant');
  view.setAttribute('aria-busy', 'true');
  try {
    const [persona, { data: tools }, { data: sets }, offered, groups, people, editable] = await Promise.all([
      id === 'new' ? null : call('GET', `persona/${id}`).then((r) => r.data),
      call('GET', 'tool'), call('GET', 'manage/document-set'), models(), groupChoices().catch(() => []), loadPeople(),
      id === 'new' ? new Set() : editableIDs()]);
    if (state.id !== id) return;
    // The built-in assistant's instructions, when it has none of its own,
    // are Quarry's; this form would replace them with its text: it is
    // changed through PATCH admin/default-assistant, not here.
    const mine = persona === null || !persona.builtin_persona &&
      (['OWNER', 'EDITOR'].includes(persona.user_permission) || editable.has(id));
    // Those it is shared with as editors change it but do not delete it.
    const deletes = persona !== null && !persona.builtin_persona && (persona.user_permission === 'OWNER' || editable.has(id));
    fill(persona, mine, deletes, tools, sets, offered, groups, people);
  } catch (e) {
    if (state.id === id) showError(box, e.status === 404 ? new Error(`Assistant ${id} does not exist, or you may not use it.`) : e);
  } finally {
    if (state.id === id) view.setAttribute('aria-busy', 'false');
  }
}

/**
 * checkList shows one checkbox per item in container, those in chosen
 * checked (chosen follows the boxes), or empty when there are none.
 */
function checkList(container, items, chosen, label, empty) {
  container.replaceChildren(...items.map((it) => {
    const id = uid(container.id);
    const box = el('input', { type: 'checkbox', id, value: String(it.id), checked: chosen.has(it.id) });
    box.addEventListener('change', () => (box.checked ? chosen.add(it.id) : chosen.delete(it.id)));
    return el('div', { class: 'checks' }, box, el('label', { for: id }, label(it)));
  }));
  if (items.length === 0) container.replaceChildren(el('p', { class: 'muted small' }, empty));
}

/**
 * fill shows persona p (null: a new one), editable or not, deletable or
 * not, with what may be chosen.
 */
function fill(p, editable, deletes, tools, sets, offered, groups, people) {
  state.persona = p;
  if (p) $('assistant-title').textContent = `Assistant #${p.id}: ${p.name}`;
  $('assistant-name').value = p ? p.name : '';
  $('assistant-description').value = p ? p.description : '';
  $('assistant-instructions').value = p ? p.system_prompt ?? '' : '';

  const own = p ? p.tools : [];
  state.search = tools.find((t) => t.in_code_tool_id === searchTool) || own.find((t) => t.in_code_tool_id === searchTool) || null;
  $('assistant-search-row').hidden = state.search === null;
  $('assistant-search-hint').textContent = state.search === null
    ? 'This server has no built-in search tool: the assistant cannot search.'
    : 'Without it the assistant answers from its instructions and its other tools alone.';
  $('assistant-search').checked = p ? own.some((t) => t.in_code_tool_id === searchTool) : state.search !== null;

  // The assistant's own sets and tools are offered even when the listings lack them.
  const setMap = new Map(sets.map((s) => [s.id, { id: s.id, name: s.name, description: s.description }]));
  for (const s of p ? p.document_sets : []) if (!setMap.has(s.id)) setMap.set(s.id, { id: s.id, name: s.name, description: s.description });
  state.sets = [...setMap.values()].sort((a, b) => a.id - b.id);
  state.chosenSets = new Set(p ? p.document_sets.map((s) => s.id) : []);
  checkList($('assistant-sets'), state.sets, state.chosenSets, (s) => (s.description ? `${s.name} · ${s.description}` : s.name),
    'No document sets you may see.');

  const toolMap = new Map(tools.filter((t) => !t.in_code_tool_id && t.enabled).map((t) => [t.id, t]));
  for (const t of own) if (!t.in_code_tool_id && !toolMap.has(t.id)) toolMap.set(t.id, t);
  state.tools = [...toolMap.values()].sort((a, b) => a.id - b.id);
  state.chosenTools = new Set(own.filter((t) => !t.in_code_tool_id).map((t) => t.id));
  checkList($('assistant-tools'), state.tools, state.chosenTools,
    (t) => `${toolName(t)}${t.mcp_server_id ? ' (MCP)' : ''}${t.description ? ` · ${t.description}` : ''}`,
    'No custom or MCP tools yet.');

  const current = p ? p.default_model_configuration_id : null;
  const choices = [...offered];
  if (current !== null && !choices.some((m) => m.id === current)) choices.push({ id: current, label: `Model configuration #${current}` });
  $('assistant-model').replaceChildren(el('option', { value: '' }, 'The default model'),
    ...choices.map((m) => el('option', { value: String(m.id) }, m.label)));
  $('assistant-model').value = current === null ? '' : String(current);
  $('assistant-starters').value = p ? (p.starter_messages || []).map((m) => m.message).join('\n') : '';

  const setsPublic = !p || p.user_permission === 'OWNER' || managesAll();
  $('assistant-public').checked = p ? p.is_public : false;
  $('assistant-public').disabled = !setsPublic;
  $('assistant-public-hint').textContent = setsPublic ? '' : 'Only its owners and admins make it public or not.';
  state.groups = groupPicker($('assistant-groups'), groups, p ? p.groups : []);
  state.people = people || [];
  for (const u of p ? p.users : []) {
    if (!state.people.some((x) => x.id === u.id)) state.people.push({ id: u.id, label: personName(u.email) });
  }
  state.shared = p ? p.users.map((u) => u.id) : [];
  $('assistant-people-note').textContent = people === null
    ? 'Only curators and those who may read the list of people can share with people here.'
    : '';
  $('assistant-person-row').hidden = people === null || !editable;
  showPeople();

  $('assistant-fieldset').disabled = !editable;
  $('assistant-buttons').hidden = !editable;
  $('assistant-readonly').hidden = editable;
  $('assistant-readonly').textContent = p?.builtin_persona
    ? 'The built-in assistant is not changed here: admins change its instructions and tools through PATCH /admin/default-assistant.'
    : 'You may use this assistant but not change it: only its maker, those it is shared with as editors, admins and curators of every group it is shared with may.';
  $('assistant-save').textContent = p ? 'Save assistant' : 'Make assistant';
  $('assistant-delete').hidden = !deletes;
  $('assistant-form').hidden = false;
}

/** personLabel names a person the assistant is shared with. */
function personLabel(id) {
  const p = state.people.find((x) => x.id === id);
  return p ? p.label : `Person ${id}`;
}

/** showPeople lists the people the assistant is shared with, and offers the others. */
function showPeople() {
  const list = $('assistant-people');
  list.replaceChildren(...state.shared.map((id, i) => {
    const name = personLabel(id);
    const remove = el('button', { type: 'button', class: 'danger small-button', 'aria-label': `Stop sharing with ${name}` }, 'Stop sharing');
    remove.addEventListener('click', () => {
      state.shared.splice(i, 1);
      showPeople();
      const next = list.querySelectorAll('button')[Math.min(i, state.shared.length - 1)];
      (next || $('assistant-person')).focus();
    });
    return el('li', {}, `${name} `, remove);
  }));
  if (state.shared.length === 0) list.replaceChildren(el('li', { class: 'muted' }, 'Shared with nobody in person.'));
  const owner = state.persona?.owner?.id;
  const others = state.people.filter((p) => !state.shared.includes(p.id) && p.id !== owner && p.id !== session.me?.id);
  $('assistant-person').replaceChildren(...(others.length
    ? others.map((p) => el('option', { value: p.id }, p.label))
    : [el('option', { value: '' }, 'Everyone listed is chosen')]));
}

/** addPerson shares the assistant with the person chosen. */
function addPerson() {
  const id = $('assistant-person').value;
  if (!id) return;
  state.shared.push(id);
  showPeople();
  said($('assistant-saved'), `${personLabel(id)} is added: save the assistant to share it.`);
  $('assistant-person').focus();
}

/** body returns the request the form asks for (Onyx's PersonaUpsertRequest). */
function body() {
  const p = state.persona;
  const tools = [...state.chosenTools].sort((a, b) => a - b);
  if (state.search && $('assistant-search').checked) tools.unshift(state.search.id);
  const model = $('assistant-model').value;
  const out = {
    name: $('assistant-name').value.trim(),
    description: $('assistant-description').value.trim(),
    system_prompt: $('assistant-instructions').value,
    task_prompt: p ? p.task_prompt ?? '' : '',
    datetime_aware: p ? p.datetime_aware : false,
    replace_base_system_prompt: p ? p.replace_base_system_prompt : false,
    document_set_ids: [...state.chosenSets].sort((a, b) => a - b),
    tool_ids: tools,
    default_model_configuration_id: model === '' ? null : Number(model),
    starter_messages: $('assistant-starters').value.split('\n').map((s) => s.trim()).filter(Boolean)
      .map((s) => ({ name: s, message: s })),
    users: state.shared,
    groups: state.groups(),
  };
  if (!$('assistant-public').disabled) out.is_public = $('assistant-public').checked;
  return out;
}

/** save makes the assistant, or replaces it with the form's. */
async function save(ev) {
  ev.preventDefault();
  const box = $('assistant-error');
  clearError(box);
  $('assistant-saved').textContent = '';
  const b = body();
  await busy($('assistant-save'), async () => {
    try {
      if (!state.persona) {
        const { data } = await call('POST', 'persona', { body: b });
        state.flash = `The assistant “${b.name}” is made.`;
        go(href('assistant', data.id));
        return;
      }
      await call('PATCH', `persona/${state.persona.id}`, { body: b });
      state.flash = `Saved at ${new Date().toLocaleTimeString()}.`;
      await open(state.persona.id);
      $('assistant-save').focus();
    } catch (e) {
      writeError(box, e);
    }
  });
}

/** remove deletes the assistant, once confirmed. */
async function remove() {
  const p = state.persona;
  if (!p) return;
  await confirmDelete({
    question: `Delete the assistant "${p.name}" (#${p.id})? No new chat can be started with it.`,
    box: $('assistant-error'),
    button: $('assistant-delete'),
    request: () => call('DELETE', `persona/${p.id}`),
    done: () => go('#assistants'),
  });
}

/** wire connects the controls, once. */
export function wire() {
  $('assistant-form').addEventListener('submit', save);
  $('assistant-delete').addEventListener('click', remove);
  $('assistant-person-add').addEventListener('click', addPerson);
}

/** reset forgets what was shown (sign-out). */
export function reset() {
  Object.assign(state, { id: null, persona: null, search: null, sets: [], chosenSets: new Set(), tools: [], chosenTools: new Set(),
    people: [], shared: [], groups: null, flash: '' });
  $('assistants-rows').replaceChildren();
  $('assistant-sets').replaceChildren();
  $('assistant-tools').replaceChildren();
  $('assistant-people').replaceChildren();
  $('assistant-form').hidden = true;
}
