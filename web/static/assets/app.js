// Quarry's console: signing in (single sign-on, email and password, or an
// API key), then one view at a time, chosen by the location's fragment
// (#search?q=…, the start page; #document/<id>, #chat/<session id>, #status?…, #connector/5, #credential/7, #pair/12, #group/3, #tool/3,
// #document-sets, #document-set/2, #assistants, #assistant/4, #workers, #audit?…; see route.js), so that links, the back button and
// reloads work.

import { call, getKey, setKey, clearKey } from './api.js';
import { $, el, showError, clearError, personName } from './ui.js';
import { session, role, homeView, permissions } from './session.js';
import { current } from './route.js';
import * as status from './status.js';
import * as connectors from './connectors.js';
import * as credential from './credential.js';
import * as pairs from './pairs.js';
import * as groups from './groups.js';
import * as people from './people.js';
import * as keys from './keys.js';
import * as account from './account.js';
import * as tools from './tools.js';
import * as audit from './audit.js';
import * as mcp from './mcp.js';
import * as workers from './workers.js';
import * as search from './search.js';
import * as chat from './chat.js';
import * as docsets from './docsets.js';
import * as assistants from './assistants.js';

let ways = null; // GET /auth/type: how people sign in here
let invitation = ''; // the token of the invitation link this page was opened with

// The reasons the single sign-on callback gives (?signin_error=), in words.
const signinErrors = {
  state: 'The sign-in could not be finished: it was started in another browser or tab, used already, or took too long. Try again.',
  provider: 'The sign-in was refused or cancelled at the identity provider.',
  code: 'The identity provider did not confirm the sign-in. Try again.',
  token: 'The identity provider\'s answer could not be verified. Try again, or ask an admin to check the set-up.',
  email: 'The identity provider did not give an email address for your account.',
  email_unverified: 'Your email address is not verified at the identity provider.',
  domain: 'Your email address is not of a domain this server accepts.',
  email_taken: 'An account with your email exists already, and the identity provider does not confirm the email is yours. Ask an admin.',
  inactive: 'Your account is deactivated. Ask an admin.',
  email_refused: 'Your email cannot have an account here: it looks like the email of another account, or mixes letters of different scripts. Ask an admin.',
  unavailable: 'The identity provider cannot be reached. Try again shortly, or sign in another way.',
};

/**
 * routes maps a fragment's view (and whether it has an id) to the section
 * shown, the nav entry it belongs to, and what fills it.
 */
const routes = {
  search: { section: 'search', open: (r) => search.show(r.params) },
  document: { section: 'document', nav: 'search', open: (r) => search.open(r.id, r.params) },
  chat: { section: 'chat', open: (r) => chat.show(r.id) },
  status: { section: 'status', open: (r) => status.show(r.params) },
  connectors: { section: 'connectors', open: () => connectors.list() },
  connector: { section: 'connector', nav: 'connectors', open: (r) => connectors.open(r.id === 'new' ? 'new' : Number(r.id)) },
  'document-sets': { section: 'document-sets', open: () => docsets.list() },
  'document-set': { section: 'document-set', nav: 'document-sets', open: (r) => docsets.open(r.id === 'new' ? 'new' : Number(r.id)) },
  assistants: { section: 'assistants', open: () => assistants.list() },
  assistant: { section: 'assistant', nav: 'assistants', open: (r) => assistants.open(r.id === 'new' ? 'new' : Number(r.id)) },
  credentials: { section: 'credentials', open: () => credential.list() },
  credential: { section: 'credential', nav: 'credentials', open: (r) => credential.open(r.id === 'new' ? 'new' : Number(r.id)) },
  pair: { section: (r) => (r.id === 'new' ? 'pair-new' : 'pair'), nav: 'status',
    open: (r) => (r.id === 'new' ? pairs.openNew(r.params) : pairs.open(Number(r.id))) },
  groups: { section: 'groups', open: () => groups.list() },
  group: { section: 'group', nav: 'groups', open: (r) => groups.open(Number(r.id)) },
  people: { section: 'people', open: (r) => people.show(r.params) },
  'api-keys': { section: 'api-keys', open: () => keys.list() },
  account: { section: 'account', open: () => account.show() },
  tools: { section: 'tools', open: () => tools.list() },
  tool: { section: 'tool', nav: 'tools', open: (r) => tools.open(r.id === 'new' ? 'new' : Number(r.id)) },
  mcp: { section: 'mcp', open: () => mcp.list() },
  'mcp-server': { section: 'mcp-server', nav: 'mcp', open: (r) => mcp.open(Number(r.id)) },
  workers: { section: 'workers', open: () => workers.list() },
  audit: { section: 'audit', open: (r) => audit.show(r.params) },
};

