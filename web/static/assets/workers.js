// Workers (admins): the processes that run index attempts (GET
// /admin/workers), revoked with DELETE /admin/worker/{id}; and the
// registration tokens that make them (GET /admin/worker/registration-tokens),
// made with POST /admin/worker/registration-token (shown once, with the
// command that starts a worker with it) and revoked with DELETE
// /admin/worker/registration-token/{id}.

import { call } from './api.js';
import { session } from './session.js';
import { $, el, showError, clearError, writeError, busy, said, confirmDelete, loadingRow, emptyRow, secretBox,
  fmtInt, fmtTime, ago, uid } from './ui.js';

/** list shows the workers and the registration tokens. */
export async function list() {
  $('workers-done').textContent = '';
  await Promise.all([workers(), registrations()]);
}

/** serverURL is the address a worker is given: this page's origin and base path. */
export function serverURL() {
  return new URL('.', location.href).href.replace(/\/$/, '');
}

/** whose names the admin a record gives by user id: "you", or the id's start. */
const whose = (id) => (session.me && id === session.me.id ? 'you' : `user ${String(id).slice(0, 8)}…`);

/** when renders a time and how long ago it was. */
const when = (t) => (t ? [fmtTime(t), el('br'), el('span', { class: 'muted small' }, ago(t))] : [el('span', { class: 'muted' }, 'never')]);

async function workers() {
  const box = $('workers-error');
  clearError(box);
  const tbody = $('workers-rows');
  if (!tbody.children.length) tbody.replaceChildren(loadingRow(8, 'Loading workers…'));
  const view = $('view-workers');
  view.setAttribute('aria-busy', 'true');
  try {
    const { data } = await call('GET', 'admin/workers');
    tbody.replaceChildren(...data.map((w) => {
      const name = w.name || `worker #${w.id}`;
      let revoke = null;
      if (!w.revoked_at) {
        revoke = el('button', { type: 'button', class: 'danger', 'aria-label': `Revoke worker ${name}` }, 'Revoke');
        revoke.addEventListener('click', () => revokeWorker(w, name, revoke));
      }
      const held = w.attempt_ids || [];
      return el('tr', { 'data-worker': w.id },
        el('td', { class: 'num' }, String(w.id)),
        el('td', { class: 'wrap' }, name),
        el('td', {}, w.in_process ? el('span', { class: 'badge' }, 'in process') : el('span', { class: 'badge' }, 'quarry worker')),
        el('td', { class: 'nowrap' }, fmtTime(w.time_created), w.created_by ? el('br') : null,
          w.created_by ? el('span', { class: 'muted small', title: `user id ${w.created_by}` }, `with a token of ${whose(w.created_by)}`) : null),
        el('td', { class: 'nowrap' }, ...when(w.last_seen)),
        el('td', {}, held.length ? held.map((id) => `#${id}`).join(', ') : el('span', { class: 'muted' }, 'none')),
        el('td', {}, ...(w.revoked_at
          ? [el('span', { class: 'badge failed' }, 'revoked'), ' ', el('span', { class: 'muted small' }, fmtTime(w.revoked_at))]
          : [el('span', { class: 'badge active' }, 'active')])),
        el('td', { class: 'actions' }, revoke));
    }));
    if (data.length === 0) {
      tbody.replaceChildren(emptyRow(8, 'No workers yet. quarry serve registers its own when it starts; start more with a registration token below.'));
    }
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  } finally {
    view.setAttribute('aria-busy', 'false');
  }
}

async function registrations() {
  const box = $('registrations-error');
  clearError(box);
  const tbody = $('registrations-rows');
  if (!tbody.children.length) tbody.replaceChildren(loadingRow(8, 'Loading registration tokens…'));
  try {
    const { data } = await call('GET', 'admin/worker/registration-tokens');
    const now = Date.now();
    tbody.replaceChildren(...data.map((r) => {
      const name = r.name || `registration token #${r.id}`;
      const expired = new Date(r.expires_at).getTime() <= now;
      let revoke = null;
      if (!r.revoked_at && !expired) {
        revoke = el('button', { type: 'button', class: 'danger', 'aria-label': `Revoke registration token ${name}` }, 'Revoke');
        revoke.addEventListener('click', () => revokeRegistration(r, name, revoke));
      }
      const state = r.revoked_at
        ? [el('span', { class: 'badge failed' }, 'revoked'), ' ', el('span', { class: 'muted small' }, fmtTime(r.revoked_at))]
        : expired ? [el('span', { class: 'badge' }, 'expired')] : [el('span', { class: 'badge active' }, 'valid')];
      return el('tr', { 'data-registration': r.id },
        el('td', { class: 'num' }, String(r.id)),
        el('td', { class: 'wrap' }, name),
        el('td', {}, el('code', {}, r.display)),
        el('td', { class: 'nowrap' }, fmtTime(r.time_created), r.created_by ? el('br') : null,
          r.created_by ? el('span', { class: 'muted small', title: `user id ${r.created_by}` }, `by ${whose(r.created_by)}`) : null),
        el('td', { class: 'nowrap' }, fmtTime(r.expires_at)),
        el('td', { class: 'num' }, fmtInt(r.workers ?? 0)),
        el('td', {}, ...state),
        el('td', { class: 'actions' }, revoke));
    }));
    if (data.length === 0) tbody.replaceChildren(emptyRow(8, 'No registration tokens yet: name one above.'));
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  }
}

