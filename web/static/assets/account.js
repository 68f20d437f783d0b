// The signed-in person's own account, changing their own password
// (POST /auth/change-password: the current one is asked again), the
// accounts they connected for custom tools (GET user-oauth-token/status,
// DELETE oauth-config/{id}/token), how to connect an MCP client to Quarry
// (the address of /mcp), and their personal access tokens (GET, POST
// user/pats, DELETE user/pats/{id}; GET user/pats/scopes).

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, said, fmtTime, emptyRow, confirmAction, confirmDelete,
  secretBox, loadingRow, uid } from './ui.js';
import { session } from './session.js';

/** mcpURL is the address of Quarry's MCP endpoint, next to this page (a base path included). */
const mcpURL = () => new URL('mcp', location.origin + location.pathname).href;

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
  $('mcp-client').hidden = me.role === 'limited';
  $('pats').hidden = me.role === 'limited';
  if (me.role !== 'limited') {
    mcpClient();
    pats();
  }
}

/** mcpClient shows the address of /mcp and a client's configuration with it. */
async function mcpClient() {
  const url = mcpURL();
  $('mcp-client-url').value = url;
  $('mcp-client-copied').textContent = '';
  $('mcp-client-config').textContent = JSON.stringify({
    mcpServers: { quarry: { type: 'http', url, headers: { Authorization: 'Bearer <your personal access token>' } } },
  }, null, 2);
  const sso = $('mcp-client-sso');
  sso.hidden = true;
  try {
    const { data } = await call('GET', 'auth/type');
    if (data && data.oidc) {
      sso.textContent = `A client that signs in with OAuth by itself can sign you in with ${data.oidc.display_name || 'single sign-on'} ` +
        'instead of a token, once an admin has registered it with the identity provider.';
      sso.hidden = false;
    }
  } catch {
    // The address and tokens are enough.
  }
}

/** scopeOptions are the scopes a token may have (GET user/pats/scopes), once loaded. */
let scopeOptions = [];

/** pats lists the person's tokens and fills the scopes of the form. */
async function pats() {
  const box = $('pats-error');
  clearError(box);
  // A key (or a token) cannot make tokens: only a person signed in can.
  $('pat-form').hidden = session.withKey;
  const tbody = $('pats-rows');
  tbody.replaceChildren(loadingRow(4, 'Loading your tokens…'));
  try {
    const [{ data }, scopes] = await Promise.all([call('GET', 'user/pats'),
      scopeOptions.length ? Promise.resolve({ data: scopeOptions }) : call('GET', 'user/pats/scopes')]);
    if (!scopeOptions.length) {
      scopeOptions = scopes.data;
      $('pat-scopes').replaceChildren(...scopeOptions.map((o) => {
        const id = uid('pat-scope');
        const what = `${o.group_label}: ${o.label}`;
        return el('div', { class: 'checks' }, el('input', { type: 'checkbox', id, 'data-scope': o.scope }),
          el('label', { for: id }, el('code', {}, o.scope), ` ${what} `, el('span', { class: 'muted' }, `(${o.description})`)));
      }));
    }
    tbody.replaceChildren(...data.map((t) => {
      const revoke = el('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${t.name}` }, 'Revoke');
      revoke.addEventListener('click', () => revokePAT(t, revoke));
      return el('tr', {},
        el('td', {}, t.name, el('div', {}, el('code', { class: 'small' }, t.token_display))),
        el('td', {}, t.scopes === null ? el('span', { class: 'muted' }, 'all your rights') : t.scopes.join(', ')),
        el('td', {}, t.expires_at ? fmtTime(t.expires_at) : 'never',
          el('div', { class: 'muted small' }, t.last_used_at ? `used ${fmtTime(t.last_used_at)}` : 'not used yet')),
        el('td', { class: 'actions' }, revoke));
    }));
    if (data.length === 0) tbody.replaceChildren(emptyRow(4, 'No tokens yet.'));
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  }
}

/** makePAT makes a token and shows it once. */
async function makePAT(ev) {
  ev.preventDefault();
  const box = $('pats-error');
  clearError(box);
  $('pats-done').textContent = '';
  const name = $('pat-name');
  const days = $('pat-expiry').value;
  const scoped = !$('pat-unscoped').checked;
  const body = { name: name.value.trim(), expiration_days: days === '' ? null : Number(days) };
  if (scoped) body.scopes = [...$('pat-scopes').querySelectorAll('input:checked')].map((i) => i.dataset.scope);
  await busy($('pat-create'), async () => {
    try {
      const { data } = await call('POST', 'user/pats', { body });
      name.value = '';
      name.removeAttribute('aria-invalid');
      await pats();
      secretBox($('pats-secret'), `New token: ${data.name}`, data.token,
        'Copy it now: it is not shown again. Put it in your MCP client as "Authorization: Bearer <token>".');
    } catch (e) {
      if (e.status === 422) name.setAttribute('aria-invalid', 'true');
      writeError(box, e.status === 422 ? new Error('Give the token a name of 1 to 100 characters.') : e);
    }
  });
}

async function revokePAT(t, button) {
  await confirmDelete({
    question: `Revoke the token ${t.name}? Whatever uses it stops working at once.`,
    yes: 'Revoke',
    box: $('pats-error'),
    button,
    request: () => call('DELETE', `user/pats/${t.id}`),
    done: async () => {
      $('pats-secret').hidden = true;
      await pats();
      said($('pats-done'), `The token ${t.name} is revoked.`);
      $('pats-title').focus();
    },
  });
}

async function copyURL() {
  const url = $('mcp-client-url');
  try {
    await navigator.clipboard.writeText(url.value);
    $('mcp-client-copied').textContent = 'Copied.';
  } catch {
    url.select();
    $('mcp-client-copied').textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
  }
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
  $('pat-form').addEventListener('submit', makePAT);
  $('pat-unscoped').addEventListener('change', () => { $('pat-scopes').hidden = $('pat-unscoped').checked; });
  $('mcp-client-copy').addEventListener('click', copyURL);
}

export function reset() {
  $('account-facts').replaceChildren();
  $('connections-rows').replaceChildren();
  $('connections-done').textContent = '';
  $('password-current').value = '';
  $('password-new').value = '';
  $('pats-rows').replaceChildren();
  $('pats-secret').hidden = true;
  $('pats-secret').replaceChildren();
  $('pat-name').value = '';
}
