// People (admins): the people (GET /manage/users/accepted), their roles
// (PATCH /manage/set-user-role), deactivated and activated, their
// passwords reset (shown once) and sessions ended; invitations; every
// signed-in session.

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, said, confirmAction, loadingRow, emptyRow, fmtInt, fmtTime, secretBox, keepFocus } from './ui.js';
import { session } from './session.js';
import { setParams } from './route.js';
import { directoryBadge } from './groups.js';

const pageSize = 25;
const roles = ['admin', 'global_curator', 'basic', 'limited'];
const state = { page: 0, total: 0, q: '', status: '' };

/** show lists people, invitations and sessions, in the state params say. */
export async function show(params) {
  state.q = params.get('q') || '';
  state.status = ['live', 'deactivated'].includes(params.get('status')) ? params.get('status') : '';
  const page = Number.parseInt(params.get('page') || '1', 10);
  state.page = Number.isFinite(page) && page > 0 ? page - 1 : 0;
  $('people-q').value = state.q;
  $('people-status').value = state.status;
  clearError($('people-error'));
  $('people-done').textContent = '';
  await Promise.all([people(), invitations(), sessions()]);
}

function record(push = true) {
  setParams('people', { q: state.q, status: state.status, page: state.page ? state.page + 1 : '' }, { push });
}

/**
 * refocus puts the focus, lost when the lists are drawn afresh, on the new
 * control with the first of labels that is there (a person's role, or the
 * button that took the place of the one pressed), as it was before.
 */
function refocus(...labels) {
  if (document.activeElement && document.activeElement !== document.body) return;
  const controls = [...$('people-rows').querySelectorAll('[aria-label]')];
  for (const label of labels) {
    const c = controls.find((e) => e.getAttribute('aria-label') === label && !e.hidden);
    if (c) {
      c.focus();
      return;
    }
  }
}

/** done says what happened, and shows the lists afresh. */
async function done(message) {
  await Promise.all([people(), invitations(), sessions()]);
  said($('people-done'), message);
}

async function people() {
  const tbody = $('people-rows');
  tbody.replaceChildren(loadingRow(7, 'Loading people…'));
  const q = new URLSearchParams({ page: String(state.page + 1), page_size: String(pageSize) });
  if (state.q) q.set('q', state.q);
  if (state.status) q.set('status', state.status);
  try {
    const { data } = await call('GET', `manage/users/accepted?${q}`);
    state.total = data.total_items;
    tbody.replaceChildren(...data.items.map(personRow));
    if (data.items.length === 0) tbody.replaceChildren(emptyRow(7, state.q || state.status ? 'Nobody matches.' : 'Nobody has signed in yet.'));
    const pages = Math.max(1, Math.ceil(state.total / pageSize));
    $('people-page').textContent = `Page ${fmtInt(state.page + 1)} of ${fmtInt(pages)}`;
    $('people-summary').textContent = `${fmtInt(state.total)} ${state.total === 1 ? 'person' : 'people'}.`;
    $('people-prev').disabled = state.page === 0;
    $('people-next').disabled = state.page >= pages - 1;
  } catch (e) {
    tbody.replaceChildren();
    showError($('people-error'), e);
  }
}

function personRow(p) {
  const self = session.me && session.me.id === p.id;
  const role = el('select', { 'aria-label': `Role of ${p.email}` },
    ...[...new Set([...roles, p.role])].map((r) => el('option', { value: r }, r)));
  role.value = p.role;
  role.addEventListener('change', () => setRole(p, role));
  const active = el('button', { type: 'button', class: p.is_active ? 'danger' : 'secondary' }, p.is_active ? 'Deactivate' : 'Activate');
  active.setAttribute('aria-label', `${p.is_active ? 'Deactivate' : 'Activate'} ${p.email}`);
  active.hidden = self;
  active.addEventListener('click', () => setActive(p, active));
  // The directory deactivated them: they are activated there (the server
  // refuses it here: 409).
  const byDirectory = p.is_scim_synced && !p.is_active && p.scim_active === false;
  const activation = byDirectory ? el('span', { class: 'muted' }, 'activated in the directory') : active;
  const reset = el('button', { type: 'button', class: 'secondary', 'aria-label': `Reset password of ${p.email}` }, 'Reset password');
  reset.addEventListener('click', () => resetPassword(p, reset));
  const end = el('button', { type: 'button', class: 'secondary', 'aria-label': `End sessions of ${p.email}` }, 'End sessions');
  end.addEventListener('click', () => endSessions(p, end));
  const how = [p.password_configured ? 'password' : null, ...p.sso_issuers.map((i) => `single sign-on (${hostOf(i)})`)].filter(Boolean);
  return el('tr', {},
    el('td', {}, p.email, self ? el('span', { class: 'muted' }, ' (you)') : null, ...(p.is_scim_synced ? [' ', directoryBadge('person')] : [])),
    el('td', {}, p.personal_name ?? ''),
    el('td', {}, role),
    el('td', {}, el('span', { class: `badge ${p.is_active ? 'active' : 'paused'}` }, p.is_active ? 'active' : byDirectory ? 'deactivated by the directory' : 'deactivated')),
    el('td', {}, how.join(', ') || el('span', { class: 'muted' }, 'nothing yet')),
    el('td', {}, p.groups.map((g) => g.name).join(', ') || el('span', { class: 'muted' }, 'none')),
    el('td', { class: 'actions' }, activation, reset, end));
}

