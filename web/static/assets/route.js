// The location's fragment says which view is shown and how:
// #<view>[/<id>][?<params>], e.g. #status?q=wiki&sort=name&page=3 or
// #credential/7. A link, a reload or the back button brings the same view.

/** current parses location.hash into {view, id, params}. */
export function current() {
  return parse(location.hash);
}

/** parse reads a fragment such as "#pair/12?x=1". */
export function parse(hash) {
  const text = hash.replace(/^#/, '');
  const q = text.indexOf('?');
  const path = q < 0 ? text : text.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : text.slice(q + 1));
  const [view = '', id = ''] = path.split('/');
  return { view, id, params };
}

/** href builds a fragment from a view, an optional id and params (empty values are left out). */
export function href(view, id, params) {
  let h = `#${view}${id !== undefined && id !== null && id !== '' ? `/${id}` : ''}`;
  if (params) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
    }
    const s = p.toString();
    if (s) h += `?${s}`;
  }
  return h;
}


/**
 * setParams records a view's state in the location without routing again
 * (the History API fires no hashchange): as a new history entry (push), so
 * that the back button returns to the state before, or in place of the
 * current one (while typing).
 */
export function setParams(view, params, { push = true } = {}) {
  const h = href(view, undefined, params);
  if (h === location.hash || (h === `#${view}` && location.hash === '')) return;
  if (push) history.pushState(null, '', h);
  else history.replaceState(null, '', h);
}

/** go shows another view, as a link would. */
export function go(h) {
  if (location.hash === h) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = h;
}
