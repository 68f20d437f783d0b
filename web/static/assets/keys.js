// API keys (admins): each is its own service account with the key's role.
// A key is shown once, when it is made or regenerated, with a copy button.

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, confirmAction, confirmDelete, loadingRow, emptyRow,
  secretBox } from './ui.js';

/** list shows every key. */
export async function list() {
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
      await list();
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
      await list();
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
      await list();
      // Its row, and the button pressed, are gone.
      $('keys-title').focus();
    },
  });
}

/** wire connects the controls, once. */
export function wire() {
  $('key-form').addEventListener('submit', create);
}

export function reset() {
  $('keys-rows').replaceChildren();
  $('keys-secret').hidden = true;
  $('keys-secret').replaceChildren();
}
