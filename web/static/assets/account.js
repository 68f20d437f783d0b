// The signed-in person's own account, and changing their own password
// (POST /auth/change-password: the current one is asked again).

import { call } from './api.js';
import { $, el, showError, clearError, busy, said, fmtTime } from './ui.js';
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
  $('password-current').value = '';
  $('password-new').value = '';
}
