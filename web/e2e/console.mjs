// Tells the admin console's story in Debian's Chromium, as
// web/console_e2e_test.go asks: node console.mjs <url> <screenshot dir>
//
// The server starts with an empty database, local accounts on and
// registration by invitation. Ada registers (the first person: an admin),
// creates a connector, a credential and a pair, pauses and resumes it,
// creates a group, invites Cy; Cy registers; Ada makes Cy the group's
// curator and shares the pair with it; Cy sees only that group's pair; Ada
// makes and revokes API keys, a custom tool with an OAuth configuration,
// changes her password, and reads the story in the audit log. Some flows
// are done with the keyboard alone. Every view is checked with axe-core
// (no serious or critical violation) and shot at 1280 and 390 px wide;
// the page must log no error. Any failed check exits non-zero, with a
// screenshot "console-failure.png".

import { chromium } from 'playwright-core';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const [base, outdir] = process.argv.slice(2);
if (!base || !outdir) {
  console.error('usage: node console.mjs <url> <outdir>');
  process.exit(2);
}
const url = base.endsWith('/') ? base : `${base}/`;
const origin = new URL(url).origin;
const executablePath = process.env.QUARRY_CHROMIUM || '/usr/bin/chromium';
const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const consoleErrors = [];
const axeReport = [];
let step = 'start';
let shotN = 0;

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  timeout: 60_000,
});

/** person opens a browser of its own (its own cookies) on the page. */
async function person(who) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  page.on('console', (m) => {
    // Refused API calls (on purpose) are logged by Chromium as network
    // errors, not the page's.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) consoleErrors.push(`${who}: ${m.text()}`);
  });
  page.on('pageerror', (e) => consoleErrors.push(`${who}: ${e}`));
  page.on('dialog', (d) => {
    consoleErrors.push(`${who}: unexpected native dialog "${d.message()}"`);
    d.dismiss();
  });
  return page;
}

/** settled waits until no view is loading. */
async function settled(page) {
  await page.waitForFunction(() => !document.querySelector('.view:not([hidden])[aria-busy="true"]'));
}

/**
 * view checks the view on screen with axe-core and shoots it at 1280 and
 * 390 px wide. Serious and critical violations fail the story; the others
 * are reported.
 */