/** showView shows one section, marks the nav and moves focus to its title. */
function showView(name, nav, { focus = true } = {}) {
  for (const v of document.querySelectorAll('main > .view')) v.hidden = v.id !== `view-${name}`;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.view === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const title = $(`view-${name}`).querySelector('h1');
  document.title = `${title.textContent} · Quarry`;
  if (focus) title.focus();
}

/** navLink returns the nav's link of a section (null: a view everyone signed in may use). */
const navLink = (nav) => document.querySelector(`#nav a[data-view="${CSS.escape(nav)}"]`);

/**
 * allowed reports whether the signed-in person may use the section of a
 * nav link: their role is one of its data-roles, or they hold its
 * data-permission (a grant of one of their groups).
 */
const allowed = (a) => a.dataset.roles.split(' ').includes(role()) ||
  Boolean(a.dataset.permission && session.permissions.includes(a.dataset.permission));

/** mayUse reports whether the signed-in person may use a section. */
function mayUse(nav) {
  const a = navLink(nav);
  return !a || allowed(a);
}

// The roles, as a sentence names who holds them.
const roleWords = { admin: 'admins', global_curator: 'global curators', curator: 'curators', basic: 'basic users', limited: 'limited users' };

/** listed joins words as a sentence lists them: "a", "a and b", "a, b and c". */
const listed = (w) => (w.length < 2 ? w.join('') : `${w.slice(0, -1).join(', ')} and ${w[w.length - 1]}`);

/**
 * showDenied says, in place of a section the person's role may not use,
 * who may use it, and links to what they may use: the server would only
 * answer 403.
 */
function showDenied(nav, focus) {
  const a = navLink(nav);
  const who = a.dataset.roles.split(' ').map((r) => roleWords[r] || r);
  if (a.dataset.permission) who.push(`those whose groups are granted ${a.dataset.permission}`);
  $('denied-text').textContent = `${a.textContent} is for ${listed(who)}; your role is ${role()}, so it is not shown to you.`;
  const mine = [...document.querySelectorAll('#nav a')].filter((x) => !x.hidden)
    .map((x) => el('li', {}, el('a', { href: x.getAttribute('href') }, x.textContent)));
  mine.push(el('li', {}, el('a', { href: '#account' }, 'Your account')));
  $('denied-offer').textContent = 'What you may use:';
  $('denied-links').replaceChildren(...mine);
  showView('denied', '', { focus });
}

// The reasons an OAuth connection's callback gives (?oauth_error=), in words.
const oauthErrors = {
  state: 'The account could not be connected: the connection was started elsewhere, used already, or took more than 5 minutes. Try again.',
  signin: 'The account could not be connected: you were not signed in here when the provider sent you back. Sign in, then connect again.',
  user: 'The account could not be connected: the connection was started by someone else. Connect from your own session.',
  provider: 'The connection was refused or cancelled at the provider.',
  code: 'The provider did not accept the connection. Try again.',
  unreachable: 'The provider could not be reached to finish the connection. Try again shortly.',
  config: 'The OAuth configuration no longer exists.',
};

// The reasons an MCP server's OAuth callback gives (?mcp_error=), in words.
const mcpErrors = {
  state: 'The account could not be connected: the connection was started elsewhere, used already, or took too long. Try again.',
  signin: 'The account could not be connected: you were not signed in here when the authorization server sent you back. Sign in, then connect again.',
  user: 'The account could not be connected: the connection was started by someone else. Connect from your own session.',
  provider: 'The connection was refused or cancelled at the authorization server.',
  code: 'The authorization server did not accept the connection. Try again.',
  server: 'The MCP server changed or was deleted while you connected. Try again.',
  unreachable: 'The authorization server could not be reached to finish the connection. Try again shortly.',
};

/** notices shows what an OAuth provider's redirect back here says, once. */
function notices() {
  const params = new URLSearchParams(location.search);
  const connected = params.get('oauth_connected');
  const failed = params.get('oauth_error');
  const mcpConnected = params.get('mcp_connected');
  const mcpFailed = params.get('mcp_error');
  if (connected === null && failed === null && mcpConnected === null && mcpFailed === null) return;
  if (connected !== null) $('page-notice').textContent = 'Your account is connected: tools that use it now call their APIs as you.';
  if (failed !== null) showError($('page-alert'), new Error(oauthErrors[failed] || 'The account could not be connected. Try again.'));
  if (mcpConnected !== null) $('page-notice').textContent = 'The account is connected: the MCP server\'s tools now run with it.';
  if (mcpFailed !== null) showError($('page-alert'), new Error(mcpErrors[mcpFailed] || 'The account could not be connected. Try again.'));
  for (const k of ['oauth_connected', 'oauth_error', 'mcp_connected', 'mcp_error']) params.delete(k);
  const rest = params.toString();
  history.replaceState(null, '', location.pathname + (rest ? `?${rest}` : '') + location.hash);
}

