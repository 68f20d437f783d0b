// Small DOM helpers. Text always goes in as text, never as HTML.

import { errorNodes } from './api.js';

/** $ returns the element with id. */
export const $ = (id) => document.getElementById(id);

/**
 * el makes an element: props are set as properties, except "class",
 * "for", "aria-*" and "data-*", which are attributes; children are nodes
 * or strings.
 */
export function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null) continue;
    if (k === 'class') e.className = v;
    else if (k === 'for') e.htmlFor = v;
    else if (k.startsWith('aria-') || k.startsWith('data-')) e.setAttribute(k, String(v));
    else e[k] = v;
  }
  e.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return e;
}

/** showError puts err, readably, in container (empty it with clearError). */
export function showError(container, err, ...extra) {
  container.replaceChildren(...errorNodes(err), ...extra);
}

export function clearError(container) {
  container.replaceChildren();
}

/** fmtInt renders 10000 as "10,000". */
export const fmtInt = (n) => n.toLocaleString('en-US');

/** fmtTime renders an RFC 3339 time in the browser's locale. */
export function fmtTime(s) {
  if (!s) return '';
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? s : d.toLocaleString();
}

/** isMasked tells whether v looks like one of the server's masks. */
export function isMasked(v) {
  return typeof v === 'string' && (/^\u2022{12}$/.test(v) || v === '*****' || /^.{4}\.\.\..{4}$/su.test(v));
}

let idSeq = 0;
/** uid returns an id unique in the page, for label/input pairs. */
export const uid = (prefix) => `${prefix}-${++idSeq}`;
