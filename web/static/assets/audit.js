// The audit log (admins): GET /admin/audit-log filtered by actor, action,
// resource and time, 50 entries a page. The filters, the page and the
// anchor (the id the pages count from, so that they stay put while entries
// are written) live in the location (#audit?actor=…&page=…&anchor=…).

import { call } from './api.js';
import { $, el, showError, clearError, loadingRow, emptyRow, fmtInt, fmtTime, keepFocus, personName } from './ui.js';
import { setParams, href } from './route.js';

const pageSize = 50;

const actions = ['api_key.create', 'api_key.delete', 'api_key.regenerate', 'cc_pair.create', 'cc_pair.delete', 'cc_pair.run_once', 'cc_pair.update',
  'connector.create', 'connector.delete', 'connector.update', 'credential.create', 'credential.delete', 'credential.update',
  'encryption_key.rotate', 'mcp_credentials.delete', 'mcp_credentials.save', 'mcp_server.create', 'mcp_server.delete',
  'mcp_server.update', 'mcp_token.connect', 'oauth_config.create', 'oauth_config.delete', 'pat.create', 'pat.revoke',
  'scim_token.create', 'scim_token.revoke', 'session.end', 'tool.create', 'tool.delete', 'tool.run', 'tool.update',
  'user.activate', 'user.adopt', 'user.create', 'user.deactivate', 'user.end_sessions', 'user.invite', 'user.link_identity',
  'user.password_change', 'user.password_reset', 'user.register', 'user.release', 'user.role_change', 'user.sign_in',
  'user.sign_in_failed', 'user.sign_out', 'user.uninvite', 'user.update',
  'user_group.adopt', 'user_group.create', 'user_group.delete', 'user_group.set_curator', 'user_group.update',
  'worker.register', 'worker.revoke', 'worker_registration.create', 'worker_registration.revoke'];
const resources = ['api_key', 'cc_pair', 'connector', 'credential', 'encryption_key', 'mcp_server', 'oauth_config', 'pat', 'scim_token',
  'session', 'tool', 'user', 'user_group', 'worker', 'worker_registration'];

/** Where a resource of the log is shown in this page. */
const views = { connector: 'connector', credential: 'credential', cc_pair: 'pair', user_group: 'group', tool: 'tool', mcp_server: 'mcp-server' };

const state = { f: {}, page: 0, anchor: '' };

