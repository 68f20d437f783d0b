// API keys (admins): each is its own service account with the key's role.
// A key is shown once, when it is made or regenerated, with a copy button.
// Beside them, the company's directory's SCIM token
// (/admin/enterprise-settings/scim/token): made (shown once), revoked.

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, confirmAction, confirmDelete, loadingRow, emptyRow,
  secretBox, fmtTime } from './ui.js';

/** list shows every key, and the SCIM token. */
export async function list() {
  await Promise.all([keys(), scimToken()]);
}

async function keys() {
  const box = $('keys-error');
  clearError(box);
  const tbody = $('keys-rows');
  tbody.replaceChildren(loadingRow(5, 'Loading API keys…'));
  try {
    const { data } = await call('GET', 'admin/api-key');
    tbody.replaceChildren(...data.map((k) => {
      const name = k.api_key_name || `key #${k.api_key_id}`;
      const regen = el('button', { type: 'button', class: 'secondary', 'aria-label': `Regenerate ${name}` }, 'Regenerate');
      regen.addEventListener('click', () => regenerate(k, name, regen));
      const revoke = el('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${name}` }, 'Revoke');
      revoke.addEventListener('click', () => remove(k, name, revoke));
      return el('tr', {},
        el('td', { class: 'num' }, String(k.api_key_id)),
        el('td', {}, k.api_key_name ?? el('span', { class: 'muted' }, 'unnamed')),
        el('td', {}, el('code', {}, k.api_key_display)),
        el('td', {}, el('span', { class: 'badge' }, k.api_key_role)),
        el('td', { class: 'actions' }, regen, revoke));
    }));
    if (data.length === 0) tbody.replaceChildren(emptyRow(5, 'No API keys yet: name one above.'));
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  }
}

function shown(k, what) {
  secretBox($('keys-secret'), `${what}: ${k.api_key_name || `key #${k.api_key_id}`}`, k.api_key,
    'Copy it now: it is not shown again. Send it as "Authorization: Bearer <key>".');
}

async function create(ev) {
  ev.preventDefault();
  const box = $('keys-error');
  clearError(box);
  const name = $('key-name').value.trim();
  await busy($('key-create'), async () => {
    try {
      const { data } = await call('POST', 'admin/api-key', { body: { name: name === '' ? null : name, role: $('key-role').value } });
      $('key-name').value = '';
      await keys();
      shown(data, 'New API key');
    } catch (e) {
      writeError(box, e);
    }
  });
}

async function regenerate(k, name, button) {
  if (!(await confirmAction(`Regenerate ${name}? The current key stops working at once.`, 'Regenerate'))) return;
  const box = $('keys-error');
  clearError(box);
  await busy(button, async () => {
    try {
      const { data } = await call('POST', `admin/api-key/${k.api_key_id}/regenerate`);
      await keys();
      shown(data, 'Regenerated API key');
    } catch (e) {
      writeError(box, e);
    }
  });
}

async function remove(k, name, button) {
  await confirmDelete({
    question: `Revoke ${name}? It stops working at once; what its account owns keeps its owner.`,
    yes: 'Revoke',
    box: $('keys-error'),
    button,
    request: () => call('DELETE', `admin/api-key/${k.api_key_id}`),
    done: async () => {
      $('keys-secret').hidden = true;
      await keys();
      // Its row, and the button pressed, are gone.
      $('keys-title').focus();
    },
  });
}

/** scimToken shows the active SCIM token's metadata, never the token. */
async function scimToken() {
  const box = $('scim-error');
  clearError(box);
  $('scim-base').textContent = new URL('scim/v2', location.href).href;
  try {
    const { data } = await call('GET', 'admin/enterprise-settings/scim/token');
    const facts = data === null
      ? [el('dt', {}, 'Token'), el('dd', {}, el('span', { class: 'muted' }, 'none: the directory provisions nothing'))]
      : [el('dt', {}, 'Token'), el('dd', {}, el('code', {}, data.token_display), ` (${data.name})`),
        el('dt', {}, 'Made'), el('dd', {}, fmtTime(data.created_at)),
        el('dt', {}, 'Last used'), el('dd', {}, data.last_used_at ? fmtTime(data.last_used_at) : el('span', { class: 'muted' }, 'never')),
        ...(data.idp_domain ? [el('dt', {}, 'People of'), el('dd', {}, data.idp_domain)] : [])];
    $('scim-facts').replaceChildren(...facts);
    $('scim-revoke').hidden = data === null;
    $('scim-create').textContent = data === null ? 'Make a SCIM token' : 'Make a new SCIM token';
  } catch (e) {
    showError(box, e);
  }
}

async function createSCIM(ev) {
  ev.preventDefault();
  if (!$('scim-revoke').hidden && !(await confirmAction('Make a new SCIM token? The current one stops working at once: give the new one to your identity provider.', 'Make a new token'))) return;
  const box = $('scim-error');
  clearError(box);
  await busy($('scim-create'), async () => {
    try {
      const { data } = await call('POST', 'admin/enterprise-settings/scim/token', { body: { name: $('scim-name').value.trim() || 'Identity provider' } });
      await scimToken();
      secretBox($('scim-secret'), `SCIM token: ${data.name}`, data.raw_token,
        'Copy it now: it is not shown again. Give it to your identity provider with the SCIM base URL above.');
    } catch (e) {
      writeError(box, e);
    }
  });
}

async function revokeSCIM() {
  await confirmDelete({
    question: 'Revoke the SCIM token? The directory can change nothing until you make a new one; what it manages stays its.',
    yes: 'Revoke',
    box: $('scim-error'),
    button: $('scim-revoke'),
    request: () => call('DELETE', 'admin/enterprise-settings/scim/token'),
    done: async () => {
      $('scim-secret').hidden = true;
      await scimToken();
      $('scim-title').focus();
    },
  });
}

/** wire connects the controls, once. */
export function wire() {
  $('key-form').addEventListener('submit', create);
  $('scim-form').addEventListener('submit', createSCIM);
  $('scim-revoke').addEventListener('click', revokeSCIM);
}

export function reset() {
  $('keys-rows').replaceChildren();
  $('keys-secret').hidden = true;
  $('keys-secret').replaceChildren();
  $('scim-facts').replaceChildren();
  $('scim-secret').hidden = true;
  $('scim-secret').replaceChildren();
}
