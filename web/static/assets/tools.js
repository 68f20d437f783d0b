// Tools: the list (GET /tool), a new custom tool (POST
// /admin/tool/custom), the editor of one (GET /tool/{id}, PUT
// /admin/tool/custom/{id} with If-Match), deleting it, and the OAuth
// configurations tools may use (admins). Built-in tools are shown
// read-only. A custom tool's page also has "Try it" and the person's own
// connection to its OAuth configuration (toolrun.js). Header values come masked and are sent back as they are
// unless changed: the server keeps the stored value of a mask.

import { call } from './api.js';
import { $, el, showError, clearError, writeError, busy, confirmDelete, isMasked, uid, emptyRow } from './ui.js';
import { isAdmin, curatesOrAdmin } from './session.js';
import { go, href } from './route.js';
import * as toolrun from './toolrun.js';

const passthroughConflict = 'Cannot use passthrough auth with custom authorization headers';

const state = { id: null, etag: null, tool: null, definitionText: '', headers: [], oauth: null };

/** A definition to start a new tool from. */
const starter = {
  openapi: '3.0.3',
  info: { title: 'My API', description: 'What the API does, for the assistant.', version: '1.0.0' },
  servers: [{ url: 'https://api.example.com' }],
  paths: {
    '/items/{id}': {
      get: {
        operationId: 'get_item', summary: 'Get an item',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { description: 'The item' } },
      },
    },
  },
};

/** list shows every tool, and the OAuth configurations to admins. */
export async function list() {
  for (const a of document.querySelectorAll('#view-tools [data-needs="tools"]')) a.hidden = !curatesOrAdmin();
  $('oauth-box').hidden = !isAdmin();
  if (isAdmin()) oauthList();
  const errBox = $('tools-error');
  clearError(errBox);
  const tbody = $('tools-rows');
  tbody.replaceChildren(el('tr', {}, el('td', { colSpan: 6, class: 'muted' }, 'Loading tools…')));
  try {
    const { data } = await call('GET', 'tool');
    const tools = [...data].sort((a, b) => a.id - b.id);
    tbody.replaceChildren(...tools.map((t) => {
      const builtIn = t.in_code_tool_id !== null && t.in_code_tool_id !== undefined;
      return el('tr', {},
        el('td', { class: 'num' }, String(t.id)),
        el('td', {}, el('a', { href: `#tool/${t.id}`, 'aria-label': `${builtIn ? 'View' : 'Edit'} tool ${t.display_name || t.name}` },
          t.display_name || t.name)),
        el('td', {}, el('span', { class: 'badge' }, builtIn ? 'built-in' : 'custom')),
        el('td', {}, t.description || ''),
        el('td', {}, t.custom_headers && t.custom_headers.length ? t.custom_headers.map((h) => h.key).join(', ') : ''),
        el('td', {}, t.passthrough_auth ? 'yes' : 'no'),
      );
    }));
    if (tools.length === 0) tbody.replaceChildren(el('tr', {}, el('td', { colSpan: 6, class: 'muted' }, 'No tools.')));
  } catch (e) {
    tbody.replaceChildren();
    showError(errBox, e);
  }
}

/** headerRow builds the editor of one custom header. */
function headerRow(h) {
  const id = uid('tool-header');
  const key = el('input', { type: 'text', id: `${id}-key`, autocomplete: 'off', spellcheck: false });
  const value = el('input', { type: 'text', id: `${id}-value`, autocomplete: 'off', spellcheck: false });
  key.value = h.key;
  value.value = h.value;
  const remove = el('button', { type: 'button', class: 'danger', 'aria-label': `Remove header ${h.key || '(new)'}` }, 'Remove');
  const valueField = el('div', { class: 'field' }, el('label', { for: `${id}-value` }, 'Value'), value);
  if (isMasked(h.value)) {
    valueField.append(el('p', { class: 'muted small', id: `${id}-hint` }, 'Masked: left as it is, the stored value is kept.'));
    value.setAttribute('aria-describedby', `${id}-hint`);
  }
  const row = { key, value };
  row.el = el('div', { class: 'header-row' },
    el('div', { class: 'field' }, el('label', { for: `${id}-key` }, 'Header name'), key),
    valueField, remove);
  remove.addEventListener('click', () => {
    const i = state.headers.indexOf(row);
    state.headers.splice(i, 1);
    row.el.remove();
    const next = state.headers[i] || state.headers[i - 1];
    (next ? next.key : $('tool-add-header')).focus();
  });
  return row;
}