async function view(page, name) {
  await settled(page);
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(axeSource);
  const results = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, help: v.help,
      targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  const bad = results.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  axeReport.push({ view: name, violations: results });
  console.log(`axe ${name}: ${results.length ? results.map((v) => `${v.id} (${v.impact}, ${v.nodes})`).join(', ') : 'no violations'}`);
  check(bad.length === 0, `axe on ${name}: ${JSON.stringify(bad)}`);
  shotN += 1;
  const prefix = `c${String(shotN).padStart(2, '0')}-${name}`;
  for (const [w, h] of [[1280, 900], [390, 844]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.waitForTimeout(50);
    if (w === 390) {
      // Nothing wider than the screen but the tables, which scroll.
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      check(wide <= 390, `${name} at 390 px is ${wide} px wide`);
    }
    const file = path.join(outdir, `${prefix}-${w}.png`);
    await page.screenshot({ path: file, fullPage: true });
    console.log(`screenshot ${file}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/**
 * tabTo presses Tab until the focus is on what selector finds (at most 60
 * times), as a person with a keyboard would, and checks that the focus is
 * visible there.
 */
async function tabTo(page, selector) {
  for (let i = 0; i < 60; i++) {
    if (await page.evaluate((s) => document.activeElement && document.activeElement.matches(s), selector)) {
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
      check(outline !== 'none', `focus on ${selector} is visible (outline ${outline})`);
      return;
    }
    await page.keyboard.press('Tab');
  }
  throw new Error(`check failed: ${selector} cannot be reached with Tab`);
}

const currentView = (page) => page.evaluate(() => document.querySelector('main > .view:not([hidden])').id);
const rows = (page, tbody) => page.locator(`#${tbody} tr`).allInnerTexts();
const idFromURL = (page, kind) => {
  const m = new RegExp(`#${kind}/(\\d+)`).exec(page.url());
  check(m, `${kind} id in ${page.url()}`);
  return Number(m[1]);
};

let page;
try {
  // 1. Ada opens the page of a new server, and registers: the first person
  // is an admin.
  step = 'ada registers';
  const ada = await person('ada');
  page = ada;
  await ada.goto(url);
  await ada.getByRole('button', { name: 'Create an account' }).waitFor();
  await view(ada, 'signin');
  await ada.getByRole('button', { name: 'Create an account' }).click();
  await ada.locator('#register-email').fill('ada@example.com');
  await ada.locator('#register-password').fill('correct horse battery staple');
  await ada.keyboard.press('Enter');
  await ada.locator('#who', { hasText: 'admin' }).waitFor();
  check(await currentView(ada) === 'view-status', 'an admin lands on the status view');
  await ada.locator('#status-empty', { hasText: 'No cc-pairs yet' }).waitFor();
  check(await ada.locator('#nav a:not([hidden])').count() === 8, 'an admin sees every section');
  await view(ada, 'status-empty');

  // 2. A connector: source, input type, settings as rows and as JSON, a
  // schedule with units.
  step = 'connector';
  await ada.getByRole('link', { name: 'Connectors', exact: true }).click();
  await ada.locator('#connectors-rows', { hasText: 'No connectors yet' }).waitFor();
  await view(ada, 'connectors-empty');
  await ada.getByRole('link', { name: 'New connector' }).click();
  await ada.locator('#connector-form:not([hidden])').waitFor();
  await ada.locator('#connector-name').fill('Team wiki');
  await ada.locator('#connector-source').selectOption('confluence');
  check((await ada.locator('#connector-source option').count()) === 55, 'the source picker offers the 55 sources');
  await ada.locator('#connector-input-type').selectOption('poll');
  const config = ada.locator('#connector-config');
  await config.getByRole('button', { name: 'Add a setting' }).click();
  await config.getByLabel('Key', { exact: true }).last().fill('wiki_base');
  await config.getByLabel('Value', { exact: true }).last().fill('https://acme.atlassian.net/wiki');
  await config.getByRole('button', { name: 'Add a setting' }).click();
  await config.getByLabel('Key', { exact: true }).last().fill('space_keys');
  await config.getByLabel('Kind', { exact: true }).last().selectOption('json');
  await config.getByLabel('Value', { exact: true }).last().fill('["SUP", "ENG"]');
  await config.getByRole('button', { name: 'Edit as JSON' }).click();
  const json = JSON.parse(await config.getByLabel('As JSON (an object)').inputValue());
  check(json.wiki_base === 'https://acme.atlassian.net/wiki' && json.space_keys[1] === 'ENG', `JSON view: ${JSON.stringify(json)}`);
  await config.getByLabel('As JSON (an object)').fill(JSON.stringify({ ...json, index_recursively: true }, null, 2));
  await ada.locator('#connector-refresh').fill('30');
  await ada.locator('#connector-refresh-unit').selectOption({ label: 'minutes' });
  await ada.locator('#connector-prune').fill('1');
  await ada.locator('#connector-prune-unit').selectOption({ label: 'days' });
  await view(ada, 'connector-new');
  await ada.getByRole('button', { name: 'Create connector' }).click();
  await ada.waitForURL(/#connector\/\d+$/);
  await ada.locator('#connector-title', { hasText: 'Team wiki' }).waitFor();
  const connID = idFromURL(ada, 'connector');
  const conn = await ada.evaluate(async (id) => (await fetch(`manage/connector/${id}`)).json(), connID);
  check(conn.refresh_freq === 1800 && conn.prune_freq === 86400, `frequencies in seconds: ${conn.refresh_freq}, ${conn.prune_freq}`);
  check(conn.connector_specific_config.index_recursively === true && conn.connector_specific_config.space_keys.length === 2, 'config saved');
  check(await ada.locator('#connector-refresh-unit').inputValue() === '60' && await ada.locator('#connector-refresh').inputValue() === '30',
    'refresh shown as 30 minutes');
  // A second connector, for a pair no group shares.
  await ada.goto(`${url}#connector/new`);
  await ada.locator('#connector-form:not([hidden])').waitFor();
  await ada.locator('#connector-name').fill('Handbook');
  await ada.locator('#connector-source').selectOption('web');
  await ada.getByRole('button', { name: 'Create connector' }).click();
  await ada.waitForURL(/#connector\/\d+$/);
  const handbookID = idFromURL(ada, 'connector');

  // 3. Credentials, owned by Ada.
  step = 'credential';
  await ada.getByRole('link', { name: 'Credentials', exact: true }).click();
  await ada.locator('#credentials-rows', { hasText: 'No credentials yet' }).waitFor();
  await ada.getByRole('link', { name: 'New credential' }).click();
  await ada.locator('#credential-form:not([hidden])').waitFor();
  await ada.locator('#credential-name').fill('wiki bot');
  await ada.locator('#credential-source').selectOption('confluence');
  const values = ada.locator('#credential-fields');
  await values.getByRole('button', { name: 'Add a value' }).click();
  await values.getByLabel('Key', { exact: true }).last().fill('confluence_username');
  await values.getByLabel('Value', { exact: true }).last().fill('bot@acme.com');
  await values.getByRole('button', { name: 'Add a value' }).click();
  await values.getByLabel('Key', { exact: true }).last().fill('confluence_access_token');
  await values.getByLabel('Value', { exact: true }).last().fill('ATATT3x-0123456789-secret');
  await view(ada, 'credential-new');
  await ada.getByRole('button', { name: 'Create credential' }).click();
  await ada.waitForURL(/#credential\/\d+$/);
  await ada.locator('#credential-meta', { hasText: 'owner ada@example.com' }).waitFor();
  const credID = idFromURL(ada, 'credential');
  check(await ada.getByLabel('confluence_access_token', { exact: true }).inputValue() === 'ATAT...cret', 'the token is shown masked');
  await view(ada, 'credential');
  await ada.goto(`${url}#credential/new`);
  await ada.locator('#credential-form:not([hidden])').waitFor();
  await ada.locator('#credential-name').fill('handbook reader');
  await ada.locator('#credential-source').selectOption('web');
  await ada.getByRole('button', { name: 'Create credential' }).click();
  await ada.waitForURL(/#credential\/\d+$/);
  const handbookCred = idFromURL(ada, 'credential');
  await ada.getByRole('link', { name: 'Credentials', exact: true }).click();
  await ada.locator('#credentials-rows', { hasText: 'handbook reader' }).waitFor();
  await view(ada, 'credentials');
  await ada.getByRole('link', { name: 'Connectors', exact: true }).click();
  await ada.locator('#connectors-rows', { hasText: 'Handbook' }).waitFor();
  await view(ada, 'connectors');

  // 4. Pairs: the wiki with its credential; paused, resumed.
  step = 'pair';
  await ada.goto(`${url}#pair/new?connector=${connID}`);
  await ada.locator('#pair-credential option', { hasText: 'wiki bot' }).waitFor({ state: 'attached' });
  check(await ada.locator('#pair-connector').inputValue() === String(connID), 'the connector is preselected');
  check(!(await ada.locator('#pair-credential').innerText()).includes('handbook reader'), 'only credentials of the source are offered');
  await ada.locator('#pair-name').fill('wiki-support');
  await ada.locator('#pair-access').selectOption('private');
  await view(ada, 'pair-new');
  await ada.getByRole('button', { name: 'Create the pair' }).click();
  await ada.waitForURL(/#pair\/\d+$/);
  const pairID = idFromURL(ada, 'pair');
  await ada.locator('#pair-facts', { hasText: 'Team wiki' }).waitFor();
  await ada.getByRole('button', { name: 'Pause' }).click();
  await ada.locator('#pair-saved', { hasText: 'Paused.' }).waitFor();
  check((await ada.locator('#pair-facts').innerText()).includes('paused'), 'the pair shows paused');
  await view(ada, 'pair');
  await ada.getByRole('button', { name: 'Resume' }).click();
  await ada.locator('#pair-saved', { hasText: 'Resumed.' }).waitFor();
  // The connector's view links back to the pair.
  await ada.locator('#pair-facts').getByRole('link', { name: /Team wiki/ }).click();
  await ada.locator('#connector-pairs').getByRole('link', { name: 'wiki-support' }).waitFor();
  await view(ada, 'connector');
  await ada.goto(`${url}#pair/new?connector=${handbookID}&credential=${handbookCred}`);
  await ada.locator(`#pair-credential option[value="${handbookCred}"]`).waitFor({ state: 'attached' });
  await ada.locator('#pair-name').fill('handbook-all');
  await ada.getByRole('button', { name: 'Create the pair' }).click();
  await ada.waitForURL(/#pair\/\d+$/);

  // 5. Deleting a connector that pairs use: the 409 says which.
  step = 'connector 409';
  await ada.goto(`${url}#connector/${connID}`);
  await ada.locator('#connector-form:not([hidden])').waitFor();
  await ada.getByRole('button', { name: 'Delete connector' }).click();
  await ada.locator('#confirm[open]').waitFor();
  check(await ada.evaluate(() => document.activeElement.id) === 'confirm-no', 'the dialog starts on Cancel');
  await ada.keyboard.press('Shift+Tab');
  await ada.keyboard.press('Enter'); // "Delete", with the keyboard
  await ada.locator('#connector-error', { hasText: '409' }).waitFor();
  await ada.locator('#connector-error').getByRole('link', { name: 'wiki-support' }).waitFor();
  await view(ada, 'connector-409');

  // 6. A group, made with the keyboard alone; Cy is invited.
  step = 'group';
  await ada.getByRole('link', { name: 'Groups', exact: true }).click();
  await ada.locator('#groups-rows', { hasText: 'No groups yet' }).waitFor();
  await tabTo(ada, '#group-new-name');
  await ada.keyboard.type('Support');
  await ada.keyboard.press('Enter');
  await ada.waitForURL(/#group\/\d+$/);
  const groupID = idFromURL(ada, 'group');
  await ada.locator('#group-body:not([hidden])').waitFor();
  await ada.getByRole('link', { name: 'People', exact: true }).click();
  await ada.locator('#people-rows', { hasText: 'ada@example.com' }).waitFor();
  await tabTo(ada, '#invite-emails');
  await ada.keyboard.type('cy@example.com');
  await ada.keyboard.press('Enter');
  await ada.locator('#people-done', { hasText: 'Invited cy@example.com' }).waitFor();
  await ada.locator('#invites-rows', { hasText: 'cy@example.com' }).waitFor();

  // 7. Cy registers, invited; a basic user lands on the credentials.
  step = 'cy registers';
  const cy = await person('cy');
  page = cy;
  await cy.goto(url);
  await cy.getByRole('button', { name: 'Create an account' }).click();
  await cy.locator('#register-email').fill('cy@example.com');
  await cy.locator('#register-password').fill('a long and quiet river');
  await cy.keyboard.press('Enter');
  await cy.locator('#who', { hasText: 'basic' }).waitFor();
  check(await currentView(cy) === 'view-credentials', 'a basic user lands on the credentials');
  check(await cy.locator('#nav a:not([hidden])').count() === 2, 'a basic user sees credentials and tools only');

  // 8. Ada makes Cy the group's curator, and shares the wiki pair with it.
  step = 'curator';
  page = ada;
  await ada.goto(`${url}#group/${groupID}`);
  await ada.locator('#group-add-user option', { hasText: 'cy@example.com' }).waitFor({ state: 'attached' });
  await ada.locator('#group-add-user').selectOption({ label: 'cy@example.com (basic)' });
  await ada.getByRole('button', { name: 'Add', exact: true }).click();
  await ada.locator('#group-saved', { hasText: 'joined the group' }).waitFor();
  await ada.getByLabel('cy@example.com curates Support').check();
  await ada.locator('#group-saved', { hasText: 'now curates' }).waitFor();
  await ada.locator('#group-members', { hasText: 'curator' }).waitFor();
  await ada.locator('#group-add-pair').fill(String(pairID));
  await ada.getByRole('button', { name: 'Share', exact: true }).click();
  await ada.locator('#group-pairs').getByRole('link', { name: 'wiki-support' }).waitFor();
  await view(ada, 'group');
  await ada.getByRole('link', { name: 'Groups', exact: true }).click();
  await ada.locator('#groups-rows', { hasText: 'cy@example.com' }).waitFor();
  await view(ada, 'groups');
  // The pair's view links to the group, and back.
  await ada.goto(`${url}#pair/${pairID}`);
  await ada.locator('#pair-facts').getByRole('link', { name: `Group #${groupID}` }).waitFor();

  // 9. Cy, now a curator, sees the group's pair only.
  step = 'cy sees its pairs';
  page = cy;
  await cy.goto(`${url}#status`);
  await cy.reload();
  await cy.locator('#who', { hasText: 'curator' }).waitFor();
  await cy.locator('#status-summary', { hasText: 'of 1 matching' }).waitFor();
  const cyRows = await rows(cy, 'status-rows');
  check(cyRows.length === 1 && cyRows[0].includes('wiki-support'), `Cy sees only the support pair: ${JSON.stringify(cyRows)}`);
  check(await cy.locator('#nav a:not([hidden])').count() === 4, 'a curator sees status, connectors, credentials and tools');
  await view(cy, 'status-curator');

  // 10. The status table: sort, filter, counts, all kept in the location.
  step = 'status';
  page = ada;
  await ada.goto(`${url}#status`);
  await ada.locator('#status-summary', { hasText: 'of 2 matching' }).waitFor();
  await ada.getByRole('button', { name: 'cc-pair', exact: true }).click();
  await ada.waitForURL(/sort=name/);
  await ada.getByRole('button', { name: /^cc-pair/ }).click();
  await ada.waitForURL(/dir=desc/);
  check((await rows(ada, 'status-rows'))[0].includes('wiki-support'), 'sorted by name, descending');
  check(await ada.locator('th[aria-sort="descending"]').innerText() === 'cc-pair ▼', 'the sorted column says so');
  await ada.locator('#status-source').selectOption('web');
  await ada.waitForURL(/source=web/);
  await ada.locator('#status-summary', { hasText: 'Showing 1–1 of 1 matching' }).waitFor();
  await ada.locator('#status-counts summary').click();
  check((await ada.locator('#status-count-access').innerText()).includes('private'), 'counts by access type');
  await view(ada, 'status');
  const filtered = ada.url();
  await ada.reload();
  await ada.locator('#status-summary', { hasText: 'Showing 1–1 of 1 matching' }).waitFor();
  check(await ada.locator('#status-source').inputValue() === 'web', 'a reload keeps the filter');
  await ada.goBack();
  await ada.locator('#status-summary', { hasText: 'of 2 matching' }).waitFor();
  check(!ada.url().includes('source=web') && ada.url().includes('dir=desc'), `back: the view before the filter (${ada.url()})`);
  await ada.goto(filtered.replace('source=web', 'source=slack'));
  await ada.locator('#status-empty', { hasText: 'No cc-pair matches' }).waitFor();
  await view(ada, 'status-no-match');

  // 11. API keys: made (shown once, copied), regenerated, revoked.
  step = 'api keys';
  await ada.getByRole('link', { name: 'API keys', exact: true }).click();
  await ada.locator('#keys-rows', { hasText: 'No API keys yet' }).waitFor();
  await tabTo(ada, '#key-name');
  await ada.keyboard.type('ci-bot');
  await ada.keyboard.press('Enter');
  await ada.locator('#keys-secret:not([hidden])').waitFor();
  const key = await ada.locator('#keys-secret input').inputValue();
  check(/^qry_[A-Za-z0-9_-]{43}$/.test(key), `a key shown once: ${key.slice(0, 8)}…`);
  await ada.getByRole('button', { name: 'Copy' }).click();
  await ada.locator('#keys-secret', { hasText: 'Copied.' }).waitFor();
  check(await ada.evaluate(() => navigator.clipboard.readText()) === key, 'the key is on the clipboard');
  await view(ada, 'api-keys');
  await ada.getByRole('button', { name: 'Done' }).click();
  check(!(await ada.locator('body').innerText()).includes(key), 'the key is gone from the page');
  await ada.getByRole('button', { name: 'Regenerate ci-bot' }).click();
  await ada.locator('#confirm-yes', { hasText: 'Regenerate' }).click();
  await ada.locator('#keys-secret', { hasText: 'Regenerated API key' }).waitFor();
  const key2 = await ada.locator('#keys-secret input').inputValue();
  check(key2 !== key, 'a new key');
  const oldKey = await fetch(new URL('me', url), { headers: { Authorization: `Bearer ${key}` } });
  check(oldKey.status === 401, `the old key is refused: ${oldKey.status}`);
  await ada.getByRole('button', { name: 'Revoke ci-bot' }).click();
  await ada.locator('#confirm-yes').click();
  await ada.locator('#keys-rows', { hasText: 'No API keys yet' }).waitFor();
  await ada.locator('#key-name').fill('ops');
  await ada.locator('#key-role').selectOption('limited');
  await ada.getByRole('button', { name: 'Create key' }).click();
  await ada.locator('#keys-secret:not([hidden])').waitFor();

  // 12. People: roles, (de)activation, a password reset, sessions.
  step = 'people';
  await ada.getByRole('link', { name: 'People', exact: true }).click();
  await ada.locator('#people-rows', { hasText: 'cy@example.com' }).waitFor();
  await ada.locator('#sessions-rows', { hasText: 'cy@example.com' }).waitFor();
  await ada.getByRole('button', { name: 'Deactivate cy@example.com' }).click();
  await ada.locator('#confirm-yes').click();
  await ada.locator('#people-done', { hasText: 'cy@example.com is deactivated' }).waitFor();
  await ada.getByRole('button', { name: 'Activate cy@example.com' }).click();
  await ada.locator('#people-done', { hasText: 'active again' }).waitFor();
  // The last admin cannot step down: the server says so.
  await ada.getByLabel('Role of ada@example.com').selectOption('basic');
  await ada.locator('#people-error', { hasText: 'last active admin' }).waitFor();
  check(await ada.getByLabel('Role of ada@example.com').inputValue() === 'admin', 'the refused role is put back');
  await ada.getByRole('button', { name: 'Reset password of cy@example.com' }).click();
  await ada.locator('#confirm-yes').click();
  await ada.locator('#people-secret', { hasText: 'New password of cy@example.com' }).waitFor();
  const cyPassword = await ada.locator('#people-secret input').inputValue();
  check(cyPassword.length === 20, 'a new password of 20 characters');
  await view(ada, 'people');

  // 13. Tools: an OAuth configuration, a new tool using it, deleted and made again.
  step = 'tools';
  await ada.getByRole('link', { name: 'Custom tools', exact: true }).click();
  await ada.locator('#tools-rows a').first().waitFor();
  await ada.locator('#oauth-new summary').click();
  await ada.locator('#oauth-name').fill('Tickets OAuth');
  await ada.locator('#oauth-client-id').fill('quarry-tickets');
  await ada.locator('#oauth-auth-url').fill('http://localhost/oauth/authorize');
  await ada.locator('#oauth-token-url').fill('not a url');
  await ada.locator('#oauth-secret').fill('oauth-client-secret');
  await ada.getByRole('button', { name: 'Create OAuth configuration' }).click();
  await ada.locator('#oauth-error', { hasText: 'token_url must be an absolute https:// URL' }).waitFor();
  await ada.locator('#oauth-token-url').fill('https://tickets.example.com/oauth/token');
  await ada.locator('#oauth-scopes').fill('tickets:read');
  await ada.getByRole('button', { name: 'Create OAuth configuration' }).click();
  await ada.locator('#oauth-rows', { hasText: 'Tickets OAuth' }).waitFor();
  await view(ada, 'tools');
  await ada.getByRole('link', { name: 'New custom tool' }).click();
  await ada.locator('#tool-form:not([hidden])').waitFor();
  await ada.locator('#tool-name').fill('tickets');
  await ada.locator('#tool-description').fill('Looks up tickets.');
  const oauthOption = await ada.locator('#tool-oauth-select option', { hasText: 'Tickets OAuth' }).getAttribute('value');
  await ada.locator('#tool-oauth-select').selectOption(oauthOption);
  await view(ada, 'tool-new');
  await ada.getByRole('button', { name: 'Create tool' }).click();
  await ada.waitForURL(/#tool\/\d+$/);
  await ada.locator('#tool-title', { hasText: 'tickets' }).waitFor();
  check((await ada.locator('#tool-oauth-select option:checked').innerText()).includes('Tickets OAuth'), 'the tool uses the OAuth configuration');
  await view(ada, 'tool');
  await ada.getByRole('button', { name: 'Delete tool' }).click();
  await ada.locator('#confirm-yes').click();
  await ada.waitForURL(/#tools$/);
  await ada.locator('#tools-rows a').first().waitFor();
  check(!(await ada.locator('#tools-rows').innerText()).includes('tickets'), 'the tool is gone');
  await ada.getByRole('link', { name: 'New custom tool' }).click();
  await ada.locator('#tool-form:not([hidden])').waitFor();
  await ada.locator('#tool-name').fill('tickets');
  await ada.getByRole('button', { name: 'Create tool' }).click();
  await ada.waitForURL(/#tool\/\d+$/);

  // 14. Ada changes her own password.
  step = 'account';
  await ada.locator('#who-text').click();
  await ada.locator('#account-facts', { hasText: 'ada@example.com' }).waitFor();
  await ada.locator('#password-current').fill('not my password');
  await ada.locator('#password-new').fill('a much longer passphrase now');
  await ada.getByRole('button', { name: 'Change password' }).click();
  await ada.locator('#password-error:not(:empty)').waitFor();
  await ada.locator('#password-current').fill('correct horse battery staple');
  await ada.getByRole('button', { name: 'Change password' }).click();
  await ada.locator('#password-done', { hasText: 'Your password is changed' }).waitFor();
  await view(ada, 'account');

  // 15. The story, in the audit log: filtered by actor, by action, paged
  // (30 more entries first, so that there are pages: a change that
  // changes nothing is recorded too).
  step = 'audit';
  await ada.evaluate(async (id) => {
    const conn = await (await fetch(`manage/connector/${id}`)).json();
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`manage/admin/connector/${id}`, { method: 'PATCH', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...conn, access_type: 'private', groups: [] }) });
      if (!res.ok) throw new Error(`PATCH: ${res.status}`);
    }
  }, handbookID);
  await ada.getByRole('link', { name: 'Audit log', exact: true }).click();
  await ada.locator('#audit-rows tr').first().waitFor();
  await ada.waitForURL(/anchor=\d+/);
  await ada.locator('#audit-actor').fill('ADA@example.com');
  await ada.locator('#audit-type').selectOption('cc_pair');
  await ada.getByRole('button', { name: 'Filter', exact: true }).click();
  await ada.waitForURL(/actor=ADA/);
  await ada.locator('#audit-summary', { hasText: 'of 4' }).waitFor(); // 2 made, paused, resumed
  const story = await rows(ada, 'audit-rows');
  check(story.some((r) => r.includes('cc_pair.create') && r.includes(`cc_pair #${pairID}`)), `the pair's creation: ${story.join(' | ')}`);
  check(story.filter((r) => r.includes('cc_pair.update') && r.includes('status')).length === 2, 'paused and resumed');
  await view(ada, 'audit');
  await ada.locator('#audit-type').selectOption('');
  await ada.locator('#audit-action').selectOption('user_group.set_curator');
  await ada.getByRole('button', { name: 'Filter', exact: true }).click();
  await ada.locator('#audit-summary', { hasText: 'of 1' }).waitFor();
  await ada.locator('#audit-rows').getByRole('link', { name: `user_group #${groupID}` }).click();
  await ada.locator('#group-title', { hasText: 'Support' }).waitFor();
  await ada.goBack();
  await ada.locator('#audit-summary', { hasText: 'of 1' }).waitFor();
  // Pages: every entry, 50 a page.
  await ada.getByRole('button', { name: 'Clear', exact: true }).click();
  await ada.locator('#audit-summary', { hasText: 'Entries 1–50 of' }).waitFor();
  await ada.getByRole('button', { name: 'Older' }).click();
  await ada.waitForURL(/page=2/);
  await ada.locator('#audit-summary', { hasText: 'Entries 51–' }).waitFor();
  await ada.getByRole('button', { name: 'Newer' }).click();
  await ada.locator('#audit-summary', { hasText: 'Entries 1–50 of' }).waitFor();

  // 16. Cy's new password works; Cy signs out.
  step = 'cy signs in again';
  page = cy;
  await cy.goto(url);
  await cy.locator('#login-email').waitFor();
  await cy.locator('#login-email').fill('cy@example.com');
  await cy.locator('#login-password').fill(cyPassword);
  await cy.keyboard.press('Enter');
  await cy.locator('#who', { hasText: 'curator' }).waitFor();
  await cy.getByRole('button', { name: 'Sign out' }).click();
  await cy.locator('#login-email').waitFor();

  check(consoleErrors.length === 0, `no errors in the page: ${consoleErrors.join(' | ')}`);
  console.log(`axe ${JSON.stringify(axeReport)}`);
  console.log(JSON.stringify({ ok: true, views: shotN }));
} catch (e) {
  console.error(`FAILED at step "${step}": ${e.stack || e}`);
  if (consoleErrors.length) console.error(`page errors: ${consoleErrors.join(' | ')}`);
  if (page) await page.screenshot({ path: path.join(outdir, 'console-failure.png'), fullPage: true }).catch(() => {});
  await browser.close();
  process.exit(1);
}
await browser.close();