/**
 * shown shows a new registration token once, with the command that
 * registers a worker with it, each with a copy button.
 */
function shown(data) {
  const container = $('registration-secret');
  const command = `quarry worker --server ${serverURL()} --registration-token ${data.token}`;
  secretBox(container, `Registration token: ${data.name}`, data.token,
    `Copy it now: it is not shown again. It registers workers until ${fmtTime(data.expires_at)}.`);
  const id = uid('registration-command');
  const input = el('input', { type: 'text', id, readOnly: true, value: command, class: 'code', spellcheck: false, autocomplete: 'off' });
  const copied = el('span', { class: 'muted small', role: 'status', 'aria-live': 'polite' });
  const copy = el('button', { type: 'button', class: 'secondary', 'aria-label': 'Copy the command' }, 'Copy');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(command);
      copied.textContent = 'Copied.';
    } catch {
      input.select();
      copied.textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
    }
  });
  // Before the box's Done button's row ends the box: the command goes
  // last, so that the token's Copy keeps the focus.
  container.append(
    el('label', { for: id }, 'Start a worker on another machine with'),
    el('div', { class: 'inline' }, input, copy),
    copied,
    el('p', { class: 'muted small' }, 'The token may be given in QUARRY_WORKER_REGISTRATION_TOKEN instead, out of the command line. ' +
      'The worker keeps a token of its own once registered (see --token-file).'),
  );
}

async function create(ev) {
  ev.preventDefault();
  const box = $('registrations-error');
  clearError(box);
  const nameInput = $('registration-name');
  const hoursInput = $('registration-hours');
  const name = nameInput.value.trim();
  const hours = Number(hoursInput.value);
  nameInput.removeAttribute('aria-invalid');
  hoursInput.removeAttribute('aria-invalid');
  if (!name) {
    showError(box, new Error('Name the registration token: say which workers it is for.'));
    nameInput.setAttribute('aria-invalid', 'true');
    nameInput.focus();
    return;
  }
  if (!Number.isInteger(hours) || hours < 1 || hours > 720) {
    showError(box, new Error('A registration token is valid for 1 to 720 hours (30 days).'));
    hoursInput.setAttribute('aria-invalid', 'true');
    hoursInput.focus();
    return;
  }
  await busy($('registration-create'), async () => {
    try {
      const { data } = await call('POST', 'admin/worker/registration-token', { body: { name, hours } });
      nameInput.value = '';
      await registrations();
      shown(data);
    } catch (e) {
      writeError(box, e);
    }
  });
}

async function revokeWorker(w, name, button) {
  await confirmDelete({
    question: `Revoke worker ${name}? It is refused at its next request; the attempts it holds end as interrupted, and the next attempt of each pair goes on from its checkpoint.` +
      (w.in_process ? ' This is the worker quarry serve runs: it stays revoked until the server restarts and registers a new one.' : ''),
    yes: 'Revoke',
    box: $('workers-error'),
    button,
    request: () => call('DELETE', `admin/worker/${w.id}`),
    done: async () => {
      await workers();
      said($('workers-done'), `Worker ${name} is revoked.`);
      // Its button is gone.
      $('workers-title').focus();
    },
  });
}

async function revokeRegistration(r, name, button) {
  await confirmDelete({
    question: `Revoke the registration token ${name}? No worker registers with it any more; the workers it made keep running (revoke them above).`,
    yes: 'Revoke',
    box: $('registrations-error'),
    button,
    request: () => call('DELETE', `admin/worker/registration-token/${r.id}`),
    done: async () => {
      $('registration-secret').hidden = true;
      $('registration-secret').replaceChildren();
      await registrations();
      said($('workers-done'), `The registration token ${name} is revoked.`);
      $('registrations-title').focus();
    },
  });
}

/** wire connects the controls, once. */
export function wire() {
  $('registration-form').addEventListener('submit', create);
  $('workers-refresh').addEventListener('click', () => busy($('workers-refresh'), list));
}

export function reset() {
  $('workers-rows').replaceChildren();
  $('registrations-rows').replaceChildren();
  $('registration-secret').hidden = true;
  $('registration-secret').replaceChildren();
  $('workers-done').textContent = '';
}
