// Small DOM helpers shared by the views. Text always goes in as text,
// never as HTML.

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
    else if (k.startsWith('aria-') || k.startsWith('data-') || k === 'role') e.setAttribute(k, String(v));
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

/**
 * writeError shows the server's answer to a write in box. A 412 (someone
 * else saved first) offers to reload, with focus on the offer; reload is
 * called when it is taken.
 */
export function writeError(box, err, { what = 'it', reload } = {}) {
  if (err && err.status === 412 && reload) {
    const button = el('button', { type: 'button', class: 'secondary' }, 'Reload the current version');
    button.addEventListener('click', reload);
    showError(box, new Error(`Someone else changed ${what} since you opened it, so it was not saved. ` +
      'Reload it to see the current version (your unsaved changes here will be lost), then make your change again.'), button);
    button.focus();
    return;
  }
  showError(box, err);
  box.scrollIntoView({ block: 'nearest' });
}

/**
 * busy disables button while fn runs. A focused button that is disabled
 * loses the focus to the page's body, where Enter and Space do nothing: it
 * gets it back, unless fn moved it elsewhere.
 */
export async function busy(button, fn) {
  const focused = document.activeElement === button;
  button.disabled = true;
  try {
    return await fn();
  } finally {
    button.disabled = false;
    const lost = !document.activeElement || document.activeElement === document.body;
    if (focused && lost && button.isConnected && button.offsetParent !== null) button.focus();
  }
}

/** said shows a short success message in a status element. */
export function said(node, text) {
  node.textContent = text;
}

/**
 * confirmAction asks, in a modal dialog, before something that cannot be
 * undone; it resolves true if the person confirmed. Focus starts on
 * Cancel and returns where it was.
 */
export function confirmAction(text, yes = 'Delete') {
  const dialog = $('confirm');
  $('confirm-text').textContent = text;
  $('confirm-yes').textContent = yes;
  const back = document.activeElement;
  return new Promise((resolve) => {
    const done = (v) => {
      dialog.removeEventListener('close', onClose);
      if (dialog.open) dialog.close();
      if (back && back.isConnected) back.focus();
      resolve(v);
    };
    const onClose = () => done(dialog.returnValue === 'yes');
    dialog.addEventListener('close', onClose);
    dialog.returnValue = '';
    dialog.showModal();
    $('confirm-no').focus();
  });
}

/**
 * confirmDelete asks, with confirmAction(question, yes), before deleting
 * something; then, with button (if any) busy and box cleared, it awaits
 * request() and done(). An error is shown in box; a 409 (something still
 * uses it) with the nodes conflict() resolves to, if given.
 */
export async function confirmDelete({ question, yes, box, button, request, done, conflict }) {
  if (!(await confirmAction(question, yes))) return;
  clearError(box);
  const run = async () => {
    try {
      await request();
      await done();
    } catch (e) {
      if (e.status === 409 && conflict) {
        showError(box, e, ...(await conflict()));
        box.scrollIntoView({ block: 'nearest' });
      } else {
        writeError(box, e);
      }
    }
  };
  await (button ? busy(button, run) : run());
}

/**
 * secretBox shows a value that is shown once (an API key, a password), with
 * a button that copies it, in container.
 */
export function secretBox(container, title, value, note) {
  const id = `${container.id}-value`;
  const input = el('input', { type: 'text', id, readOnly: true, value, class: 'code', spellcheck: false, autocomplete: 'off' });
  const copied = el('span', { class: 'muted small', role: 'status', 'aria-live': 'polite' });
  const copy = el('button', { type: 'button', class: 'secondary' }, 'Copy');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value);
      copied.textContent = 'Copied.';
    } catch {
      input.select();
      copied.textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
    }
  });
  const close = el('button', { type: 'button', class: 'secondary' }, 'Done');
  close.addEventListener('click', () => {
    container.hidden = true;
    container.replaceChildren();
    // The button is gone with the box: the focus goes to the view's title
    // (not the page's body), from where Tab goes on through the view.
    const title = container.closest('.view')?.querySelector('h1');
    if (title) title.focus();
  });
  container.replaceChildren(
    el('h2', {}, title),
    el('p', {}, note),
    el('label', { for: id }, 'Shown once'),
    el('div', { class: 'inline' }, input, copy, close),
    copied,
  );
  container.hidden = false;
  copy.focus();
}

/**
 * keepFocus keeps the focus in a group of buttons (a pager) when the one
 * pressed can no longer be pressed (the last page reached): a disabled
 * button loses the focus to the page's body. It goes to other instead.
 */
export function keepFocus(pressed, other) {
  const lost = document.activeElement === pressed || document.activeElement === document.body || !document.activeElement;
  if (pressed.disabled && lost && !other.disabled) other.focus();
}

/** fmtInt renders 10000 as "10,000". */
export const fmtInt = (n) => n.toLocaleString('en-US');

/** fmtTime renders an RFC 3339 time in the browser's locale. */
export function fmtTime(s) {
  if (!s) return '';
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? s : d.toLocaleString();
}

