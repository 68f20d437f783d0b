// MCP servers: the list (GET admin/mcp/servers for those who manage them,
// GET mcp/servers for everyone else), a new one (POST
// admin/mcp/servers/create), and the page of one (#mcp-server/<id>): its
// tools, enabled or not (GET admin/mcp/server/{id}/tools/snapshots, POST
// admin/mcp/servers/update), the person's own connection to it (their
// header values: POST mcp/user-credentials; their OAuth account: POST
// mcp/oauth/connect, then the authorization server), taking it offline and
// deleting it. The server decides who may do what; the page only hides
// what the person's role and permissions do not allow.

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, said, confirmAction, confirmDelete, fmtTime, loadingRow,
  emptyRow, isMasked, uid, plural } from './ui.js';
import { curatesOrAdmin, holds } from './session.js';
import { go } from './route.js';

const state = { id: null, server: null, manages: false, editable: false };

/** The words for an authentication type, and whose credentials it uses. */
function authWords(s) {
  const whose = s.auth_performer === 'PER_USER' ? 'each person\'s' : 'shared';
  switch (s.auth_type) {
    case 'API_TOKEN': return `API token (${whose})`;
    case 'OAUTH': return `OAuth (${whose})`;
    case 'PT_OAUTH': return 'single sign-on token';
    case 'NONE': return 'none';
    default: return 'not configured';
  }
}

/** statusBadge shows a server's status. */
function statusBadge(status) {
  const cls = status === 'CONNECTED' ? 'connected' : status === 'DISCONNECTED' ? 'paused' : 'waiting';
  const words = { CONNECTED: 'connected', AWAITING_AUTH: 'awaiting authentication', CREATED: 'not configured',
    DISCONNECTED: 'offline', FETCHING_TOOLS: 'listing tools' };
  return el('span', { class: `badge ${cls}` }, words[status] || status.toLowerCase());
}

/** manages reports whether the person manages MCP servers (admins, curators, manage:actions). */
async function manages() {
  return curatesOrAdmin() || holds('manage:actions');
}

/** list shows the servers the person may see. */
export async function list() {
  state.manages = await manages();
  $('mcp-new').hidden = !state.manages;
  const box = $('mcp-error');
  clearError(box);
  const tbody = $('mcp-rows');
  tbody.replaceChildren(loadingRow(6, 'Loading MCP servers…'));
  try {
    const { data } = await call('GET', state.manages ? 'admin/mcp/servers' : 'mcp/servers');
    const servers = [...data.mcp_servers].sort((a, b) => a.id - b.id);
    tbody.replaceChildren(...servers.map((s) => el('tr', {},
      el('td', { class: 'num' }, String(s.id)),
      el('td', {}, el('a', { href: `#mcp-server/${s.id}` }, s.name)),
      el('td', {}, authWords(s)),
      el('td', { class: 'num' }, String(s.tool_count)),
      el('td', {}, statusBadge(s.status)),
      el('td', {}, s.user_can_authenticate ? 'ready' : el('span', { class: 'badge waiting' }, 'needs you to connect')))));
    if (servers.length === 0) {
      tbody.replaceChildren(emptyRow(6, state.manages ? 'No MCP servers yet: add one below.' : 'No MCP servers are offered yet.'));
    }
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  }
}

/** showAuthFields shows the fields the chosen authentication needs. */
function showAuthFields() {
  const type = $('mcp-auth').value;
  const performer = $('mcp-performer').value;
  const shared = performer === 'ADMIN';
  $('mcp-performer-field').hidden = type === 'NONE' || type === 'PT_OAUTH';
  $('mcp-token-field').hidden = !(type === 'API_TOKEN' && shared);
  $('mcp-header-field').hidden = type !== 'API_TOKEN';
  $('mcp-value-field').hidden = type !== 'API_TOKEN';
  $('mcp-client-id-field').hidden = type !== 'OAUTH';
  $('mcp-client-secret-field').hidden = type !== 'OAUTH';
  const hints = {
    NONE: 'Quarry calls the server without credentials.',
    API_TOKEN: shared
      ? 'Quarry sends the header with this token on every call, for everyone. The token is sealed and never shown again.'
      : 'Each person gives their own token on the server\'s page; Quarry sends the header with it on their calls.',
    OAUTH: shared
      ? 'An admin connects one account on the server\'s page, used for everyone. Without a client id, Quarry registers itself with the server\'s authorization server.'
      : 'Each person connects their own account on the server\'s page. Without a client id, Quarry registers itself with the server\'s authorization server.',
    PT_OAUTH: 'Quarry passes on the person\'s own single sign-on access token: for servers that trust this company\'s identity provider.',
  };
  $('mcp-auth-hint').textContent = hints[type];
}

