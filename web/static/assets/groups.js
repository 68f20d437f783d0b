// User groups (admins): the list, the default groups Admin and Basic
// among them, and a new one (POST /manage/admin/user-group), and one group:
// renamed or given other pairs (PATCH, an absent field unchanged), deleted,
// members added (POST …/add-users) or removed, curator flags set (POST
// …/set-curator), permissions granted or taken back (PUT …/permissions).
// A default group's members follow their roles: it shows them and its
// permissions, and nothing else can be changed.

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, said, confirmDelete, loadingRow, emptyRow, personName } from './ui.js';
import * as status from './status.js';
import { go, href } from './route.js';

const state = { id: null, group: null };

// The permissions a group may be granted (Onyx v4.6.1's toggleable
// tokens), with what each does in Quarry (docs/decisions.md, "Group
// permissions and default groups").
const toggleable = [
  ['manage:connectors', 'Manage connectors, credentials and cc-pairs, as an admin'],
  ['manage:user_groups', 'Manage user groups, as an admin (not their permissions)'],
  ['manage:actions', 'Manage custom tools, as an admin'],
  ['add:connectors', "Onyx's: add connectors"],
  ['add:agents', "Onyx's: add agents"],
  ['manage:agents', "Onyx's: manage agents"],
  ['manage:document_sets', "Onyx's: manage document sets"],
  ['manage:llms', "Onyx's: manage LLMs"],
  ['read:agent_analytics', "Onyx's: read agent analytics"],
  ['read:query_history', "Onyx's: read query history"],
  ['create:user_api_keys', "Onyx's: create personal access tokens"],
  ['create:service_account_api_keys', "Onyx's: create service account API keys"],
  ['create:slack_discord_bots', "Onyx's: create Slack and Discord bots"],
];

/** list shows every group. */
export async function list() {
  const box = $('groups-error');
  clearError(box);
  const tbody = $('groups-rows');
  tbody.replaceChildren(loadingRow(5, 'Loading groups…'));
  try {
    const { data } = await call('GET', 'manage/admin/user-group?include_default=true');
    tbody.replaceChildren(...data.map((g) => {
      const curators = g.users.filter((u) => g.curator_ids.includes(u.id)).map((u) => u.email);
      return el('tr', {},
        el('td', { class: 'num' }, String(g.id)),
        el('td', {}, el('a', { href: href('group', g.id) }, g.name),
          ...(g.is_default ? [' ', el('span', { class: 'badge' }, 'default: by role')] : []),
          ...(g.is_scim_synced ? [' ', directoryBadge('group')] : [])),
        el('td', { class: 'num' }, String(g.users.length)),
        el('td', {}, curators.length ? curators.join(', ') : el('span', { class: 'muted' }, 'none')),
        el('td', { class: 'num' }, String(g.cc_pair_ids.length)),
      );
    }));
    if (!data.some((g) => !g.is_default)) tbody.append(emptyRow(5, 'No groups of your own yet: name the first one above.'));
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  }
}

async function create(ev) {
  ev.preventDefault();
  const box = $('groups-error');
  clearError(box);
  await busy($('group-create'), async () => {
    try {
      const { data } = await call('POST', 'manage/admin/user-group', { body: { name: $('group-new-name').value.trim(), user_ids: [], cc_pair_ids: [] } });
      $('group-new-name').value = '';
      go(href('group', data.id));
    } catch (e) {
      writeError(box, e);
    }
  });
}

/**
 * directoryBadge says that the company's directory (SCIM) manages a person
 * or a group, with the reason in its title and, for screen readers, in a
 * visually hidden text.
 */
export function directoryBadge(what) {
  const why = what === 'group'
    ? 'Managed by the company\'s directory (SCIM): its name and its directory members are changed there'
    : 'Managed by the company\'s directory (SCIM): their email, name, activation and membership of the directory\'s groups are changed there';
  return el('span', { class: 'badge directory', title: why }, 'directory', el('span', { class: 'visually-hidden' }, `: ${why}`));
}

/**
 * candidates returns the accounts that may join: people, and API keys'
 * service accounts; the people the directory manages join its groups
 * there.
 */
async function candidates(directoryGroup) {
  const [people, keys] = await Promise.all([
    call('GET', 'manage/users/accepted?page_size=1000'),
    call('GET', 'admin/api-key').catch(() => ({ data: [] })),
  ]);
  return [
    ...people.data.items.filter((p) => p.is_active && !(directoryGroup && p.is_scim_synced))
      .map((p) => ({ id: p.id, label: `${p.email} (${p.role})` })),
    ...keys.data.map((k) => ({ id: k.user_id, label: `API key ${k.api_key_name || k.api_key_display} (${k.api_key_role})` })),
  ];
}