/** toInput renders an RFC 3339 time for a datetime-local input, in the browser's zone. */
function toInput(s) {
  const d = new Date(s);
  if (!s || Number.isNaN(d.getTime())) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** fromInput reads a datetime-local input (the browser's zone) as RFC 3339 UTC. */
function fromInput(v) {
  if (!v) return '';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

function record(push) {
  setParams('audit', { ...state.f, page: state.page ? state.page + 1 : '', anchor: state.anchor }, { push });
}

/** show lists the page of entries the params say. */
export async function show(params) {
  state.f = {
    actor: params.get('actor') || '', action: params.get('action') || '', type: params.get('type') || '',
    rid: params.get('rid') || '', since: params.get('since') || '', until: params.get('until') || '',
  };
  const page = Number.parseInt(params.get('page') || '1', 10);
  state.page = Number.isFinite(page) && page > 0 ? page - 1 : 0;
  state.anchor = /^\d+$/.test(params.get('anchor') || '') ? params.get('anchor') : '';
  $('audit-actor').value = state.f.actor;
  $('audit-action').value = state.f.action;
  $('audit-type').value = state.f.type;
  $('audit-rid').value = state.f.rid;
  $('audit-since').value = toInput(state.f.since);
  $('audit-until').value = toInput(state.f.until);
  await load();
}

async function load() {
  const box = $('audit-error');
  clearError(box);
  const tbody = $('audit-rows');
  tbody.replaceChildren(loadingRow(6, 'Loading the audit log…'));
  const q = new URLSearchParams({ limit: String(pageSize), offset: String(state.page * pageSize) });
  const { actor, action, type, rid, since, until } = state.f;
  if (actor) q.set('actor', actor);
  if (action) q.set('action', action);
  if (type) q.set('resource_type', type);
  if (rid) q.set('resource_id', rid);
  if (since) q.set('since', since);
  if (until) q.set('until', until);
  if (state.anchor) q.set('before_id', state.anchor);
  try {
    const { data, headers } = await call('GET', `admin/audit-log?${q}`);
    const total = Number(headers.get('X-Total-Count') || data.length);
    // Pin the pages to the log as it is now.
    if (!state.anchor && data.length && state.page === 0) {
      state.anchor = String(data[0].id + 1);
      record(false);
    }
    tbody.replaceChildren(...data.map(row));
    if (data.length === 0) tbody.replaceChildren(emptyRow(6, total ? 'No entries on this page.' : 'No entry matches these filters.'));
    const start = state.page * pageSize;
    $('audit-summary').textContent = data.length
      ? `Entries ${fmtInt(start + 1)}–${fmtInt(start + data.length)} of ${fmtInt(total)}, newest first.`
      : `${fmtInt(total)} entries.`;
    const pages = Math.max(1, Math.ceil(total / pageSize));
    $('audit-page').textContent = `Page ${fmtInt(state.page + 1)} of ${fmtInt(pages)}`;
    $('audit-newer').disabled = state.page === 0;
    $('audit-older').disabled = state.page >= pages - 1;
  } catch (e) {
    tbody.replaceChildren();
    $('audit-summary').textContent = '';
    showError(box, e);
  }
}

function row(e) {
  const view = views[e.resource_type];
  const resource = `${e.resource_type} #${e.resource_id}`;
  // Each cell names its column, for the narrow layout (a card per entry).
  const cell = (label, ...c) => el('td', { 'data-label': label, role: 'cell' }, ...c);
  return el('tr', { role: 'row' },
    cell('When', el('time', { dateTime: e.time }, fmtTime(e.time))),
    cell('Who', e.actor_email ? personName(e.actor_email) : (e.scim_token_name !== null && e.scim_token_name !== undefined
      ? `the directory (SCIM token “${e.scim_token_name}”)` : el('span', { class: 'muted' }, 'the server')),
    e.api_key_id ? el('span', { class: 'muted small' }, ` (key #${e.api_key_id})`) : null),
    cell('Action', el('code', {}, e.action)),
    cell('Resource', view && e.resource_id ? el('a', { href: href(view, e.resource_id) }, resource) : resource),
    cell('Fields changed', e.fields.length ? e.fields.join(', ') : el('span', { class: 'muted' }, '—')),
    cell('From', e.source_ip || el('span', { class: 'muted' }, '—')));
}

function filter(ev) {
  ev.preventDefault();
  state.f = {
    actor: $('audit-actor').value.trim(), action: $('audit-action').value, type: $('audit-type').value,
    rid: $('audit-rid').value.trim(), since: fromInput($('audit-since').value), until: fromInput($('audit-until').value),
  };
  state.page = 0;
  state.anchor = '';
  record(true);
  load();
}

function page(n) {
  state.page = n;
  record(true);
  return load();
}

/** wire connects the controls, once. */
export function wire() {
  $('audit-action').replaceChildren(el('option', { value: '' }, 'Any action'), ...actions.map((a) => el('option', { value: a }, a)));
  $('audit-type').replaceChildren(el('option', { value: '' }, 'Any resource'), ...resources.map((r) => el('option', { value: r }, r)));
  $('audit-filters').addEventListener('submit', filter);
  $('audit-clear').addEventListener('click', () => {
    for (const id of ['audit-actor', 'audit-rid', 'audit-since', 'audit-until', 'audit-action', 'audit-type']) $(id).value = '';
    $('audit-filters').requestSubmit();
  });
  $('audit-newest').addEventListener('click', () => { state.anchor = ''; page(0); });
  $('audit-newer').addEventListener('click', async () => {
    await page(state.page - 1);
    keepFocus($('audit-newer'), $('audit-older'));
  });
  $('audit-older').addEventListener('click', async () => {
    await page(state.page + 1);
    keepFocus($('audit-older'), $('audit-newer'));
  });
}

export function reset() {
  $('audit-rows').replaceChildren();
  $('audit-summary').textContent = '';
}