/** create adds a server, then opens its page to authenticate and pick tools. */
async function create(ev) {
  ev.preventDefault();
  const box = $('mcp-error');
  clearError(box);
  const type = $('mcp-auth').value;
  // Onyx's model requires a performer even without credentials.
  const performer = type === 'NONE' ? 'ADMIN' : type === 'PT_OAUTH' ? 'PER_USER' : $('mcp-performer').value;
  const text = (id) => $(id).value.trim();
  const body = {
    name: text('mcp-name'),
    description: text('mcp-description') || null,
    server_url: text('mcp-url'),
    transport: $('mcp-transport').value,
    auth_type: type,
    auth_performer: performer,
  };
  if (type === 'API_TOKEN') {
    body.auth_template = { headers: { [text('mcp-header')]: $('mcp-value').value }, required_fields: [] };
    if (performer === 'ADMIN') body.api_token = $('mcp-token').value;
  }
  if (type === 'OAUTH' && text('mcp-client-id')) {
    body.oauth_client_id = text('mcp-client-id');
    body.oauth_client_secret = $('mcp-client-secret').value || null;
  }
  await busy($('mcp-create'), async () => {
    try {
      const { data } = await call('POST', 'admin/mcp/servers/create', { body });
      for (const id of ['mcp-name', 'mcp-description', 'mcp-url', 'mcp-token', 'mcp-client-id', 'mcp-client-secret']) $(id).value = '';
      $('mcp-new').open = false;
      go(`#mcp-server/${data.server_id}`);
    } catch (e) {
      writeError(box, e);
    }
  });
}

/** open shows server id's page. */
export async function open(id) {
  state.id = id;
  state.server = null;
  state.manages = await manages();
  const box = $('mcp-server-error');
  clearError(box);
  $('mcp-server-done').textContent = '';
  $('mcp-server-facts').replaceChildren();
  $('mcp-access').hidden = true;
  $('mcp-server-admin').hidden = true;
  $('mcp-tools-rows').replaceChildren(loadingRow(3, 'Loading tools…'));
  let s = null;
  state.editable = false;
  try {
    if (state.manages) {
      try {
        ({ data: s } = await call('GET', `admin/mcp/servers/${id}`));
        state.editable = true;
      } catch (e) {
        if (e.status !== 403) throw e; // a curator's view of someone else's server
      }
    }
    if (!s) {
      const { data } = await call('GET', 'mcp/servers');
      s = data.mcp_servers.find((x) => x.id === id);
      if (!s) throw new Error(`MCP server ${id} does not exist, or is not offered.`);
    }
  } catch (e) {
    $('mcp-server-title').textContent = 'MCP server';
    $('mcp-tools-rows').replaceChildren();
    showError(box, e);
    return;
  }
  render(s);
  await tools(false);
}

/** render shows what the page says of server s, but its tools. */
function render(s) {
  state.server = s;
  $('mcp-server-title').textContent = s.name;
  const fact = (t, ...d) => [el('dt', {}, t), el('dd', {}, ...d)];
  $('mcp-server-facts').replaceChildren(
    ...(s.description ? fact('Description', s.description) : []),
    ...(s.server_url ? fact('URL', el('code', {}, s.server_url)) : []),
    ...fact('Authentication', authWords(s)),
    ...fact('Status', statusBadge(s.status)),
    ...fact('Tools listed', s.last_refreshed_at ? fmtTime(s.last_refreshed_at) : el('span', { class: 'muted' }, 'not yet')),
  );
  $('mcp-server-admin').hidden = !state.editable;
  $('mcp-server-toggle').textContent = s.status === 'DISCONNECTED' ? 'Offer it again' : 'Take offline';
  access(s);
}