function fill(tool, etag) {
  state.tool = tool;
  state.etag = etag;
  const builtIn = tool.in_code_tool_id !== null && tool.in_code_tool_id !== undefined;
  $('tool-title').textContent = `${builtIn ? 'Built-in tool' : 'Custom tool'} #${tool.id}: ${tool.display_name || tool.name}`;
  $('tool-meta').textContent = builtIn
    ? `Built-in (${tool.in_code_tool_id}): shown read-only; built-in tools cannot be changed here.`
    : `Owner ${tool.user_id ?? 'none'} · version ${etag ?? '?'}`;
  $('tool-name').value = tool.name;
  $('tool-description').value = tool.description ?? '';
  state.definitionText = tool.definition === null || tool.definition === undefined ? '' : JSON.stringify(tool.definition, null, 2);
  $('tool-definition').value = state.definitionText;
  $('tool-definition').removeAttribute('aria-invalid');
  $('tool-definition-error').replaceChildren();
  state.headers = (tool.custom_headers || []).map(headerRow);
  $('tool-headers').replaceChildren(...state.headers.map((r) => r.el));
  $('tool-passthrough').checked = !!tool.passthrough_auth;
  fillOAuth(tool.oauth_config_id ?? null, tool.oauth_config_name ?? null);
  const readOnly = builtIn || !curatesOrAdmin();
  $('tool-fieldset').disabled = readOnly;
  $('tool-buttons').hidden = readOnly;
  $('tool-save').textContent = 'Save tool';
  $('tool-reload').hidden = false;
  $('tool-delete').hidden = false;
  $('tool-methods').replaceChildren();
  $('tool-form').hidden = false;
  toolrun.show(tool);
}

/**
 * fillOAuth offers the OAuth configurations (admins may list them; others
 * see the tool's own, and keep it).
 */
function fillOAuth(id, name) {
  const select = $('tool-oauth-select');
  const configs = state.oauth || [];
  const options = [el('option', { value: '' }, 'None')];
  for (const c of configs) options.push(el('option', { value: String(c.id) }, `${c.name} (#${c.id})`));
  if (id !== null && !configs.some((c) => c.id === id)) options.push(el('option', { value: String(id) }, `${name ?? 'OAuth configuration'} (#${id})`));
  select.replaceChildren(...options);
  select.value = id === null ? '' : String(id);
  select.disabled = !isAdmin();
  state.oauthID = id;
  $('tool-oauth').textContent = isAdmin()
    ? 'With one, the tool calls its API with each person\'s own token from that provider.'
    : 'Only admins can list OAuth configurations: this page keeps the tool\'s own.';
}

/** loadOAuth reads the OAuth configurations, for admins. */
async function loadOAuth() {
  state.oauth = null;
  if (!isAdmin()) return;
  try {
    state.oauth = (await call('GET', 'admin/oauth-config')).data;
  } catch {
    state.oauth = null;
  }
}

/** fillNew shows the form of a new custom tool. */
function fillNew() {
  state.tool = null;
  state.etag = null;
  $('tool-title').textContent = 'New custom tool';
  $('tool-meta').textContent = 'Its definition is an OpenAPI 3 document with exactly one server URL; every operation needs an operationId and a summary.';
  $('tool-name').value = '';
  $('tool-description').value = '';
  state.definitionText = '';
  $('tool-definition').value = JSON.stringify(starter, null, 2);
  $('tool-definition').removeAttribute('aria-invalid');
  $('tool-definition-error').replaceChildren();
  state.headers = [];
  $('tool-headers').replaceChildren();
  $('tool-passthrough').checked = false;
  fillOAuth(null, null);
  $('tool-fieldset').disabled = false;
  $('tool-buttons').hidden = false;
  $('tool-save').textContent = 'Create tool';
  $('tool-reload').hidden = true;
  $('tool-delete').hidden = true;
  $('tool-methods').replaceChildren();
  $('tool-form').hidden = false;
}