/** route shows the view of the current fragment. */
async function route({ focus = true } = {}) {
  if (!session.me) {
    showView('signin', '', { focus });
    return;
  }
  const r = current();
  const needsID = ['connector', 'credential', 'pair', 'group', 'tool', 'mcp-server', 'document-set', 'assistant'].includes(r.view);
  const ok = routes[r.view] && (!needsID || r.id === 'new' || /^\d+$/.test(r.id));
  const target = ok ? r : { view: homeView(), id: '', params: new URLSearchParams() };
  const spec = routes[target.view];
  if (!mayUse(spec.nav || target.view)) {
    showDenied(spec.nav || target.view, focus);
    return;
  }
  const section = typeof spec.section === 'function' ? spec.section(target) : spec.section;
  showView(section, spec.nav || target.view, { focus });
  await spec.open(target);
  // The title may have changed while the view loaded.
  document.title = `${$(`view-${section}`).querySelector('h1').textContent} · Quarry`;
}

/** signedIn shows who is signed in, and the sections they may use. */
async function signedIn(account) {
  session.me = account;
  session.withKey = Boolean(getKey());
  session.permissions = account.role === 'limited' ? [] : await permissions();
  const who = account.name && !account.service_account
    ? [el('strong', { title: account.email }, account.name), ` (${account.email})`]
    : [el('strong', { title: account.email }, personName(account.email))];
  $('who-text').replaceChildren(el('span', { class: 'who-label' }, 'Signed in as '), ...who, ' ',
    el('span', { class: 'role', 'aria-label': `role ${account.role}` }, account.role));
  $('who').hidden = false;
  for (const a of document.querySelectorAll('#nav a')) a.hidden = !allowed(a);
  $('nav').hidden = false;
}

/** signedOut forgets who was signed in and shows the sign-in screen. */
function signedOut(message) {
  clearKey();
  session.me = null;
  session.withKey = false;
  session.permissions = [];
  for (const m of [search, chat, status, connectors, docsets, assistants, credential, pairs, groups, people, keys, account, tools, mcp, workers, audit]) m.reset();
  $('who').hidden = true;
  $('nav').hidden = true;
  for (const id of ['signin-key', 'login-password', 'register-password']) $(id).value = '';
  const box = $('signin-error');
  if (message) showError(box, new Error(message));
  else clearError(box);
  showSignInWays();
  showView('signin');
}

/**
 * signOut ends the session (or forgets the key). After a single sign-on,
 * the browser goes on to the identity provider so that it signs out too.
 */
async function signOut() {
  if (!getKey()) {
    try {
      const { data } = await call('POST', 'auth/logout');
      if (data && data.redirect_url) {
        clearKey();
        location.assign(data.redirect_url);
        return;
      }
    } catch (e) {
      if (e.status !== 401) {
        showError($('signin-error'), e);
      }
    }
  }
  signedOut();
}

/** showSignInWays shows the ways in that this server offers. */
function showSignInWays() {
  const sso = ways && ways.oidc;
  $('signin-sso').hidden = !sso;
  if (sso) {
    $('signin-sso-link').textContent = `Sign in with ${sso.display_name || 'single sign-on'}`;
    // Back to the same view once signed in.
    $('signin-sso-link').href = `auth/oidc/login?next=${encodeURIComponent('/' + location.hash)}`;
  }
  const local = Boolean(ways && ways.local_accounts);
  $('login-form').hidden = !local;
  $('register-form').hidden = true;
  $('register-show').hidden = !local || ways.registration === 'closed';
  // With no other way in, the API key form is open.
  $('signin-key-box').open = !sso && !local;
}

/** withButton disables a form's button while fn runs. */
async function withButton(button, fn) {
  button.disabled = true;
  try {
    await fn();
  } finally {
    button.disabled = false;
  }
}

/** signInWithPassword posts the sign-in form, as FastAPI-Users takes it. */
async function signInWithPassword(ev) {
  ev.preventDefault();
  const box = $('signin-error');
  clearError(box);
  const email = $('login-email');
  const password = $('login-password');
  await withButton($('login-submit'), async () => {
    try {
      await call('POST', 'auth/login', { body: new URLSearchParams({ username: email.value.trim(), password: password.value }) });
      password.value = '';
      await afterSignIn();
    } catch (e) {
      showError(box, e.status === 422 ? new Error('Enter your email and your password.') : e);
      password.setAttribute('aria-invalid', 'true');
      password.focus();
    }
  });
}

