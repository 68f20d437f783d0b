// Drives Quarry's admin page in Debian's Chromium, as web/e2e_test.go
// asks: node run.mjs <url> <admin token> <screenshot dir>
//
// The server must hold the fixtures the Go test makes: a cc-pair
// "e2e-pair" of connector "e2e-connector" (source confluence, private)
// with credential "e2e-credential", and a custom tool "e2e_tool" with a
// header X-Api-Key. The script signs in, measures and filters the status
// table, edits the credential (through a 412 conflict and an inline 422),
// edits the tool (through the server's 400 on a bad definition), signs
// out, and prints one JSON line of measurements last. Any failed check
// exits non-zero, with a screenshot "failure.png".

import { chromium } from 'playwright-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const [base, token, outdir] = process.argv.slice(2);
if (!base || !token || !outdir) {
  console.error('usage: node run.mjs <url> <token> <outdir>');
  process.exit(2);
}
const url = base.endsWith('/') ? base : `${base}/`;
const executablePath = process.env.QUARRY_CHROMIUM || '/usr/bin/chromium';
const timeout = 15_000;

const measures = {};
const consoleErrors = [];
let step = 'start';

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

async function shot(page, name, fullPage = false) {
  const file = path.join(outdir, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  console.log(`screenshot ${file}`);
}

/** api calls the server directly, as "someone else" would. */
async function api(method, p, body) {
  const res = await fetch(new URL(p, url), {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  check(res.ok, `${method} ${p} answered ${res.status}`);
  return res.json();
}

const userDataDir = await mkdtemp(path.join(tmpdir(), 'quarry-e2e-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  viewport: { width: 1280, height: 900 },
  timeout: 60_000,
});
context.setDefaultTimeout(timeout);
const page = context.pages()[0] || await context.newPage();
page.on('console', (m) => {
  // Failed API calls (4xx on purpose) are logged by Chromium as errors of
  // the network, not of the page: only the page's own errors count.
  if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) consoleErrors.push(m.text());
});
page.on('pageerror', (e) => consoleErrors.push(String(e)));
// Long tasks (main thread busy over 50 ms), to tell whether the table
// freezes the page.
await page.addInitScript(() => {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push(e.duration);
  }).observe({ type: 'longtask', buffered: true });
});

const text = (sel) => page.locator(sel).innerText();
const filters = page.locator('#status-filters');
const longTasks = async () => page.evaluate(() => window.__longTasks.splice(0));

