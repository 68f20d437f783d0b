// The signed-in person's own account, changing their own password
// (POST /auth/change-password: the current one is asked again), and the
// accounts they connected for custom tools (GET user-oauth-token/status,
// DELETE oauth-config/{id}/token).

import { call } from './api.js';
import { $, el, showError, clearError, busy, said, fmtTime, emptyRow, confirmAction } from './ui.js';
import { session } from './session.js';

/** show shows the account of /me. */
export function show() {
  const me = session.me;
  const fact = (t, ...d) => [el('dt', {}, t), el('dd', {}, ...d)];
  $('account-facts').replaceChildren(
    ...fact('Email', me.email),
    ...fact('Name', me.name ?? el('span', { class: 'muted' }, 'none')),
    ...fact('Role', el('span', { class: 'badge' }, me.role)),
    ...fact('Groups', me.groups.length ? me.groups.map((g) => `#${g}`).join(', ') : el('span', { class: 'muted' }, 'none')),
    ...fact('Signed in with', session.withKey ? 'an API key (kept in this tab only)' : 'a session (this browser)'),
    ...fact('Account made', fmtTime(me.created_at)),
  );
  clearError($('password-error'));
  $('password-done').textContent = '';
  // An API key's account has no password.
  $('password-form').hidden = session.withKey || me.service_account;
  $('connections').hidden = me.role === 'limited';
  if (me.role !== 'limited') connections();
}

/** connections lists the accounts the person connected for tools. */
async function connections() {
  const box = $('connections-error');
  clearError(box);
  const tbody = $('connections-rows');
  try {
    const { data } = await call('GET', 'user-oauth-token/status');
    tbody.replaceChildren(...data.map((c) => {
      const name = c.oauth_config_name || `OAuth configuration #${c.oauth_config_id}`;
      const off = el('button', { type: 'button', class: 'secondary', 'aria-label': `Disconnect ${name}` }, 'Disconnect');
      off.addEventListener('click', async () => {
        if (!(await confirmAction(`Disconnect your ${name} account? Tools that use it stop working for you until you connect again.`, 'Disconnect'))) return;
        clearError(box);
        await busy(off, async () => {
          try {
            await call('DELETE', `oauth-config/${c.oauth_config_id}/token`);
            said($('connections-done'), `Your ${name} account is disconnected.`);
            await connections();
            $('connections-title').focus();
          } catch (e) {
            showError(box, e);
          }
        });
      });
      const exp = c.expires_at ? fmtTime(new Date(c.expires_at * 1000).toISOString()) : 'not said';
      return el('tr', {}, el('td', {}, name), el('td', {}, exp, c.is_expired ? ' ' : null,
        c.is_expired ? el('span', { class: 'badge' }, 'expired') : null), el('td', {}, off));
    }));
    if (data.length === 0) tbody.replaceChildren(emptyRow(3, 'No connected accounts. Connect one from the page of a tool that uses OAuth.'));
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  }
}

async function change(ev) {
  ev.preventDefault();
  const box = $('password-error');
  clearError(box);
  $('password-done').textContent = '';
  const current = $('password-current');
  const next = $('password-new');
  await busy($('password-save'), async () => {
    try {
      await call('POST', 'auth/change-password', { body: { current_password: current.value, new_password: next.value } });
      current.value = '';
      next.value = '';
      next.removeAttribute('aria-invalid');
      said($('password-done'), 'Your password is changed. Your other sessions ended; this one goes on.');
    } catch (e) {
      showError(box, e.status === 422 ? new Error('Enter your current password and a new one.') : e);
      (e.status === 400 && /current/i.test(String(e.detail)) ? current : next).setAttribute('aria-invalid', 'true');
    }
  });
}

/** wire connects the controls, once. */
export function wire() {
  $('password-form').addEventListener('submit', change);
}

export function reset() {
  $('account-facts').replaceChildren();
  $('connections-rows').replaceChildren();
  $('connections-done').textContent = '';
  $('password-current').value = '';
  $('password-new').value = '';
}
