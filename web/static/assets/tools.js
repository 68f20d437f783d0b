// Tools: the list (GET /tool) and the editor of one custom tool
// (GET /tool/{id}, PUT /admin/tool/custom/{id} with If-Match). Built-in
// tools are shown read-only. Header values come masked and are sent back
// as they are unless changed: the server keeps the stored value of a mask.

import { call } from './api.js';
import { $, el, showError, clearError, isMasked, uid } from './ui.js';

const passthroughConflict = 'Cannot use passthrough auth with custom authorization headers';

const state = { id: null, etag: null, tool: null, definitionText: '', headers: [] };

/** list shows every tool. */
export async function list() {
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
  $('tool-oauth').textContent = tool.oauth_config_id ? `OAuth configuration: ${tool.oauth_config_name ?? ''} (#${tool.oauth_config_id}), unchanged by this page.` : '';
  $('tool-fieldset').disabled = builtIn;
  $('tool-buttons').hidden = builtIn;
  $('tool-methods').replaceChildren();
  $('tool-form').hidden = false;
}

/** open shows tool id, fetched afresh. */
export async function open(id) {
  state.id = id;
  const errBox = $('tool-error');
  clearError(errBox);
  $('tool-saved').textContent = '';
  $('tool-form').hidden = true;
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
  const body = {
    name: $('tool-name').value,
    description: $('tool-description').value === '' ? null : $('tool-description').value,
    custom_headers: state.headers
      .map((r) => ({ key: r.key.value.trim(), value: r.value.value }))
      .filter((h) => h.key !== '' || h.value !== ''),
    passthrough_auth: $('tool-passthrough').checked,
  };
  // The definition is sent only when it was changed, so that other edits
  // do not depend on it.
  const defText = $('tool-definition').value;
  $('tool-definition-error').replaceChildren();
  $('tool-definition').removeAttribute('aria-invalid');
  if (defText !== state.definitionText) {
    const d = definition();
    if (d === undefined) return;
    body.definition = d;
  }
  const button = $('tool-save');
  button.disabled = true;
  try {
    const { data, etag } = await call('PUT', `admin/tool/custom/${encodeURIComponent(state.id)}`, { body, etag: state.etag });
    fill(data, etag);
    $('tool-saved').textContent = `Saved at ${new Date().toLocaleTimeString()}.`;
  } catch (e) {
    if (e.status === 412) {
      const reload = el('button', { type: 'button', class: 'secondary' }, 'Reload the current version');
      reload.addEventListener('click', () => open(state.id).then(() => $('tool-name').focus()));
      showError(errBox, new Error('Someone else changed this tool since you opened it, so it was not saved. ' +
        'Reload it to see the current version (your unsaved changes here will be lost), then make your change again.'), reload);
      reload.focus();
    } else if (e.status === 400 && body.definition !== undefined && e.detail !== passthroughConflict) {
      showError(errBox, new Error('The tool was not saved: the server did not accept the definition (see below).'));
      definitionError(e);
    } else {
      showError(errBox, e);
    }
  } finally {
    button.disabled = false;
  }
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
  $('tool-reload').addEventListener('click', () => open(state.id));
  $('tool-validate').addEventListener('click', validate);
  $('tool-add-header').addEventListener('click', () => {
    const r = headerRow({ key: '', value: '' });
    state.headers.push(r);
    $('tool-headers').append(r.el);
    r.key.focus();
  });
}

/** reset forgets the open tool (sign-out). */
export function reset() {
  Object.assign(state, { id: null, etag: null, tool: null, definitionText: '', headers: [] });
  $('tool-headers').replaceChildren();
  $('tool-form').hidden = true;
  $('tools-rows').replaceChildren();
}
