// Drives people signing in to Quarry's admin page in Debian's Chromium, as
// web/e2e_test.go asks: node signin.mjs <url> <admin API key> <screenshot dir>
//
// The server has single sign-on set up with the provider of idp.mjs (any
// login, any password) and local accounts open. The script signs Ann in
// through the provider's own login and consent pages; Ann makes a
// credential and sees herself as its owner; Cy signs in the same way, is
// made curator of one group and sees only that group's pairs; the admin
// deactivates Cy, whose next request is refused; Ann connects her account
// at the provider for a custom tool, runs it, and disconnects it; Ann signs
// out, at the provider too. Then Lee registers a local account, signs out, and signs in
// with email and password. It prints "ids <json>" for the Go test to check.

import { chromium } from 'playwright-core';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const [base, token, outdir] = process.argv.slice(2);
if (!base || !token || !outdir) {
  console.error('usage: node signin.mjs <url> <token> <outdir>');
  process.exit(2);
}
const url = base.endsWith('/') ? base : `${base}/`;
const executablePath = process.env.QUARRY_CHROMIUM || '/usr/bin/chromium';
const consoleErrors = [];
let step = 'start';

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

async function shot(page, name) {
  const file = path.join(outdir, `${name}.png`);
  await page.screenshot({ path: file });
  console.log(`screenshot ${file}`);
}