function hostOf(u) {
  try {
    return new URL(u).host;
  } catch {
    return u;
  }
}

async function setRole(p, select) {
  clearError($('people-error'));
  try {
    await call('PATCH', 'manage/set-user-role', { body: { user_email: p.email, new_role: select.value } });
    await done(`${p.email} is now ${select.value}.`);
    refocus(`Role of ${p.email}`);
  } catch (e) {
    select.value = p.role;
    writeError($('people-error'), e);
  }
}

async function setActive(p, button) {
  const path = p.is_active ? 'manage/admin/deactivate-user' : 'manage/admin/activate-user';
  const warning = p.is_scim_synced ? ' The company\'s directory manages them: deactivate them there too, or its next sync may activate them again.' : '';
  if (p.is_active && !(await confirmAction(`Deactivate ${p.email}? Their sessions and API keys stop working at once; what they own keeps its owner.${warning}`, 'Deactivate'))) return;
  clearError($('people-error'));
  await busy(button, async () => {
    try {
      await call('PATCH', path, { body: { user_email: p.email } });
      await done(`${p.email} is ${p.is_active ? 'deactivated' : 'active again'}.`);
      refocus(`${p.is_active ? 'Activate' : 'Deactivate'} ${p.email}`);
    } catch (e) {
      writeError($('people-error'), e);
    }
  });
}

async function resetPassword(p, button) {
  if (!(await confirmAction(`Give ${p.email} a new random password? Their sessions end; you hand the password over.`, 'Reset password'))) return;
  clearError($('people-error'));
  await busy(button, async () => {
    try {
      const { data } = await call('POST', 'manage/admin/reset-password', { body: { user_email: p.email } });
      await done(`${p.email} has a new password.`);
      secretBox($('people-secret'), `New password of ${p.email}`, data.new_password,
        'Hand it to them over a safe channel; it is not shown again. They can change it under Your account.');
    } catch (e) {
      writeError($('people-error'), e);
    }
  });
}

async function endSessions(p, button) {
  clearError($('people-error'));
  await busy(button, async () => {
    try {
      const { data } = await call('POST', 'manage/admin/end-user-sessions', { body: { user_email: p.email } });
      const n = data && typeof data.ended === 'number' ? data.ended : null;
      await done(n === null ? `${p.email}'s sessions ended.` : `${p.email}: ${n} session${n === 1 ? '' : 's'} ended.`);
      refocus(`End sessions of ${p.email}`);
    } catch (e) {
      writeError($('people-error'), e);
    }
  });
}

async function invitations() {
  const tbody = $('invites-rows');
  try {
    const { data } = await call('GET', 'manage/users/invited');
    tbody.replaceChildren(...data.map((i) => {
      const remove = el('button', { type: 'button', class: 'danger', 'aria-label': `Withdraw the invitation of ${i.email}` }, 'Withdraw');
      remove.addEventListener('click', async () => {
        clearError($('people-error'));
        try {
          await call('PATCH', 'manage/admin/remove-invited-user', { body: { user_email: i.email } });
          await done(`The invitation of ${i.email} is withdrawn.`);
        } catch (e) {
          writeError($('people-error'), e);
        }
      });
      const renew = el('button', { type: 'button', class: 'secondary', 'aria-label': `A new link for ${i.email}` }, 'New link');
      renew.addEventListener('click', () => issueLinks([i.email], renew));
      const link = i.expires_at === null ? el('span', { class: 'muted' }, 'no link yet')
        : new Date(i.expires_at) <= new Date() ? el('span', { class: 'muted' }, `expired ${fmtTime(i.expires_at)}`)
          : fmtTime(i.expires_at);
      return el('tr', {}, el('td', {}, i.email), el('td', {}, i.invited_by ?? ''), el('td', {}, fmtTime(i.created_at)),
        el('td', {}, link), el('td', { class: 'actions' }, renew, remove));
    }));
    if (data.length === 0) tbody.replaceChildren(emptyRow(5, 'No invitation is waiting.'));
  } catch (e) {
    tbody.replaceChildren();
    showError($('people-error'), e);
  }
}