/** ago renders how long before now an RFC 3339 time was: "4 s ago", "3 min ago". */
export function ago(t, now = Date.now()) {
  const d = new Date(t).getTime();
  if (!t || Number.isNaN(d)) return '';
  const s = Math.max(0, Math.round((now - d) / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

/** words renders an enum value readably: "INITIAL_INDEXING" as "initial indexing". */
export const words = (v) => String(v ?? '').toLowerCase().replaceAll('_', ' ');

/** attemptBadge is the badge class of an index attempt's status. */
export const attemptBadge = (s) => ({ success: 'active', completed_with_errors: 'paused', failed: 'failed',
  not_started: 'waiting', in_progress: 'running' })[s] ?? '';

/**
 * safeLink returns a URL a connector gave, if it is http(s) or imap (a
 * mail message's, RFC 5092, which a mail client opens), or null: nothing
 * else (javascript:, data:…) ever becomes a link.
 */
export function safeLink(u) {
  if (typeof u !== 'string') return null;
  try {
    const url = new URL(u);
    return ['https:', 'http:', 'imap:'].includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * personName names the person or API key behind an email, as every view
 * names an owner, a creator or an actor: an API key's account, whose email
 * Quarry makes up (api_key__<its name>@<id>.quarry.invalid), by the key's
 * name ("API key “bootstrap admin”"); anyone else by their email.
 */
export function personName(email) {
  const m = /^api_key__(.*)@[^@]+\.quarry\.invalid$/i.exec(email ?? '');
  if (!m) return email;
  return m[1] === 'unnamed' ? 'an unnamed API key' : `API key “${m[1].replaceAll('_', ' ')}”`;
}

/** isMasked tells whether v looks like one of the server's masks. */
export function isMasked(v) {
  return typeof v === 'string' && (/^\u2022{12}$/.test(v) || v === '*****' || /^.{4}\.\.\..{4}$/su.test(v));
}

let idSeq = 0;
/** uid returns an id unique in the page, for label/input pairs. */
export const uid = (prefix) => `${prefix}-${++idSeq}`;

/** plural renders "1 pair", "2 pairs". */
export const plural = (n, one, many = `${one}s`) => `${fmtInt(n)} ${n === 1 ? one : many}`;

/** loadingRow is a table row saying what is being loaded. */
export const loadingRow = (cols, text = 'Loading…') => el('tr', {}, el('td', { colSpan: cols, class: 'muted' }, text));

/** emptyRow is a table row for an empty list, with an optional link to start one. */
export function emptyRow(cols, text, link) {
  return el('tr', {}, el('td', { colSpan: cols, class: 'empty-cell' }, text, link ? ' ' : null, link || null));
}

/**
 * groupPicker shows one checkbox per group in container, the selected ids
 * checked, and returns a function that reads the checked ids. Groups are
 * {id, name}; a name may be null (people other than admins see ids only).
 */
export function groupPicker(container, groups, selected = []) {
  const chosen = new Set(selected);
  for (const g of groups) chosen.delete(g.id);
  const all = [...groups, ...[...chosen].map((id) => ({ id, name: null }))];
  const boxes = all.map((g) => {
    const id = uid(`${container.id}-g`);
    const box = el('input', { type: 'checkbox', id, value: String(g.id), checked: selected.includes(g.id) });
    return { box, row: el('div', { class: 'checks' }, box, el('label', { for: id }, g.name ? `${g.name} (#${g.id})` : `Group #${g.id}`)) };
  });
  container.replaceChildren(...(boxes.length
    ? [el('p', { class: 'muted small' }, 'Groups'), ...boxes.map((b) => b.row)]
    : [el('p', { class: 'muted small' }, 'No groups to share with.')]));
  return () => boxes.filter((b) => b.box.checked).map((b) => Number(b.box.value));
}

/** The units a frequency in seconds is shown in, largest first. */
const units = [86400, 3600, 60, 1];

/** setFreq shows seconds in a number input and a unit select. */
export function setFreq(input, unit, seconds) {
  if (seconds === null || seconds === undefined) {
    input.value = '';
    unit.value = '3600';
    return;
  }
  const u = units.find((x) => seconds % x === 0) || 1;
  input.value = String(seconds / u);
  unit.value = String(u);
}

/** getFreq reads seconds back, null when empty; throws a message if not a whole positive number. */
export function getFreq(input, unit) {
  const t = input.value.trim();
  if (t === '') return null;
  const n = Number(t);
  if (!Number.isInteger(n) || n <= 0) throw new Error('Enter a whole number greater than 0, or leave it empty.');
  return n * Number(unit.value);
}

/** fmtFreq renders seconds readably, e.g. 3600 as "1 h". */
export function fmtFreq(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  const names = { 86400: 'd', 3600: 'h', 60: 'min', 1: 's' };
  const u = units.find((x) => seconds % x === 0) || 1;
  return `${fmtInt(seconds / u)} ${names[u]}`;
}
