// A sync pair's permission syncing in its view: when its permissions and
// its groups were last synced (GET /manage/admin/cc-pair/{id}/
// sync-permissions and …/sync-groups), what the pair's page says of its
// newest permission sync (permission_syncing, last_permission_sync_
// attempt_*: one that runs, one that failed and why), and a sync of each
// kind asked for (POST …/sync-permissions, …/sync-groups). Pairs of the
// other access types do not show it.

import { call } from './api.js';
import { $, showError, busy, said, fmtTime } from './ui.js';

const state = { id: null, asked: () => {}, last: { 'sync-permissions': null, 'sync-groups': null } };

/** The two kinds of syncs: their route, their button and their words. */
const kinds = [
  { path: 'sync-permissions', button: 'pair-sync-perms', what: 'permission sync', last: 'Permissions last synced', never: 'Permissions never synced.' },
  { path: 'sync-groups', button: 'pair-sync-groups', what: 'group sync', last: 'Groups last synced', never: 'Groups never synced.' },
];

/**
 * syncState says what pair p's page and the last syncs say of its
 * permission syncing: when each kind last succeeded, a permission sync
 * that runs, or the newest one's failure in its own words.
 */
function syncState(p) {
  const box = $('pair-sync-state');
  const parts = kinds.map((k) => (state.last[k.path] ? `${k.last} ${fmtTime(state.last[k.path])}.` : k.never));
  let failed = false;
  if (p.permission_syncing) parts.push('A permission sync is running.');
  else if (p.last_permission_sync_attempt_status === 'not_started') parts.push('A permission sync waits for a worker.');
  else if (p.last_permission_sync_attempt_error_message) {
    failed = true;
    const why = p.last_permission_sync_attempt_error_message.trim();
    parts.push(`The last permission sync (${p.last_permission_sync_attempt_status}, ${fmtTime(p.last_permission_sync_attempt_finished)}) ` +
      `did not sync: ${why}${/[.!?]$/.test(why) ? '' : '.'}`);
  }
  const text = parts.join(' ');
  box.className = failed ? 'error-text' : '';
  if (box.textContent !== text) box.textContent = text;
}

/** loadLast reads when pair id's syncs of each kind last succeeded. */
async function loadLast(id) {
  const answers = await Promise.all(kinds.map((k) => call('GET', `manage/admin/cc-pair/${encodeURIComponent(id)}/${k.path}`)));
  if (state.id !== id) return;
  kinds.forEach((k, i) => { state.last[k.path] = answers[i].data; });
}

/** ask asks for a sync of kind k of the pair. */
async function ask(k) {
  const id = state.id;
  await busy($(k.button), async () => {
    try {
      await call('POST', `manage/admin/cc-pair/${encodeURIComponent(id)}/${k.path}`);
      said($('pair-sync-done'), `Asked for a ${k.what}: the scheduler makes it shortly, after the pair's current attempt if any.`);
      state.asked();
    } catch (e) {
      if (e.status === 409) said($('pair-sync-done'), `A ${k.what} of this pair waits or runs already.`);
      else showError($('pair-error'), e);
    }
  });
}

/**
 * open shows the permission syncing of pair id, of its page p (editable:
 * it may ask for syncs); hidden unless p is a sync pair.
 */
export async function open(id, p, { editable = false } = {}) {
  const sync = p.access_type === 'sync';
  $('pair-sync-box').hidden = !sync;
  if (state.id !== id) {
    $('pair-sync-done').textContent = '';
    $('pair-sync-state').textContent = '';
    state.last = { 'sync-permissions': null, 'sync-groups': null };
  }
  state.id = id;
  if (!sync) return;
  $('pair-sync-buttons').hidden = !editable;
  $('pair-sync-hint').hidden = !editable;
  try {
    await loadLast(id);
  } catch (e) {
    showError($('pair-error'), e);
  }
  if (state.id === id) syncState(p);
}

/** synced shows the permission syncing of pair p's page, fetched again by the pair's view. */
export async function synced(p) {
  if (state.id !== p.id || p.access_type !== 'sync') return;
  await loadLast(p.id);
  if (state.id === p.id) syncState(p);
}

/**
 * wire connects the controls, once; asked is called when a sync was
 * asked for, so that the pair's view follows it.
 */
export function wire(asked) {
  state.asked = asked;
  for (const k of kinds) $(k.button).addEventListener('click', () => ask(k));
}

export function reset() {
  Object.assign(state, { id: null, last: { 'sync-permissions': null, 'sync-groups': null } });
  $('pair-sync-state').textContent = '';
  $('pair-sync-done').textContent = '';
  $('pair-sync-box').hidden = true;
}