/** access shows how the person authenticates to the server, and what they may do about it. */
function access(s) {
  const text = $('mcp-access-text');
  const form = $('mcp-creds-form');
  const connect = $('mcp-connect');
  const forget = $('mcp-disconnect');
  form.hidden = true;
  connect.hidden = true;
  forget.hidden = true;
  $('mcp-access').hidden = false;
  const perUser = s.auth_performer === 'PER_USER';
  const ready = Boolean(s.user_can_authenticate);
  switch (s.auth_type) {
    case 'API_TOKEN':
      if (!perUser) {
        text.textContent = 'Quarry calls this server with a token an admin gave, for everyone: there is nothing for you to do.';
        break;
      }
      text.textContent = ready
        ? 'Your own credentials for this server are saved. Change them below, or forget them.'
        : 'This server needs your own credentials: give them below. Quarry checks them by listing the server\'s tools, then keeps them sealed.';
      credsForm(s);
      forget.hidden = !ready;
      break;
    case 'OAUTH':
      if (!perUser) {
        text.textContent = ready
          ? 'An account connected by an admin is used for everyone.'
          : 'An admin has to connect the account this server is called with, for everyone.';
        connect.hidden = !state.editable;
        connect.textContent = ready ? 'Connect again' : 'Connect the account';
        break;
      }
      text.textContent = ready
        ? 'Your own account is connected: the server\'s tools run as you.'
        : 'This server\'s tools run with your own account there, which is not connected.';
      connect.hidden = false;
      connect.textContent = ready ? 'Connect again' : 'Connect your account';
      forget.hidden = !ready;
      forget.textContent = 'Disconnect';
      break;
    case 'PT_OAUTH':
      text.textContent = 'Quarry passes on your single sign-on access token to this server: there is nothing for you to do.';
      break;
    case 'NONE':
      text.textContent = 'This server needs no credentials.';
      break;
    default:
      text.textContent = 'This server\'s authentication is not configured yet.';
  }
  if (s.auth_type !== 'OAUTH') forget.textContent = 'Forget my credentials';
}

/** credsForm builds the fields of the person's values for the server's header template. */
function credsForm(s) {
  const fields = (s.auth_template && s.auth_template.required_fields) || [];
  const have = s.user_credentials || {};
  $('mcp-creds-fields').replaceChildren(...fields.map((f) => {
    const id = uid('mcp-cred');
    const input = el('input', { id, type: 'password', autocomplete: 'off', spellcheck: false, 'data-field': f });
    input.value = have[f] ?? '';
    const label = f === 'api_key' ? 'Your API token' : f;
    const field = el('div', { class: 'field' }, el('label', { for: id }, label), input);
    if (isMasked(input.value)) field.append(el('p', { class: 'muted small' }, 'Masked: left as it is, the saved value is kept.'));
    return field;
  }));
  $('mcp-creds-form').hidden = fields.length === 0;
}

/** saveCreds saves the person's values, which the server checks first. */
async function saveCreds(ev) {
  ev.preventDefault();
  const box = $('mcp-server-error');
  clearError(box);
  const credentials = {};
  for (const input of $('mcp-creds-fields').querySelectorAll('input')) credentials[input.dataset.field] = input.value;
  await busy($('mcp-creds-save'), async () => {
    try {
      await call('POST', 'mcp/user-credentials', {
        body: { server_id: state.id, credentials, transport: state.server.transport || 'STREAMABLE_HTTP' },
      });
      await open(state.id);
      said($('mcp-server-done'), 'Your credentials work and are saved.');
    } catch (e) {
      writeError(box, e);
    }
  });
}

/** connect starts an OAuth connection: the browser goes to the authorization server and comes back here. */
async function connect() {
  const box = $('mcp-server-error');
  clearError(box);
  const s = state.server;
  const shared = s.auth_performer !== 'PER_USER';
  await busy($('mcp-connect'), async () => {
    try {
      const returnPath = `${location.pathname}#mcp-server/${s.id}`;
      const { data } = await call('POST', shared ? 'admin/mcp/oauth/connect' : 'mcp/oauth/connect', {
        body: { server_id: s.id, return_path: returnPath, include_resource_param: true, force_reauthentication: true },
      });
      location.assign(data.oauth_url);
    } catch (e) {
      writeError(box, e);
    }
  });
}

/** forget deletes the person's credentials and token for the server. */
async function forget() {
  const s = state.server;
  await confirmDelete({
    question: `Forget your credentials for ${s.name}? Its tools stop working for you until you give them again.`,
    yes: s.auth_type === 'OAUTH' ? 'Disconnect' : 'Forget',
    box: $('mcp-server-error'),
    button: $('mcp-disconnect'),
    request: () => call('DELETE', `mcp/user-credentials/${s.id}`),
    done: async () => {
      await open(s.id);
      said($('mcp-server-done'), 'Your credentials for this server are forgotten.');
      $('mcp-access-title').focus();
    },
  });
}

/**
 * tools lists the server's tools: for those who may change it, every tool
 * Quarry knows of (fetch: listed from the server again first), with a box
 * to enable each; for everyone else, the enabled ones.
 */