function fill(g, accounts, perms) {
  state.group = g;
  $('group-title').textContent = `User group #${g.id}: ${g.name}${g.is_default ? ' (default)' : ''}`;
  $('group-name').value = g.name;
  $('group-default-note').hidden = !g.is_default;
  for (const part of $('group-body').querySelectorAll('[data-editable]')) part.hidden = g.is_default;
  fillPermissions(g, perms);
  // A group of the directory: its name and its directory people are the
  // directory's (the server refuses changing them: 409).
  const directory = Boolean(g.is_scim_synced);
  $('group-directory').hidden = !directory;
  $('group-name').readOnly = directory;
  $('group-rename').hidden = directory;
  $('group-delete').hidden = directory;
  const members = $('group-members');
  members.replaceChildren(...g.users.map((u) => {
    if (g.is_default) {
      return el('tr', {}, el('td', {}, personName(u.email), ...(u.is_scim_synced ? [' ', directoryBadge('person')] : [])),
        el('td', {}, el('span', { class: 'badge' }, u.role)),
        el('td', {}, el('span', { class: 'muted' }, 'no curators')), el('td', {}, el('span', { class: 'muted' }, 'by role')));
    }
    const flag = el('input', { type: 'checkbox', checked: g.curator_ids.includes(u.id), 'aria-label': `${u.email} curates ${g.name}`,
      'data-user': u.id });
    flag.addEventListener('change', () => setCurator(u, flag));
    const fixed = directory && u.is_scim_synced;
    const remove = fixed ? el('span', { class: 'muted' }, 'in the directory')
      : el('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${u.email} from the group` }, 'Remove');
    if (!fixed) remove.addEventListener('click', () => patch({ user_ids: g.users.filter((x) => x.id !== u.id).map((x) => x.id) }, `${u.email} left the group.`));
    return el('tr', {},
      el('td', {}, personName(u.email), ...(u.is_scim_synced ? [' ', directoryBadge('person')] : [])),
      el('td', {}, el('span', { class: 'badge' }, u.role)),
      el('td', {}, flag),
      el('td', {}, remove));
  }));
  if (g.users.length === 0) members.replaceChildren(emptyRow(4, 'No members yet: add one below.'));
  const add = $('group-add-user');
  const outside = accounts.filter((a) => !g.users.some((u) => u.id === a.id));
  add.replaceChildren(...(outside.length ? outside.map((a) => el('option', { value: a.id }, a.label)) : [el('option', { value: '' }, 'Everyone is a member')]));
  const pairs = $('group-pairs');
  pairs.replaceChildren(...g.cc_pairs.map((p) => {
    const remove = el('button', { type: 'button', class: 'danger small-button', 'aria-label': `Stop sharing cc-pair ${p.name} with the group` }, 'Stop sharing');
    remove.addEventListener('click', () => patch({ cc_pair_ids: g.cc_pair_ids.filter((x) => x !== p.id) }, `cc-pair #${p.id} is no longer shared with the group.`));
    return el('li', {}, el('a', { href: href('pair', p.id) }, p.name || `cc-pair #${p.id}`),
      ` (#${p.id}) · ${p.connector.name} with ${p.credential.name || `credential #${p.credential.id}`} `, remove);
  }));
  if (g.cc_pairs.length === 0) pairs.replaceChildren(el('li', { class: 'muted' }, 'No cc-pairs are shared with this group.'));
  $('group-body').hidden = false;
}

/** fillPermissions shows what g is granted: the fixed grants as text, a
 * checkbox for each permission that may be granted. */
function fillPermissions(g, perms) {
  const fixed = perms.filter((p) => !toggleable.some(([t]) => t === p));
  $('group-perms-fixed').replaceChildren('Always granted: ', ...fixed.flatMap((p, i) => [i ? ', ' : '', el('code', {}, p)]),
    fixed.length ? '' : 'nothing');
  $('group-perms').replaceChildren(...toggleable.map(([p, what]) => {
    const id = `group-perm-${p.replace(/[^a-z_]/g, '-')}`;
    const box = el('input', { type: 'checkbox', id, checked: perms.includes(p), 'data-permission': p });
    box.addEventListener('change', () => setPermission(p, box));
    return el('div', { class: 'checks' }, box, el('label', { for: id }, el('code', {}, p), ` ${what}`));
  }));
}

async function setPermission(p, box) {
  const err = $('group-error');
  clearError(err);
  $('group-saved').textContent = '';
  const g = state.group;
  try {
    await call('PUT', `manage/admin/user-group/${g.id}/permissions`, { body: { permission: p, enabled: box.checked } });
    status.markStale();
    said($('group-saved'), `${g.name} ${box.checked ? 'now has' : 'no longer has'} ${p}.`);
  } catch (e) {
    box.checked = !box.checked;
    writeError(err, e);
  }
}

/** open shows group id. */
export async function open(id) {
  state.id = id;
  const box = $('group-error');
  clearError(box);
  $('group-saved').textContent = '';
  $('group-body').hidden = true;
  $('group-title').textContent = `User group #${id}`;
  await load();
}

async function load() {
  const id = state.id;
  const view = $('view-group');
  view.setAttribute('aria-busy', 'true');
  try {
    const [{ data }, perms] = await Promise.all([call('GET', 'manage/admin/user-group?include_default=true'),
      call('GET', `manage/admin/user-group/${id}/permissions`).then((r) => r.data).catch(() => [])]);
    if (state.id !== id) return;
    const g = data.find((x) => String(x.id) === String(id));
    if (!g) throw new Error(`User group ${id} does not exist.`);
    const accounts = await candidates(g.is_scim_synced);
    if (state.id !== id) return;
    fill(g, accounts, perms);
  } catch (e) {
    showError($('group-error'), e);
  } finally {
    if (state.id === id) view.setAttribute('aria-busy', 'false');
  }
}

/** patch changes the group, then shows it afresh with message. */
async function patch(body, message) {
  const box = $('group-error');
  clearError(box);
  $('group-saved').textContent = '';
  try {
    await call('PATCH', `manage/admin/user-group/${state.group.id}`, { body });
    status.markStale();
    await load();
    said($('group-saved'), message);
    // A button pressed in a list drawn afresh (Remove, Stop sharing) is
    // gone: the focus goes to the group's title rather than the page's body.
    if (!document.activeElement || document.activeElement === document.body) $('group-title').focus();
  } catch (e) {
    writeError(box, e);
  }
}

async function setCurator(u, box) {
  const err = $('group-error');
  clearError(err);
  $('group-saved').textContent = '';
  try {
    await call('POST', `manage/admin/user-group/${state.group.id}/set-curator`, { body: { user_id: u.id, is_curator: box.checked } });
    status.markStale();
    await load();
    said($('group-saved'), `${u.email} ${box.checked ? 'now curates' : 'no longer curates'} the group.`);
    // The members are drawn afresh: the focus goes back to the flag.
    const flag = $('group-members').querySelector(`input[data-user="${CSS.escape(String(u.id))}"]`);
    if (flag && (!document.activeElement || document.activeElement === document.body)) flag.focus();
  } catch (e) {
    box.checked = !box.checked;
    writeError(err, e);
  }
}

async function addMember(ev) {
  ev.preventDefault();
  const id = $('group-add-user').value;
  if (!id) return;
  const label = $('group-add-user').selectedOptions[0].textContent;
  const box = $('group-error');
  clearError(box);
  await busy($('group-add'), async () => {
    try {
      await call('POST', `manage/admin/user-group/${state.group.id}/add-users`, { body: { user_ids: [id] } });
      status.markStale();
      await load();
      said($('group-saved'), `${label} joined the group.`);
      $('group-add-user').focus();
    } catch (e) {
      writeError(box, e);
    }
  });
}

async function addPair(ev) {
  ev.preventDefault();
  const input = $('group-add-pair');
  const n = Number(input.value);
  if (!Number.isInteger(n) || n < 1) {
    showError($('group-error'), new Error('Enter the id of a cc-pair (see Connector status).'));
    input.focus();
    return;
  }
  await patch({ cc_pair_ids: [...new Set([...state.group.cc_pair_ids, n])] }, `cc-pair #${n} is shared with the group.`);
  input.value = '';
}

async function rename(ev) {
  ev.preventDefault();
  await patch({ name: $('group-name').value.trim() }, 'Renamed.');
}

async function remove() {
  const g = state.group;
  await confirmDelete({
    question: `Delete the group "${g.name}" (#${g.id})? Its members lose what it shared with them; curators who curated only it become basic users.`,
    box: $('group-error'),
    request: () => call('DELETE', `manage/admin/user-group/${g.id}`),
    done: () => {
      status.markStale();
      go('#groups');
    },
  });
}

/** wire connects the controls, once. */
export function wire() {
  $('group-new-form').addEventListener('submit', create);
  $('group-rename-form').addEventListener('submit', rename);
  $('group-delete').addEventListener('click', remove);
  $('group-add-form').addEventListener('submit', addMember);
  $('group-add-pair-form').addEventListener('submit', addPair);
}

export function reset() {
  Object.assign(state, { id: null, group: null });
  $('group-body').hidden = true;
  $('groups-rows').replaceChildren();
}