/** register makes a local account, then signs in with it. */
async function register(ev) {
  ev.preventDefault();
  const box = $('signin-error');
  clearError(box);
  const email = $('register-email');
  const password = $('register-password');
  await withButton($('register-submit'), async () => {
    try {
      const body = { email: email.value.trim(), password: password.value };
      if (invitation) body.invitation_token = invitation;
      await call('POST', 'auth/register', { body });
      invitation = '';
      await call('POST', 'auth/login', { body: new URLSearchParams({ username: email.value.trim(), password: password.value }) });
      password.value = '';
      await afterSignIn();
    } catch (e) {
      showError(box, e);
      password.setAttribute('aria-invalid', 'true');
      password.focus();
    }
  });
}

/** showRegister opens the registration form. */
function showRegister() {
  const open = ways && ways.registration === 'open';
  $('register-hint').textContent = invitation
    ? 'You were invited: choose a password for your account. The link works once.'
    : open
      ? 'Anyone may register. The first account of a new server becomes an admin.'
      : 'Registration is by invitation: open the link an admin sends you. The first account of a new server becomes an admin.';
  $('register-rules').textContent = `At least ${ways.password_min_length} characters; not a common password, and not your email.`;
  $('login-form').hidden = true;
  $('register-form').hidden = false;
  $('register-email').focus();
}

function hideRegister() {
  $('register-form').hidden = true;
  $('login-form').hidden = false;
  $('login-email').focus();
}

/** signInWithKey checks an API key and keeps it in this tab. */
async function signInWithKey(ev) {
  ev.preventDefault();
  const box = $('signin-error');
  clearError(box);
  const input = $('signin-key');
  const key = input.value.trim();
  if (!key) {
    showError(box, new Error('Paste an API key first.'));
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    return;
  }
  await withButton(ev.submitter || $('signin-form').querySelector('button'), async () => {
    try {
      const { data } = await call('GET', 'me', { key });
      input.removeAttribute('aria-invalid');
      input.value = '';
      setKey(key);
      await signedIn(data);
      await route();
    } catch (e) {
      showError(box, e.status === 401 ? new Error('This key was not accepted (401). Check that it is complete and not revoked.') : e);
      input.setAttribute('aria-invalid', 'true');
      input.focus();
    }
  });
}

/** afterSignIn loads the signed-in person and shows the current view. */
async function afterSignIn() {
  const { data } = await call('GET', 'me');
  await signedIn(data);
  await route();
}

async function start() {
  $('signin-form').addEventListener('submit', signInWithKey);
  $('login-form').addEventListener('submit', signInWithPassword);
  $('register-form').addEventListener('submit', register);
  $('register-show').addEventListener('click', showRegister);
  $('register-cancel').addEventListener('click', hideRegister);
  $('sign-out').addEventListener('click', () => signOut());
  window.addEventListener('quarry:unauthorized', () => {
    if (session.me) signedOut('The server no longer accepts your sign-in (401): it ended or was revoked. Sign in again.');
  });
  window.addEventListener('hashchange', () => {
    $('page-notice').textContent = '';
    clearError($('page-alert'));
    route();
  });
  for (const m of [search, chat, status, connectors, docsets, assistants, credential, pairs, groups, people, keys, account, tools, mcp, workers, audit]) m.wire();

  // Back from the identity provider with a reason why not?
  const params = new URLSearchParams(location.search);
  const reason = params.get('signin_error');
  if (reason !== null) {
    showError($('signin-error'), new Error(signinErrors[reason] || 'The sign-in did not succeed. Try again.'));
    history.replaceState(null, '', location.pathname + location.hash);
  }
  notices();
  try {
    ({ data: ways } = await call('GET', 'auth/type'));
  } catch (e) {
    showError($('signin-error'), e);
  }
  showSignInWays();
  // Opened from an invitation's link (#register?email=…&invitation=…): the
  // registration, with the email filled in; the token leaves the address.
  const opened = current();
  if (opened.view === 'register') {
    invitation = opened.params.get('invitation') ?? '';
    history.replaceState(null, '', location.pathname + location.search);
    if (ways && ways.local_accounts) {
      showRegister();
      $('register-email').value = opened.params.get('email') ?? '';
      $('register-password').focus();
    }
  }
  // Signed in already: with this tab's key, or with the session cookie.
  try {
    const { data } = await call('GET', 'me');
    await signedIn(data);
  } catch (e) {
    if (e.status === 401) {
      clearKey();
    } else if (getKey()) {
      // Keep the key: the server may just be restarting.
      showError($('signin-error'), e);
    }
  }
  await route({ focus: false });
}

start();