/** api calls the server with the admin's key, as a script would. */
async function api(method, p, body) {
  const res = await fetch(new URL(p, url), {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  check(res.ok, `${method} ${p} answered ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  timeout: 60_000,
});

/** person opens a browser of its own (its own cookies) on the page. */
async function person() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  page.on('console', (m) => {
    // Refused API calls are logged by Chromium as network errors, not the
    // page's; and the provider's pages fetch fonts from a network that is
    // not there.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource') && page.url().startsWith(url)) {
      consoleErrors.push(m.text());
    }
  });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  return page;
}

/** signInAtProvider signs email in from the sign-in screen through the provider. */
async function signInAtProvider(page, email, shots) {
  await page.goto(url);
  const button = page.getByRole('link', { name: 'Sign in with Example IdP' });
  await button.waitFor();
  if (shots) await shot(page, `${shots}-1-signin`);
  await button.click();
  // The provider's own pages.
  await page.locator('input[name="login"]').fill(email);
  await page.locator('input[name="password"]').fill('any password will do');
  if (shots) await shot(page, `${shots}-2-provider-login`);
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  // Back at Quarry, signed in.
  await page.locator('#who', { hasText: email }).waitFor();
  check(page.url().startsWith(url), `back at Quarry: ${page.url()}`);
  check(!page.url().includes('signin_error'), `no sign-in error: ${page.url()}`);
}

/** me returns GET /me as the page's person. */
const me = (page) => page.evaluate(async () => (await fetch('me')).json());

const ids = {};
let page;
try {
  // 1. Ann signs in at the provider.
  step = 'ann signs in';
  const ann = await person();
  page = ann;
  await signInAtProvider(ann, 'ann@example.com', '20-ann');
  await shot(ann, '20-ann-3-signed-in');
  check((await me(ann)).role === 'basic', 'Ann is a basic user');
  check(await ann.evaluate(() => sessionStorage.length === 0 && localStorage.length === 0), 'no key kept in the browser');
  check(await ann.evaluate(() => !document.cookie.includes('fastapiusersauth')), 'the session cookie is HttpOnly');

  // 2. Ann makes a credential with her session and sees herself as owner.
  step = 'ann makes a credential';
  const cred = await ann.evaluate(async () => {
    const res = await fetch('manage/credential', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'ann-credential', source: 'web', admin_public: false,
        credential_json: { api_token: 'ann-secret-token-abcdefghij-0123456789' } }),
    });
    return { status: res.status, body: await res.json() };
  });
  check(cred.status === 200, `credential made: ${JSON.stringify(cred)}`);
  ids.annCredential = cred.body.id;
  await ann.goto(`${url}#credential/${cred.body.id}`);
  await ann.locator('#credential-meta', { hasText: 'owner ann@example.com' }).waitFor();
  // The secret is shown masked.
  await ann.waitForFunction(() => [...document.querySelectorAll('#credential-fields input')].some((i) => i.value === 'ann-...6789'));
  await shot(ann, '21-ann-credential-owner');

  // 2b. Ann connects her account at the provider for a custom tool (whose
  // API is the provider's userinfo endpoint), and tries the tool.
  step = 'ann connects an account for a tool';
  const issuer = process.env.QUARRY_E2E_ISSUER;
  const oauth = await api('POST', 'admin/oauth-config', { name: 'Example IdP tools', authorization_url: `${issuer}/auth`,
    token_url: `${issuer}/token`, client_id: 'quarry-tools', client_secret: 'e2e-tools-secret-at-the-idp', scopes: ['openid', 'email'] });
  const tool = await api('POST', 'admin/tool/custom', { name: 'Who am I', passthrough_auth: false, oauth_config_id: oauth.id,
    definition: { openapi: '3.0.3', info: { title: 'Userinfo', description: 'The provider says who the token is for', version: '1' },
      servers: [{ url: issuer }], paths: { '/me': { get: { operationId: 'userinfo', summary: 'Who am I',
        responses: { 200: { description: 'The claims' } } } } } } });
  ids.tool = tool.id;
  ids.oauthConfig = oauth.id;
  await ann.goto(`${url}#tool/${tool.id}`);
  await ann.locator('#tool-connect-text', { hasText: 'not connected' }).waitFor();
  await ann.getByRole('button', { name: 'Run' }).click();
  await ann.locator('#tool-try-error', { hasText: 'Connect your Example IdP tools account first' }).waitFor();
  await shot(ann, '21b-ann-tool-not-connected');
  await ann.getByRole('button', { name: 'Connect Example IdP tools' }).click();
  // At the provider, signed in already: it asks to consent for the tool's client.
  await ann.waitForURL((u) => !u.href.startsWith(url));
  await ann.getByRole('button', { name: 'Continue' }).click();
  await ann.waitForURL((u) => u.href.startsWith(url));
  check(!ann.url().includes('oauth_'), `the notice's parameters are taken off the address: ${ann.url()}`);
  await ann.locator('#page-notice', { hasText: 'Your account is connected' }).waitFor();
  await ann.locator('#tool-connect-text', { hasText: 'is connected' }).waitFor();
  await ann.getByRole('button', { name: 'Run' }).click();
  await ann.locator('#tool-try-result', { hasText: 'HTTP 200' }).waitFor();
  const answer = await ann.locator('#tool-try-result pre').innerText();
  check(answer.includes('"email": "ann@example.com"'), `the tool answered Ann's claims: ${answer}`);
  await shot(ann, '21c-ann-tool-connected-run');
  // Her account lists the connection; she disconnects it there.
  await ann.goto(`${url}#account`);
  await ann.locator('#connections-rows', { hasText: 'Example IdP tools' }).waitFor();
  await shot(ann, '21d-ann-connected-accounts');
  await ann.getByRole('button', { name: 'Disconnect Example IdP tools' }).click();
  await ann.locator('#confirm-yes').click();
  await ann.locator('#connections-rows', { hasText: 'No connected accounts' }).waitFor();
  await ann.goto(`${url}#tool/${tool.id}`);
  await ann.locator('#tool-connect-text', { hasText: 'not connected' }).waitFor();

  // 3. Cy signs in, is made curator of one group, and sees its pairs only.
  step = 'cy, curator of one group';
  const cy = await person();
  page = cy;
  await signInAtProvider(cy, 'cy@example.com');
  const cyMe = await me(cy);
  ids.cy = cyMe.id;
  const conn = await api('POST', 'manage/admin/connector', { name: 'wiki', source: 'web', input_type: 'poll',
    connector_specific_config: { base_url: 'https://wiki.example.com' } });
  const group = await api('POST', 'manage/admin/user-group', { name: 'support', user_ids: [cyMe.id] });
  await api('POST', `manage/admin/user-group/${group.id}/set-curator`, { user_id: cyMe.id, is_curator: true });
  const pairs = [];
  for (const [name, groups] of [['support-pair', [group.id]], ['other-pair', []]]) {
    const c = await api('POST', 'manage/credential', { name: `${name}-credential`, source: 'web', admin_public: true,
      credential_json: { token: `${name}-token-0123456789` } });
    const p = await api('PUT', `manage/connector/${conn.id}/credential/${c.id}`, { name, access_type: 'private', groups });
    pairs.push(p.data);
  }
  ids.supportPair = pairs[0];
  await cy.goto(`${url}#status`);
  await cy.reload();
  await cy.locator('#who', { hasText: 'curator' }).waitFor();
  await cy.locator('#status-summary', { hasText: 'of 1' }).waitFor();
  const rows = await cy.locator('#status-rows tr').allInnerTexts();
  check(rows.length === 1 && rows[0].includes('support-pair'), `Cy sees only the support pair: ${JSON.stringify(rows)}`);
  await shot(cy, '22-cy-curator-status');

  // 4. The admin deactivates Cy: Cy's next request is refused.
  step = 'cy deactivated';
  await api('PATCH', 'manage/admin/deactivate-user', { user_email: 'cy@example.com' });
  const refused = await cy.evaluate(async () => (await fetch('manage/admin/connector/status')).status);
  check(refused === 401, `Cy's next request answered ${refused}, want 401`);
  await cy.getByRole('button', { name: 'Refresh' }).click();
  await cy.locator('#signin-error', { hasText: 'no longer accepts' }).waitFor();
  await shot(cy, '23-cy-deactivated');

  // 5. Ann signs out, at the provider too, and is back on the sign-in screen.
  step = 'ann signs out';
  page = ann;
  await ann.goto(url);
  await ann.getByRole('button', { name: 'Sign out' }).click();
  // The provider asks whether to sign out of it as well.
  await ann.waitForURL((u) => !u.href.startsWith(url));
  await shot(ann, '24-ann-provider-logout');
  await ann.getByRole('button', { name: /yes/i }).click();
  await ann.waitForURL((u) => u.href.startsWith(url));
  await ann.getByRole('link', { name: 'Sign in with Example IdP' }).waitFor();
  check((await ann.evaluate(async () => (await fetch('me')).status)) === 401, 'Ann is signed out');

  // 6. Lee registers a local account, signs out, signs in with it.
  step = 'lee, a local account';
  const lee = await person();
  page = lee;
  await lee.goto(url);
  await lee.getByRole('button', { name: 'Create an account' }).click();
  await lee.locator('#register-email').fill('lee@example.com');
  await lee.locator('#register-password').fill('short');
  await lee.getByRole('button', { name: 'Create the account' }).click();
  await lee.locator('#signin-error', { hasText: 'at least 12 characters' }).waitFor();
  await shot(lee, '25-lee-register-refused');
  await lee.locator('#register-password').fill('a long and quiet river');
  await lee.getByRole('button', { name: 'Create the account' }).click();
  await lee.locator('#who', { hasText: 'lee@example.com' }).waitFor();
  await shot(lee, '26-lee-registered');
  await lee.getByRole('button', { name: 'Sign out' }).click();
  await lee.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
  await lee.locator('#login-email').fill('lee@example.com');
  await lee.locator('#login-password').fill('not the password');
  await lee.keyboard.press('Enter');
  await lee.locator('#signin-error', { hasText: 'Wrong email or password' }).waitFor();
  await lee.locator('#login-password').fill('a long and quiet river');
  await lee.keyboard.press('Enter');
  await lee.locator('#who', { hasText: 'lee@example.com' }).waitFor();
  await shot(lee, '27-lee-signed-in');
  await lee.getByRole('button', { name: 'Sign out' }).click();
  await lee.locator('#login-email').waitFor();
  check((await lee.evaluate(async () => (await fetch('me')).status)) === 401, 'Lee is signed out');

  check(consoleErrors.length === 0, `console errors: ${consoleErrors.join(' | ')}`);
  console.log(`ids ${JSON.stringify(ids)}`);
} catch (e) {
  console.error(`step "${step}": ${e.stack || e}`);
  if (page) await page.screenshot({ path: path.join(outdir, 'failure-signin.png') }).catch(() => {});
  await browser.close();
  process.exit(1);
}
await browser.close();