/** open shows tool id, fetched afresh, or the form of a new one ("new"). */
export async function open(id) {
  state.id = id;
  const errBox = $('tool-error');
  clearError(errBox);
  $('tool-saved').textContent = '';
  $('tool-form').hidden = true;
  toolrun.reset();
  await loadOAuth();
  if (id === 'new') {
    fillNew();
    return;
  }
  $('tool-title').textContent = `Tool #${id}`;
  $('tool-meta').textContent = 'Loading…';
  const view = $('view-tool');
  view.setAttribute('aria-busy', 'true');
  try {
    const { data, etag } = await call('GET', `tool/${encodeURIComponent(id)}`);
    if (state.id !== id) return;
    fill(data, etag);
  } catch (e) {
    $('tool-meta').textContent = '';
    showError(errBox, e);
  } finally {
    if (state.id === id) view.setAttribute('aria-busy', 'false');
  }
}

/** definition parses the definition text, or shows why it cannot. */
function definition() {
  const box = $('tool-definition-error');
  const area = $('tool-definition');
  box.replaceChildren();
  area.removeAttribute('aria-invalid');
  try {
    return JSON.parse(area.value);
  } catch (e) {
    box.textContent = `Not valid JSON: ${e.message}`;
    area.setAttribute('aria-invalid', 'true');
    area.focus();
    return undefined;
  }
}

/** definitionError shows a message of the server's at the definition. */
function definitionError(e) {
  const area = $('tool-definition');
  showError($('tool-definition-error'), e);
  area.setAttribute('aria-invalid', 'true');
  area.focus();
}

async function save(ev) {
  ev.preventDefault();
  const errBox = $('tool-error');
  clearError(errBox);
  $('tool-saved').textContent = '';
  $('tool-methods').replaceChildren();
  const isNew = state.id === 'new';
  const body = {
    name: $('tool-name').value,
    description: $('tool-description').value === '' ? null : $('tool-description').value,
    custom_headers: state.headers
      .map((r) => ({ key: r.key.value.trim(), value: r.value.value }))
      .filter((h) => h.key !== '' || h.value !== ''),
    passthrough_auth: $('tool-passthrough').checked,
  };
  // The OAuth configuration is sent only when it was changed (an absent
  // field is left as it is).
  const oauth = $('tool-oauth-select').value === '' ? null : Number($('tool-oauth-select').value);
  if (oauth !== state.oauthID || (isNew && oauth !== null)) body.oauth_config_id = oauth;
  // The definition is sent only when it was changed, so that other edits
  // do not depend on it.
  const defText = $('tool-definition').value;
  $('tool-definition-error').replaceChildren();
  $('tool-definition').removeAttribute('aria-invalid');
  if (isNew || defText !== state.definitionText) {
    const d = definition();
    if (d === undefined) return;
    body.definition = d;
  }
  await busy($('tool-save'), async () => {
    try {
      if (isNew) {
        const { data } = await call('POST', 'admin/tool/custom', { body });
        go(href('tool', data.id));
        return;
      }
      const { data, etag } = await call('PUT', `admin/tool/custom/${encodeURIComponent(state.id)}`, { body, etag: state.etag });
      fill(data, etag);
      $('tool-saved').textContent = `Saved at ${new Date().toLocaleTimeString()}.`;
    } catch (e) {
      if (e.status === 400 && body.definition !== undefined && e.detail !== passthroughConflict && !/header/i.test(String(e.detail)) &&
          !/OAuth/.test(String(e.detail))) {
        showError(errBox, new Error(`The tool was not saved: the server did not accept the definition (see below).`));
        definitionError(e);
      } else {
        writeError(errBox, e, { what: 'this tool', reload: () => open(state.id).then(() => $('tool-name').focus()) });
      }
    }
  });
}