async function invite(ev) {
  ev.preventDefault();
  const emails = $('invite-emails').value.split(/[\s,;]+/).filter(Boolean);
  clearError($('people-error'));
  if (emails.length === 0) {
    showError($('people-error'), new Error('Enter at least one email.'));
    $('invite-emails').focus();
    return;
  }
  await issueLinks(emails, $('invite-send'), () => { $('invite-emails').value = ''; });
}

/**
 * issueLinks invites emails with a new link each (one given before stops
 * working) and shows the links, once: by invitation, only a link opens
 * registration.
 */
async function issueLinks(emails, button, then = () => {}) {
  clearError($('people-error'));
  await busy(button, async () => {
    try {
      const { data } = await call('POST', 'manage/admin/invitations', { body: { emails } });
      then();
      await done(`Invited ${emails.join(', ')}: send each the link below; it works once, until ${fmtTime(data[0]?.expires_at)}.`);
      const box = $('invite-links');
      box.replaceChildren(...data.map((l, i) => el('div', { id: `invite-link-${i}`, class: 'secret' })));
      data.forEach((l, i) => secretBox($(`invite-link-${i}`), `Invitation link of ${l.email}`, new URL(l.url, location.href).href,
        'Copy it now: it is not shown again. Whoever opens it can create the account of this email, once.'));
      box.hidden = false;
    } catch (e) {
      writeError($('people-error'), e);
    }
  });
}

async function sessions() {
  const tbody = $('sessions-rows');
  try {
    const { data } = await call('GET', 'manage/admin/sessions');
    tbody.replaceChildren(...data.map((s) => {
      const end = el('button', { type: 'button', class: 'danger', 'aria-label': `End the session of ${s.user_email} from ${fmtTime(s.created_at)}` }, 'End');
      end.addEventListener('click', async () => {
        clearError($('people-error'));
        try {
          await call('DELETE', `manage/admin/sessions/${s.id}`);
          await done(`A session of ${s.user_email} ended.`);
        } catch (e) {
          writeError($('people-error'), e);
        }
      });
      return el('tr', {},
        el('td', {}, s.user_email),
        el('td', {}, s.method === 'oidc' ? 'single sign-on' : 'password'),
        el('td', {}, el('span', { title: s.user_agent }, s.ip)),
        el('td', {}, fmtTime(s.created_at)),
        el('td', {}, fmtTime(s.last_seen_at)),
        el('td', {}, fmtTime(s.expires_at)),
        el('td', {}, end));
    }));
    if (data.length === 0) tbody.replaceChildren(emptyRow(7, 'Nobody is signed in with a session.'));
  } catch (e) {
    tbody.replaceChildren();
    showError($('people-error'), e);
  }
}

/** wire connects the controls, once. */
export function wire() {
  $('people-filters').addEventListener('submit', (e) => {
    e.preventDefault();
    state.q = $('people-q').value.trim();
    state.status = $('people-status').value;
    state.page = 0;
    record();
    people();
  });
  $('people-status').addEventListener('change', () => $('people-filters').requestSubmit());
  $('people-prev').addEventListener('click', async () => {
    state.page -= 1;
    record();
    await people();
    keepFocus($('people-prev'), $('people-next'));
  });
  $('people-next').addEventListener('click', async () => {
    state.page += 1;
    record();
    await people();
    keepFocus($('people-next'), $('people-prev'));
  });
  $('invite-form').addEventListener('submit', invite);
}

export function reset() {
  $('people-rows').replaceChildren();
  $('invites-rows').replaceChildren();
  $('sessions-rows').replaceChildren();
  $('people-secret').hidden = true;
  $('people-secret').replaceChildren();
  $('invite-links').hidden = true;
  $('invite-links').replaceChildren();
}
