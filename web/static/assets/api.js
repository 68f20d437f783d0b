// Calls to Quarry's API, as the signed-in person (the session cookie) or
// with an API key, and the rendering of its error bodies.

const storageKey = 'quarry.apiKey';

/** The key of this tab's session, or null. */
export function getKey() {
  return sessionStorage.getItem(storageKey);
}

export function setKey(key) {
  sessionStorage.setItem(storageKey, key);
}

export function clearKey() {
  sessionStorage.removeItem(storageKey);
}

/** An answer of the API that is not a 2xx. */
export class APIError extends Error {
  constructor(status, detail) {
    super(typeof detail === 'string' ? detail : `HTTP ${status}`);
    this.status = status;
    this.detail = detail; // a string, or FastAPI's list of validation errors (422)
  }
}

/**
 * call sends one request to the API, relative to the page (so that a base
 * path works): with the API key of this tab if there is one, otherwise
 * with the session cookie; a body is sent as JSON, or as a form when it is
 * URLSearchParams. It returns {data, etag, headers}; a non-2xx answer throws
 * APIError. A 401 also fires the window event "quarry:unauthorized".
 */
export async function call(method, path, { body, etag, key } = {}) {
  const res = await send(method, path, { body, etag, key });
  const data = parseJSON(await res.text());
  if (!res.ok) refuse(res, data, key);
  return { data, etag: res.headers.get('ETag'), headers: res.headers };
}

/**
 * stream sends one request whose answer is JSON lines (NDJSON), as call
 * does, and calls each with every line's value as it arrives; it returns
 * when the answer ends. A non-2xx answer throws APIError before any line.
 */
export async function stream(method, path, { body, key } = {}, each) {
  const res = await send(method, path, { body, key, accept: 'application/x-ndjson' });
  if (!res.ok) refuse(res, parseJSON(await res.text()), key);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let rest = '';
  const line = (s) => {
    if (s.trim()) each(JSON.parse(s));
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += value;
      for (let i = rest.indexOf('\n'); i >= 0; i = rest.indexOf('\n')) {
        line(rest.slice(0, i));
        rest = rest.slice(i + 1);
      }
    }
  } catch (e) {
    if (e instanceof SyntaxError) throw e;
    throw new APIError(0, `The answer was cut off (${e.message}).`);
  }
  line(rest);
}

/** send makes one fetch with this tab's key or the session cookie; a network failure is APIError 0. */
async function send(method, path, { body, etag, key, accept = 'application/json' }) {
  const headers = { 'Accept': accept };
  const bearer = key ?? getKey();
  if (bearer) headers['Authorization'] = `Bearer ${bearer}`;
  if (body !== undefined && !(body instanceof URLSearchParams)) headers['Content-Type'] = 'application/json';
  if (etag) headers['If-Match'] = etag;
  try {
    return await fetch(path, {
      method,
      headers,
      body: body === undefined || body instanceof URLSearchParams ? body : JSON.stringify(body),
      cache: 'no-store',
      // The session cookie goes along; it never leaves this site.
      credentials: bearer ? 'omit' : 'same-origin',
      redirect: 'error',
    });
  } catch (e) {
    throw new APIError(0, `The server could not be reached (${e.message}).`);
  }
}

/** parseJSON reads an answer's text as JSON, or null. */
function parseJSON(text) {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** refuse throws the APIError of a non-2xx answer (a 401 also fires "quarry:unauthorized"). */
function refuse(res, data, key) {
  const detail = data && data.detail !== undefined ? data.detail : `${res.status} ${res.statusText}`;
  if (res.status === 401 && key === undefined) {
    window.dispatchEvent(new CustomEvent('quarry:unauthorized'));
  }
  throw new APIError(res.status, detail);
}

/**
 * describeLoc renders a FastAPI error location, e.g. ["body",
 * "credential_json", "port"] as "credential_json › port".
 */
function describeLoc(loc) {
  const parts = (Array.isArray(loc) ? loc : []).map(String);
  if (parts.length > 1 && (parts[0] === 'body' || parts[0] === 'path' || parts[0] === 'query')) {
    parts.shift();
  }
  return parts.join(' › ') || 'request';
}

/**
 * errorNodes returns DOM nodes that show an error readably: the detail
 * sentence, or for a 422 a list with one line per problem.
 */
export function errorNodes(err) {
  const out = [];
  const detail = err instanceof APIError ? err.detail : String(err && err.message ? err.message : err);
  const prefix = err instanceof APIError && err.status ? `${err.status}: ` : '';
  if (Array.isArray(detail)) {
    const p = document.createElement('p');
    p.textContent = `${prefix}The server did not accept the request:`;
    const ul = document.createElement('ul');
    for (const d of detail) {
      const li = document.createElement('li');
      const code = document.createElement('code');
      code.textContent = describeLoc(d && d.loc);
      li.append(code, `: ${d && d.msg ? d.msg : JSON.stringify(d)}`);
      ul.append(li);
    }
    out.push(p, ul);
  } else {
    const p = document.createElement('p');
    p.textContent = prefix + (typeof detail === 'string' ? detail : JSON.stringify(detail));
    out.push(p);
  }
  return out;
}