async function remove() {
  const t = state.tool;
  if (!t) return;
  await confirmDelete({
    question: `Delete the custom tool "${t.name}" (#${t.id})? The assistant can no longer call it.`,
    box: $('tool-error'),
    button: $('tool-delete'),
    request: () => call('DELETE', `admin/tool/custom/${encodeURIComponent(t.id)}`),
    done: () => go('#tools'),
  });
}

/** oauthList shows the OAuth configurations (admins). */
async function oauthList() {
  const box = $('oauth-error');
  clearError(box);
  const tbody = $('oauth-rows');
  try {
    const { data } = await call('GET', 'admin/oauth-config');
    tbody.replaceChildren(...data.map((c) => {
      const del = el('button', { type: 'button', class: 'danger', 'aria-label': `Delete the OAuth configuration ${c.name}` }, 'Delete');
      del.addEventListener('click', () => confirmDelete({
        question: `Delete the OAuth configuration "${c.name}" (#${c.id})?`,
        box,
        request: () => call('DELETE', `admin/oauth-config/${c.id}`),
        done: oauthList,
      }));
      return el('tr', {}, el('td', { class: 'num' }, String(c.id)), el('td', {}, c.name), el('td', {}, el('code', {}, c.client_id)),
        el('td', { class: 'wrap' }, c.token_url), el('td', {}, c.scopes.join(' ')), el('td', {}, del));
    }));
    if (data.length === 0) tbody.replaceChildren(emptyRow(6, 'No OAuth configurations.'));
  } catch (e) {
    tbody.replaceChildren();
    showError(box, e);
  }
}

async function oauthCreate(ev) {
  ev.preventDefault();
  const box = $('oauth-error');
  clearError(box);
  const v = (id) => $(id).value.trim();
  await busy($('oauth-create'), async () => {
    try {
      await call('POST', 'admin/oauth-config', {
        body: {
          name: v('oauth-name'), authorization_url: v('oauth-auth-url'), token_url: v('oauth-token-url'),
          client_id: v('oauth-client-id'), client_secret: $('oauth-secret').value, scopes: v('oauth-scopes').split(/\s+/).filter(Boolean),
        },
      });
      for (const id of ['oauth-name', 'oauth-auth-url', 'oauth-token-url', 'oauth-client-id', 'oauth-secret', 'oauth-scopes']) $(id).value = '';
      await oauthList();
    } catch (e) {
      writeError(box, e);
    }
  });
}

async function validate() {
  const d = definition();
  if (d === undefined) return;
  const out = $('tool-methods');
  out.replaceChildren('Checking…');
  try {
    const { data } = await call('POST', 'admin/tool/custom/validate', { body: { definition: d } });
    const methods = data.methods || [];
    out.replaceChildren(el('p', { class: 'ok' }, `The definition is valid: ${methods.length} method${methods.length === 1 ? '' : 's'}.`),
      el('ul', { class: 'methods' }, ...methods.map((m) =>
        el('li', {}, el('code', {}, `${String(m.method).toUpperCase()} ${m.path}`), ` ${m.name}${m.summary ? `: ${m.summary}` : ''}`))));
  } catch (e) {
    out.replaceChildren();
    definitionError(e);
  }
}

/** wire connects the controls, once. */
export function wire() {
  $('tool-form').addEventListener('submit', save);
  $('tool-delete').addEventListener('click', remove);
  $('oauth-form').addEventListener('submit', oauthCreate);
  $('tool-reload').addEventListener('click', () => open(state.id));
  $('tool-validate').addEventListener('click', validate);
  toolrun.wire();
  $('tool-add-header').addEventListener('click', () => {
    const r = headerRow({ key: '', value: '' });
    state.headers.push(r);
    $('tool-headers').append(r.el);
    r.key.focus();
  });
}

/** reset forgets the open tool (sign-out). */
export function reset() {
  Object.assign(state, { id: null, etag: null, tool: null, definitionText: '', headers: [], oauth: null });
  $('oauth-rows').replaceChildren();
  $('tool-headers').replaceChildren();
  $('tool-form').hidden = true;
  $('tools-rows').replaceChildren();
  toolrun.reset();
}