try {
  // 1. Sign in: a wrong key first, then the right one.
  step = 'sign in';
  await page.goto(`${url}#status`);
  await page.getByLabel('API key', { exact: true }).waitFor();
  await page.getByLabel('API key', { exact: true }).fill('qry_not-a-real-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#signin-error', { hasText: 'not accepted' }).waitFor();
  check(await page.evaluate(() => sessionStorage.length === 0), 'a refused key is not kept');
  await shot(page, '01-signin-refused');

  const t0 = Date.now();
  await page.getByLabel('API key', { exact: true }).fill(token);
  await page.keyboard.press('Enter');
  await page.locator('#who', { hasText: 'admin' }).waitFor();
  // 2. The status table, loaded and drawn.
  step = 'status table';
  await page.locator('#status-timing[data-render-ms]').waitFor({ state: 'attached', timeout: 60_000 });
  measures.signInToTableMs = Date.now() - t0;
  const timing = await page.locator('#status-timing').evaluate((e) => ({ ...e.dataset }));
  Object.assign(measures, {
    rows: Number(timing.rows), fetchMs: Number(timing.fetchMs), indexMs: Number(timing.indexMs),
    firstRenderMs: Number(timing.renderMs),
  });
  measures.listingBytes = await page.evaluate(() => {
    const e = performance.getEntriesByType('resource').find((r) => r.name.endsWith('/manage/admin/connector/status'));
    return e ? e.decodedBodySize : null;
  });
  measures.domRows = await page.locator('#status-rows tr').count();
  check(measures.domRows === 100, `one page of 100 rows in the DOM, got ${measures.domRows}`);
  check(await page.evaluate(() => sessionStorage.getItem('quarry.apiKey')) === token, 'key in sessionStorage');
  check(await page.evaluate(() => localStorage.length === 0), 'nothing in localStorage');
  check(await page.evaluate(() => document.activeElement.id) === 'status-title', 'focus on the view title');
  const summary = await text('#status-summary');
  check(summary.startsWith('Showing 1–100 of '), `summary: ${summary}`);
  measures.loadLongTasksMs = await longTasks();
  await shot(page, '02-status');

  // 3. Paging and filtering, timed: keystrokes, the filters, the pager.
  step = 'filters';
  const t1 = Date.now();
  await page.getByRole('button', { name: 'Next' }).click();
  await page.locator('#status-page', { hasText: 'Page 2 of' }).waitFor();
  await page.getByRole('button', { name: 'Last' }).click();
  await page.locator('#status-next:disabled').waitFor();
  measures.pagingMs = Date.now() - t1;
  const search = page.getByLabel('Search by name');
  await search.focus();
  const t2 = Date.now();
  await page.keyboard.type('e2e-p', { delay: 25 }); // a search per pause, as a person types
  await page.locator('#status-summary', { hasText: /of \d+ matching/ }).waitFor();
  await filters.getByLabel('Source', { exact: true }).selectOption('confluence');
  await filters.getByLabel('Access type', { exact: true }).selectOption('private');
  await page.locator('#status-summary', { hasText: 'Showing 1–1 of 1 matching' }).waitFor();
  measures.typeAndFilterMs = Date.now() - t2;
  const timing2 = await page.locator('#status-timing').evaluate((e) => ({ ...e.dataset }));
  measures.lastFilterMs = Number(timing2.filterMs);
  measures.lastRenderMs = Number(timing2.renderMs);
  measures.interactionLongTasksMs = await longTasks();
  // A filter over all rows that matches many: the worst case of a keystroke.
  await filters.getByLabel('Source', { exact: true }).selectOption('');
  await filters.getByLabel('Access type', { exact: true }).selectOption('');
  await search.fill('a');
  await page.locator('#status-summary', { hasText: /Showing 1–100 of/ }).waitFor();
  const timing3 = await page.locator('#status-timing').evaluate((e) => ({ ...e.dataset }));
  measures.broadFilterMs = Number(timing3.filterMs);
  measures.broadRenderMs = Number(timing3.renderMs);
  await search.fill('e2e-pair');
  await filters.getByLabel('Source', { exact: true }).selectOption('confluence');
  await filters.getByLabel('Access type', { exact: true }).selectOption('private');
  await page.locator('#status-summary', { hasText: 'Showing 1–1 of 1 matching' }).waitFor();
  const row = page.locator('#status-rows tr');
  check((await row.innerText()).includes('e2e-connector'), 'the row shows the connector');
  await shot(page, '03-status-filtered');

  // 4. The credential: masked values, nothing secret in clear.
  step = 'credential';
  await row.getByRole('link', { name: /Edit credential e2e-credential/ }).click();
  await page.locator('#view-credential[aria-busy="false"] #credential-form').waitFor();
  check(await page.evaluate(() => document.activeElement.id) === 'credential-title', 'focus on the credential title');
  const tokenField = page.getByLabel('confluence_access_token', { exact: true });
  const maskedToken = await tokenField.inputValue();
  check(/^.{4}\.\.\..{4}$/.test(maskedToken), `token masked: ${maskedToken}`);
  check(await page.getByLabel('client_secret', { exact: true }).inputValue() === '\u2022'.repeat(12), 'short secret masked');
  check(await page.getByLabel('port', { exact: true }).inputValue() === '*****', 'number masked');
  const wiki = page.getByLabel('wiki_base', { exact: true });
  const oldWiki = await wiki.inputValue();
  check(oldWiki === 'https://acme.atlassian.net/wiki', `wiki_base shown: ${oldWiki}`);
  await shot(page, '04-credential', true);

  // 4a. A nested value that is not JSON is caught before sending.
  const oauth = page.getByLabel('oauth', { exact: true });
  const oauthText = await oauth.inputValue();
  check(oauthText.includes('"refresh_token"') && !oauthText.includes('rt-0123'), 'nested secrets masked');
  await oauth.fill('{"refresh_token": ');
  await page.getByRole('button', { name: 'Save credential' }).click();
  await page.locator('.kv .error', { hasText: 'Not valid JSON' }).waitFor();
  check(await oauth.getAttribute('aria-invalid') === 'true', 'bad JSON marked invalid');
  await oauth.fill(oauthText);

  // 4b. A 422 from the server is listed readably (the page builds valid
  // bodies, so this one is staged).
  await page.route('**/manage/credential/*', (route) => route.request().method() !== 'PATCH' ? route.continue()
    : route.fulfill({
      status: 422, contentType: 'application/json',
      body: JSON.stringify({ detail: [
        { type: 'bool_parsing', loc: ['body', 'admin_public'], msg: 'Input should be a valid boolean, unable to interpret input', input: 'maybe' },
        { type: 'int_parsing', loc: ['body', 'groups', 0], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'x' },
      ] }),
    }));
  await page.getByRole('button', { name: 'Save credential' }).click();
  await page.locator('#credential-error li', { hasText: 'groups › 0: Input should be a valid integer' }).waitFor();
  check((await text('#credential-error')).includes('422: The server did not accept the request'), '422 rendered');
  await shot(page, '05-credential-422');
  await page.unrouteAll();

  // 4c. Someone else changes the credential meanwhile: 412, then reload.
  await api('PATCH', `manage/credential/${await credentialID(page)}`, {});
  await wiki.fill('https://acme.atlassian.net/conflicting-edit');
  await page.getByRole('button', { name: 'Save credential' }).click();
  await page.locator('#credential-error', { hasText: 'Someone else changed this credential' }).waitFor();
  check(await page.evaluate(() => document.activeElement.textContent) === 'Reload the current version', 'focus on the reload offer');
  await shot(page, '06-credential-412');
  await page.keyboard.press('Enter'); // the focused reload button
  await page.locator('#view-credential[aria-busy="false"]').waitFor();
  check(await page.evaluate(() => document.activeElement.id) === 'credential-name', 'focus on the first field after reloading');
  check(await wiki.inputValue() === oldWiki, 'reloaded values');

  // 4d. Change a non-secret value and the name; save with the keyboard.
  await wiki.fill('https://acme.atlassian.net/wiki-v2');
  await page.locator('#credential-name').fill('e2e-credential (edited)');
  await page.locator('#credential-save').focus();
  await page.keyboard.press('Enter');
  await page.locator('#credential-saved', { hasText: 'Saved at' }).waitFor();
  check(await tokenField.inputValue() === maskedToken, 'token still masked after saving');
  check((await text('#credential-title')).includes('e2e-credential (edited)'), 'title shows the new name');
  await shot(page, '07-credential-saved', true);

  // 5. Tools: the list, a built-in one read-only, the custom one edited.
  step = 'tools';
  await page.getByRole('link', { name: 'Custom tools' }).click();
  await page.locator('#tools-rows a').first().waitFor();
  check(await page.getByRole('link', { name: 'Custom tools' }).getAttribute('aria-current') === 'page', 'nav marks the view');
  await shot(page, '08-tools');
  await page.getByRole('link', { name: /^View tool / }).first().click();
  await page.locator('#view-tool[aria-busy="false"] #tool-form').waitFor();
  check(await page.locator('#tool-name').isDisabled() && await page.locator('#tool-definition').isDisabled(), 'built-in tool read-only');
  check(!(await page.locator('#tool-save').isVisible()), 'no save for a built-in tool');
  await page.goBack();
  await page.getByRole('link', { name: 'Edit tool e2e_tool' }).click();
  await page.locator('#view-tool[aria-busy="false"] #tool-form').waitFor();
  const headerValue = page.locator('#tool-headers').getByLabel('Value').first();
  const maskedHeader = await headerValue.inputValue();
  check(/^.{4}\.\.\..{4}$/.test(maskedHeader), `header masked: ${maskedHeader}`);
  await shot(page, '09-tool', true);
  const def = page.locator('#tool-definition');
  const defText = await def.inputValue();
  const broken = JSON.parse(defText);
  delete broken.info;
  await def.fill(JSON.stringify(broken, null, 2));
  await page.locator('#tool-description').fill('Looks up tickets, and their history.');
  await page.getByRole('button', { name: 'Save tool' }).click();
  await page.locator('#tool-definition-error', { hasText: '`info` section is required in OpenAPI schema' }).waitFor();
  check(await page.evaluate(() => document.activeElement.id) === 'tool-definition', 'focus on the definition');
  await shot(page, '10-tool-400');
  await def.fill(defText);
  await page.getByRole('button', { name: 'Check definition' }).click();
  await page.locator('#tool-methods', { hasText: 'The definition is valid' }).waitFor();
  await page.getByRole('button', { name: 'Save tool' }).click();
  await page.locator('#tool-saved', { hasText: 'Saved at' }).waitFor();
  check(await headerValue.inputValue() === maskedHeader, 'header still masked after saving');
  await shot(page, '11-tool-saved', true);

  // 6. Sign out forgets the key.
  step = 'sign out';
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API key', { exact: true }).waitFor();
  check(await page.evaluate(() => sessionStorage.length === 0), 'key forgotten');
  check(await page.locator('#status-rows tr').count() === 0, 'table emptied');
  await page.reload();
  await page.getByLabel('API key', { exact: true }).waitFor();
  await shot(page, '12-signed-out');

  check(consoleErrors.length === 0, `no errors in the page: ${consoleErrors.join(' | ')}`);
  console.log(JSON.stringify({ ok: true, measures }));
} catch (e) {
  console.error(`FAILED at step "${step}": ${e.message}`);
  if (consoleErrors.length) console.error(`page errors: ${consoleErrors.join(' | ')}`);
  await page.screenshot({ path: path.join(outdir, 'failure.png') }).catch(() => {});
  process.exitCode = 1;
} finally {
  await context.close();
  await rm(userDataDir, { recursive: true, force: true });
}

/** credentialID reads the open credential's id from the location. */
async function credentialID(p) {
  const m = /#credential\/(\d+)$/.exec(p.url());
  check(m, `credential id in ${p.url()}`);
  return m[1];
}
