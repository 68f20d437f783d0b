// A custom tool's page, below its editor: "Try it" (POST tool/{id}/run,
// with a form built from the operation's parameters) and, for a tool with
// an OAuth configuration, the signed-in person's own connection to it
// (Connect: POST oauth-config/initiate, then the provider; Disconnect:
// DELETE oauth-config/{id}/token). Everyone but limited callers may run a
// tool; the server decides, and its refusals are shown as it answered.

import { call } from './api.js';
import { $, el, showError, clearError, busy, uid, fmtTime } from './ui.js';
import { role } from './session.js';

const state = { tool: null, methods: [], fields: [], body: null };

/** sanitize is the server's method name of an operationId. */
const sanitize = (id) => String(id).replace(/[^a-zA-Z0-9_-]/g, '_');

/** resolve follows a local $ref ("#/components/..."), or returns v. */
function resolve(def, v, depth = 0) {
  if (!v || typeof v !== 'object' || typeof v.$ref !== 'string' || !v.$ref.startsWith('#/') || depth > 16) return v;
  let node = def;
  for (const part of v.$ref.slice(2).split('/')) {
    if (!node || typeof node !== 'object') return {};
    node = node[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return resolve(def, node, depth + 1);
}

/** methodsOf lists the operations of a definition, as the server names them. */
function methodsOf(def) {
  const out = [];
  const skip = ['$ref', 'summary', 'description', 'servers', 'parameters'];
  for (const [path, rawItem] of Object.entries((def && def.paths) || {})) {
    const item = resolve(def, rawItem);
    if (path.startsWith('x-') || !item || typeof item !== 'object') continue;
    for (const [key, op] of Object.entries(item)) {
      if (skip.includes(key) || key.startsWith('x-') || !op || typeof op !== 'object' || !op.operationId) continue;
      const params = new Map();
      for (const p of [...(item.parameters || []), ...(op.parameters || [])].map((x) => resolve(def, x))) {
        if (p && p.name && p.in) params.set(`${p.in} ${p.name}`, p);
      }
      const rb = resolve(def, op.requestBody);
      const json = rb && rb.content && rb.content['application/json'];
      out.push({
        name: sanitize(op.operationId), verb: key.toUpperCase(), path, summary: op.summary || op.description || '',
        params: [...params.values()].filter((p) => !(p.in === 'header' && ['accept', 'content-type', 'authorization'].includes(p.name.toLowerCase()))),
        body: json ? { schema: resolve(def, json.schema) || {}, required: !!rb.required } : null,
      });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** kind tells how a parameter's value is typed in: its schema's type. */
function kind(def, p) {
  if (p.content) return 'json';
  const s = resolve(def, p.schema) || {};
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
  if (t === 'boolean' || t === 'integer' || t === 'number') return t;
  if (t === 'array' || t === 'object') return 'json';
  return 'string';
}

/** fieldFor builds the input of one parameter. */
function fieldFor(def, p) {
  const id = uid('tool-try-p');
  const k = kind(def, p);
  let input;
  if (k === 'boolean') {
    input = el('select', { id }, el('option', { value: '' }, '(not sent)'), el('option', { value: 'true' }, 'true'), el('option', { value: 'false' }, 'false'));
  } else if (k === 'json') {
    input = el('textarea', { id, rows: 2, class: 'code', spellcheck: false });
  } else {
    input = el('input', { id, type: 'text', autocomplete: 'off', spellcheck: false, inputMode: k === 'string' ? 'text' : 'decimal' });
  }
  const hint = [p.in, k === 'json' ? 'JSON' : k, p.required || p.in === 'path' ? 'required' : 'optional'].join(', ');
  const hintID = `${id}-hint`;
  input.setAttribute('aria-describedby', hintID);
  const field = el('div', { class: 'field' }, el('label', { for: id }, p.name),
    input, el('p', { class: 'muted small', id: hintID }, hint + (p.description ? `: ${p.description}` : '')));
  return { name: p.name, kind: k, input, field };
}

/** value reads a field: undefined when empty (not sent); throws for bad JSON. */
function value(f) {
  const t = f.input.value;
  if (t.trim() === '') return undefined;
  switch (f.kind) {
    case 'boolean': return t === 'true';
    case 'integer':
    case 'number': return Number.isFinite(Number(t)) ? Number(t) : t; // the server says what is wrong
    case 'json':
      try {
        return JSON.parse(t);
      } catch (e) {
        throw new Error(`${f.name} is not valid JSON: ${e.message}`);
      }
    default: return t;
  }
}

/** showMethod builds the form of the chosen method. */
function showMethod() {
  const m = state.methods.find((x) => x.name === $('tool-try-method').value);
  $('tool-try-summary').textContent = m ? `${m.verb} ${m.path}${m.summary ? ` · ${m.summary}` : ''}` : '';
  const def = state.tool.definition;
  state.fields = m ? m.params.map((p) => fieldFor(def, p)) : [];
  state.body = null;
  const nodes = state.fields.map((f) => f.field);
  if (m && m.body) {
    const id = uid('tool-try-body');
    const area = el('textarea', { id, rows: 5, class: 'code', spellcheck: false, 'aria-describedby': `${id}-hint` });
    state.body = { input: area, required: m.body.required };
    nodes.push(el('div', { class: 'field' }, el('label', { for: id }, 'Request body'), area,
      el('p', { class: 'muted small', id: `${id}-hint` }, `JSON, ${m.body.required ? 'required' : 'optional'}`)));
  }
  if (nodes.length === 0) nodes.push(el('p', { class: 'muted small' }, 'This method takes no arguments.'));
  $('tool-try-params').replaceChildren(...nodes);
}

/** answer shows what the tool's server answered. */
function answer(r) {
  const body = r.body_encoding === 'json' ? JSON.stringify(r.body, null, 2) : String(r.body);
  const facts = [`HTTP ${r.status}`, r.content_type || 'no content type', `${r.duration_ms} ms`];
  const headers = Object.entries(r.headers || {});
  return el('div', { class: 'run-answer' },
    el('p', {}, el('span', { class: 'status' }, facts[0]), ` · ${facts.slice(1).join(' · ')}`,
      r.truncated ? el('span', { class: 'badge' }, 'cut at the size limit') : null,
      r.body_encoding === 'base64' ? el('span', { class: 'badge' }, 'binary, shown as base64') : null),
    el('pre', { class: 'run-body code', tabIndex: 0, 'aria-label': 'Body of the answer' }, body),
    headers.length ? el('p', { class: 'muted small' }, headers.map(([k, v]) => `${k}: ${v}`).join(' · ')) : null);
}

async function run(ev) {
  ev.preventDefault();
  const box = $('tool-try-error');
  clearError(box);
  const out = $('tool-try-result');
  const args = {};
  try {
    for (const f of state.fields) {
      const v = value(f);
      if (v !== undefined) args[f.name] = v;
    }
    if (state.body && state.body.input.value.trim() !== '') {
      try {
        args.requestBody = JSON.parse(state.body.input.value);
      } catch (e) {
        throw new Error(`The request body is not valid JSON: ${e.message}`);
      }
    }
  } catch (e) {
    showError(box, e);
    return;
  }
  out.replaceChildren('Running…');
  await busy($('tool-try-run'), async () => {
    try {
      const { data } = await call('POST', `tool/${state.tool.id}/run`, { body: { method: $('tool-try-method').value, args } });
      out.replaceChildren(answer(data));
    } catch (e) {
      out.replaceChildren();
      showError(box, e);
      if (e.status === 409 && /^Connect your/.test(String(e.detail))) $('tool-connect-button').focus();
    }
  });
}

/** connection shows the person's connection to the tool's OAuth configuration. */
async function connection() {
  const t = state.tool;
  const box = $('tool-connect-error');
  clearError(box);
  const text = $('tool-connect-text');
  const connect = $('tool-connect-button');
  const disconnect = $('tool-disconnect-button');
  if (t.oauth_config_id === null || t.oauth_config_id === undefined) {
    $('tool-connect-buttons').hidden = true;
    text.textContent = 'This tool sends your own single sign-on access token to its API: run it signed in with single sign-on (API keys and passwords have none).';
    return;
  }
  $('tool-connect-buttons').hidden = false;
  const name = t.oauth_config_name || `OAuth configuration #${t.oauth_config_id}`;
  text.textContent = 'Loading…';
  try {
    const { data } = await call('GET', 'user-oauth-token/status');
    const mine = data.find((s) => s.oauth_config_id === t.oauth_config_id);
    if (!mine) {
      text.textContent = `This tool calls its API with your own ${name} account, which is not connected.`;
      connect.textContent = `Connect ${name}`;
      disconnect.hidden = true;
      return;
    }
    const exp = mine.expires_at ? fmtTime(new Date(mine.expires_at * 1000).toISOString()) : null;
    text.textContent = `Your ${name} account is connected${exp ? `; its token ${mine.is_expired ? 'expired' : 'expires'} ${exp}` : ''}` +
      (mine.is_expired ? ' (a run refreshes it if the provider allows).' : '.');
    connect.textContent = 'Connect again';
    disconnect.hidden = false;
  } catch (e) {
    text.textContent = '';
    showError(box, e);
  }
}

async function startConnect() {
  const t = state.tool;
  const box = $('tool-connect-error');
  clearError(box);
  await busy($('tool-connect-button'), async () => {
    try {
      const { data } = await call('POST', 'oauth-config/initiate', {
        body: { oauth_config_id: t.oauth_config_id, return_path: `${location.pathname}#tool/${t.id}` },
      });
      location.assign(data.authorization_url);
    } catch (e) {
      showError(box, e);
    }
  });
}

async function stopConnect() {
  const t = state.tool;
  const box = $('tool-connect-error');
  clearError(box);
  await busy($('tool-disconnect-button'), async () => {
    try {
      await call('DELETE', `oauth-config/${t.oauth_config_id}/token`);
      await connection();
      $('tool-connect-button').focus();
    } catch (e) {
      showError(box, e);
    }
  });
}

/** show fills the sections of tool t's page (hidden for built-ins and limited callers). */
export function show(t) {
  state.tool = t;
  const custom = t && (t.in_code_tool_id === null || t.in_code_tool_id === undefined) && t.definition;
  const may = role() !== 'limited' && role() !== '';
  $('tool-try').hidden = !(custom && may);
  const needsAccount = custom && may && (t.oauth_config_id !== null && t.oauth_config_id !== undefined || t.passthrough_auth);
  $('tool-connect').hidden = !needsAccount;
  clearError($('tool-try-error'));
  $('tool-try-result').replaceChildren();
  if (!custom || !may) return;
  state.methods = methodsOf(t.definition);
  $('tool-try-method').replaceChildren(...state.methods.map((m) => el('option', { value: m.name }, m.name)));
  showMethod();
  $('tool-try-run').disabled = state.methods.length === 0;
  if (needsAccount) connection();
}

/** wire connects the controls, once. */
export function wire() {
  $('tool-try-method').addEventListener('change', showMethod);
  $('tool-try-form').addEventListener('submit', run);
  $('tool-connect-button').addEventListener('click', startConnect);
  $('tool-disconnect-button').addEventListener('click', stopConnect);
}

/** reset forgets the tool (sign-out, or another page). */
export function reset() {
  Object.assign(state, { tool: null, methods: [], fields: [], body: null });
  $('tool-try').hidden = true;
  $('tool-connect').hidden = true;
  $('tool-try-params').replaceChildren();
  $('tool-try-result').replaceChildren();
}