async function tools(fetch) {
  const s = state.server;
  const tbody = $('mcp-tools-rows');
  const box = $('mcp-server-error');
  $('mcp-tools-buttons').hidden = !state.editable;
  $('mcp-tools-hint').textContent = state.editable
    ? `Enabled tools are offered to assistants as ${s.name}'s tools (named server__tool over MCP). New tools the server adds stay off until enabled here.`
    : 'The tools of this server you may use.';
  try {
    let rows;
    if (state.editable) {
      ({ data: rows } = await call('GET', `admin/mcp/server/${s.id}/tools/snapshots?source=${fetch ? 'mcp' : 'db'}`));
    } else {
      const { data } = await call('GET', 'tool');
      rows = data.filter((t) => t.mcp_server_id === s.id);
    }
    rows.sort((a, b) => a.name.localeCompare(b.name));
    tbody.replaceChildren(...rows.map((t) => {
      const id = `mcp-tool-${t.id}`;
      const label = t.display_name || t.name;
      const on = el('input', { type: 'checkbox', id, checked: t.enabled, disabled: !state.editable, 'data-name': t.name,
        'aria-label': `Enable ${label}` });
      return el('tr', {}, el('td', {}, on), el('td', {}, el('label', { for: id }, label), label !== t.name ? el('div', { class: 'muted small' }, el('code', {}, t.name)) : null),
        el('td', {}, t.description || ''));
    }));
    if (rows.length === 0) {
      tbody.replaceChildren(emptyRow(3, state.editable
        ? 'No tools listed yet: authenticate if the server needs it, then list its tools.'
        : 'None of its tools are enabled.'));
    }
    if (fetch) said($('mcp-server-done'), `The server lists ${plural(rows.length, 'tool')}.`);
  } catch (e) {
    tbody.replaceChildren();
    writeError(box, e);
  }
}

/** saveTools enables the ticked tools and disables the others. */
async function saveTools(ev) {
  ev.preventDefault();
  const box = $('mcp-server-error');
  clearError(box);
  const selected = [...$('mcp-tools-rows').querySelectorAll('input[type=checkbox]:checked')].map((i) => i.dataset.name);
  await busy($('mcp-tools-save'), async () => {
    try {
      await call('POST', 'admin/mcp/servers/update', { body: { server_id: state.id, selected_tools: selected } });
      said($('mcp-server-done'), `${plural(selected.length, 'tool')} enabled.`);
    } catch (e) {
      writeError(box, e);
    }
  });
}

async function fetchTools() {
  clearError($('mcp-server-error'));
  await busy($('mcp-tools-fetch'), () => tools(true));
  // The listing changed the server's status and time of listing.
  const { data } = await call('GET', `admin/mcp/servers/${state.id}`).catch(() => ({ data: null }));
  if (data) render(data);
}

async function toggle() {
  const s = state.server;
  const offline = s.status !== 'DISCONNECTED';
  if (offline && !(await confirmAction(`Take ${s.name} offline? Its tools are no longer offered to anyone until it is offered again.`, 'Take offline'))) return;
  const box = $('mcp-server-error');
  clearError(box);
  const next = offline ? 'DISCONNECTED' : (s.tool_count > 0 ? 'CONNECTED' : 'AWAITING_AUTH');
  await busy($('mcp-server-toggle'), async () => {
    try {
      await call('PATCH', `admin/mcp/server/${s.id}/status?status=${next}`);
      await open(s.id);
      said($('mcp-server-done'), offline ? `${s.name} is offline.` : `${s.name} is offered again.`);
    } catch (e) {
      writeError(box, e);
    }
  });
}

async function remove() {
  const s = state.server;
  await confirmDelete({
    question: `Delete the MCP server ${s.name}? Its tools, and everyone's credentials for it, are deleted with it.`,
    yes: 'Delete',
    box: $('mcp-server-error'),
    button: $('mcp-server-delete'),
    request: () => call('DELETE', `admin/mcp/server/${s.id}`),
    done: async () => go('#mcp'),
  });
}

/** wire connects the controls, once. */
export function wire() {
  $('mcp-form').addEventListener('submit', create);
  $('mcp-auth').addEventListener('change', showAuthFields);
  $('mcp-performer').addEventListener('change', showAuthFields);
  $('mcp-creds-form').addEventListener('submit', saveCreds);
  $('mcp-connect').addEventListener('click', connect);
  $('mcp-disconnect').addEventListener('click', forget);
  $('mcp-tools-form').addEventListener('submit', saveTools);
  $('mcp-tools-fetch').addEventListener('click', fetchTools);
  $('mcp-server-toggle').addEventListener('click', toggle);
  $('mcp-server-delete').addEventListener('click', remove);
  showAuthFields();
}

export function reset() {
  state.id = null;
  state.server = null;
  $('mcp-rows').replaceChildren();
  $('mcp-tools-rows').replaceChildren();
  $('mcp-server-facts').replaceChildren();
}
