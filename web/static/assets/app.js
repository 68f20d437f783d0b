// Quarry's admin page: signing in with an API key, then one view at a time,
// chosen by the location's fragment (#status, #credential/7, #tools,
// #tool/3), so that links, the back button and reloads work.

import { call, getKey, setKey, clearKey } from './api.js';
import { $, el, showError, clearError } from './ui.js';
import * as status from './status.js';
import * as credential from './credential.js';
import * as tools from './tools.js';

let me = null; // GET /me of the signed-in key

const views = ['signin', 'status', 'credential', 'tools', 'tool'];

/** showView shows one section, marks the nav and moves focus to its title. */
function showView(name, { focus = true } = {}) {
  for (const v of views) $(`view-${v}`).hidden = v !== name;
  const section = name === 'credential' ? 'status' : name === 'tool' ? 'tools' : name;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.view === section) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const title = $(`view-${name}`).querySelector('h1');
  document.title = `${title.textContent} · Quarry admin`;
  if (focus) title.focus();
}

/** route shows the view of the current fragment. */
async function route({ focus = true } = {}) {
  if (!me) {
    showView('signin', { focus });
    return;
  }
  const hash = location.hash.replace(/^#/, '');
  let m;
  if ((m = /^credential\/(\d+)$/.exec(hash))) {
    showView('credential', { focus });
    await credential.open(Number(m[1]));
  } else if ((m = /^tool\/(\d+)$/.exec(hash))) {
    showView('tool', { focus });
    await tools.open(Number(m[1]));
  } else if (hash === 'tools') {
    showView('tools', { focus });
    await tools.list();
  } else {
    showView('status', { focus });
    await status.show(me);
  }
}

/** signedIn shows who the key belongs to. */
function signedIn(account) {
  me = account;
  $('who-text').replaceChildren('Signed in as ', el('strong', { title: account.email }, account.email), ' ',
    el('span', { class: 'role', 'aria-label': `role ${account.role}` }, account.role));
  $('who').hidden = false;
  $('nav').hidden = false;
}

function signOut(message) {
  clearKey();
  me = null;
  status.reset();
  credential.reset();
  tools.reset();
  $('who').hidden = true;
  $('nav').hidden = true;
  $('signin-key').value = '';
  const box = $('signin-error');
  if (message) showError(box, new Error(message));
  else clearError(box);
  showView('signin');
  $('signin-key').focus();
}

async function signIn(ev) {
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
  const button = ev.submitter || $('signin-form').querySelector('button');
  button.disabled = true;
  try {
    const { data } = await call('GET', 'me', { key });
    input.removeAttribute('aria-invalid');
    input.value = '';
    setKey(key);
    signedIn(data);
    await route();
  } catch (e) {
    showError(box, e.status === 401 ? new Error('This key was not accepted (401). Check that it is complete and not revoked.') : e);
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  } finally {
    button.disabled = false;
  }
}

async function start() {
  $('signin-form').addEventListener('submit', signIn);
  $('sign-out').addEventListener('click', () => signOut());
  window.addEventListener('quarry:unauthorized', () => {
    if (me) signOut('The server no longer accepts this key (401). Sign in again.');
  });
  window.addEventListener('hashchange', () => route());
  status.wire(() => me);
  credential.wire();
  tools.wire();

  if (getKey()) {
    try {
      const { data } = await call('GET', 'me');
      signedIn(data);
    } catch (e) {
      if (e.status === 401) {
        clearKey();
      } else {
        // Keep the key: the server may just be restarting.
        showError($('signin-error'), e);
      }
    }
  }
  await route({ focus: false });
}

start();
