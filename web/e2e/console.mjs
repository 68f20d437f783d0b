// Tells the admin console's story in Debian's Chromium, as
// web/console_e2e_test.go asks:
//
//   node console.mjs <url> <screenshot dir> <MCP server URL> <MCP server URL with a key>
//
// The server starts with an empty database, local accounts on and
// registration by invitation. Ada registers (the first person: an admin),
// creates a connector, a credential and a pair, pauses and resumes it,
// creates a group, invites Cy; Cy registers; Ada makes Cy the group's
// curator and shares the pair with it; Cy sees only that group's pair; Ada
// indexes the pair (Run now, Cancel, re-indexed from the beginning: the
// attempts appear by themselves), makes a registration token with which a
// worker (plain requests here) registers, runs the attempt with errors and
// fails it, as the pair's page shows; she revokes the worker and the token;
// makes and revokes API keys, a custom tool with an OAuth configuration,
// adds two MCP servers (one open, whose tools she lists and enables; one
// that asks each person for their own key, which she gives), changes her
// password, makes a personal access token with which an MCP client lists
// the tools she enabled (and revokes it), and reads the story in the
// audit log. Search is everyone's start page: a document pushed through
// Onyx's ingestion API is found from it (keyboard only: "/", the words,
// the arrows), highlighted, filtered, opened. Every main
// flow is done at least once with the keyboard alone (tabTo: Tab to each
// control, whose focus must be visible and which must have a label; Enter,
// Space or typing to act): signing in and out, a connector, a credential
// made and edited, a pair paused and resumed, a group renamed with a
// curator, an invitation and a role change, API keys made, regenerated
// and revoked, a custom tool made, edited and deleted, the status table
// sorted and filtered, the audit log filtered and paged. Every view is
// checked with axe-core (no serious or critical violation) and shot at
// 1280 and 390 px wide; the page must log no error. Any failed check
// exits non-zero, with a screenshot "console-failure.png".

import { chromium } from 'playwright-core';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { keys, tabTo, press, typeIn, choose, navTo } from './story.mjs';

const [base, outdir, mcpOpen, mcpKeyed] = process.argv.slice(2);
if (!base || !outdir || !mcpOpen || !mcpKeyed) {
  console.error('usage: node console.mjs <url> <outdir> <MCP server URL> <MCP server URL with a key>');
  process.exit(2);
}
const url = base.endsWith('/') ? base : `${base}/`;
const origin = new URL(url).origin;
const executablePath = process.env.QUARRY_CHROMIUM || '/usr/bin/chromium';
const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const consoleErrors = [];
const attemptCalls = {}; // requests for a pair's index attempts, per person
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
  page.on('request', (r) => {
    if (r.url().includes('/index-attempts')) attemptCalls[who] = (attemptCalls[who] || 0) + 1;
  });
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
 * mcpTools lists the tools of Quarry's MCP endpoint as an MCP client with
 * token does (initialize, then tools/list, each request on its own: the
 * endpoint keeps no session), or returns the status of a refusal.
 */
async function mcpTools(token) {
  const rpc = async (id, method, params) => {
    const res = await fetch(`${url}mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    if (!res.ok) return { status: res.status };
    return { status: res.status, body: await res.json() };
  };
  const init = await rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'console.mjs', version: '1' } });
  if (init.status !== 200) return init;
  const list = await rpc(2, 'tools/list', {});
  return { status: list.status, names: list.body.result.tools.map((t) => t.name).sort() };
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
  await press(ada, '#register-show');
  await typeIn(ada, '#register-email', 'ada@example.com');
  await typeIn(ada, '#register-password', 'correct horse battery staple');
  await ada.keyboard.press('Enter');
  await ada.locator('#who', { hasText: 'admin' }).waitFor();
  check(await currentView(ada) === 'view-search', 'an admin lands on the search page');
  check(await ada.evaluate(() => document.activeElement.id) === 'search-title', 'focus on the search page\'s title');
  await view(ada, 'search-empty');
  check(await ada.locator('#nav a:not([hidden])').count() === 14, 'an admin sees every section');
  await ada.getByRole('link', { name: 'Status', exact: true }).click();
  await ada.locator('#status-empty', { hasText: 'No cc-pairs yet' }).waitFor();
  await view(ada, 'status-empty');

  // 2. A connector: source, input type, settings as rows and as JSON, a
  // schedule with units.
  step = 'connector';
  // With the keyboard alone, from the nav to the Create button.
  await navTo(ada, 'connectors');
  await ada.locator('#connectors-rows', { hasText: 'No connectors yet' }).waitFor();
  await view(ada, 'connectors-empty');
  await press(ada, 'a[href="#connector/new"]');
  await ada.locator('#connector-form:not([hidden])').waitFor();
  await typeIn(ada, '#connector-name', 'Team wiki');
  // A source without a form of its own (Notion) gets the key/value editor.
  await choose(ada, '#connector-source', 'Notion', 'notion');
  check((await ada.locator('#connector-source option').count()) === 55, 'the source picker offers the 55 sources');
  await choose(ada, '#connector-input-type', 'poll', 'poll');
  const config = ada.locator('#connector-config');
  const lastRow = '#connector-config .kv-row:last-child';
  await press(ada, '#connector-config button', { name: 'Add a setting' }); // the focus goes to the new key
  await typeIn(ada, `${lastRow} input[id$="-k"]`, 'wiki_base');
  await typeIn(ada, `${lastRow} input[id$="-v"]`, 'https://acme.atlassian.net/wiki');
  await press(ada, '#connector-config button', { name: 'Add a setting' });
  await typeIn(ada, `${lastRow} input[id$="-k"]`, 'space_keys');
  await choose(ada, `${lastRow} select[id$="-t"]`, 'JSON', 'json');
  await typeIn(ada, `${lastRow} input[id$="-v"]`, '["SUP", "ENG"]');
  await press(ada, '#connector-config button', { name: 'Edit as JSON' }); // the focus goes to the JSON
  const json = JSON.parse(await config.getByLabel('As JSON (an object)').inputValue());
  check(json.wiki_base === 'https://acme.atlassian.net/wiki' && json.space_keys[1] === 'ENG', `JSON view: ${JSON.stringify(json)}`);
  // Confluence has its form, with Onyx's fields.
  await choose(ada, '#connector-source', 'Confluence', 'confluence');
  const cfField = (key) => `#connector-config [data-key="${key}"]`;
  check(await ada.locator(cfField('is_cloud')).isChecked(), 'a new Confluence connector is Cloud, as Onyx\'s form starts');
  await typeIn(ada, cfField('wiki_base'), 'https://acme.atlassian.net/wiki');
  await typeIn(ada, cfField('space'), 'ENG');
  await ada.locator(cfField('index_recursively')).check();
  await typeIn(ada, '#connector-refresh', '30');
  await choose(ada, '#connector-refresh-unit', 'minutes', '60');
  await typeIn(ada, '#connector-prune', '1');
  await choose(ada, '#connector-prune-unit', 'days', '86400');
  await view(ada, 'connector-new');
  await press(ada, '#connector-save', { name: 'Create connector' });
  await ada.waitForURL(/#connector\/\d+$/);
  await ada.locator('#connector-title', { hasText: 'Team wiki' }).waitFor();
  const connID = idFromURL(ada, 'connector');
  const conn = await ada.evaluate(async (id) => (await fetch(`manage/connector/${id}`)).json(), connID);
  check(conn.refresh_freq === 1800 && conn.prune_freq === 86400, `frequencies in seconds: ${conn.refresh_freq}, ${conn.prune_freq}`);
  check(conn.connector_specific_config.index_recursively === true && conn.connector_specific_config.space === 'ENG' &&
    conn.connector_specific_config.wiki_base === 'https://acme.atlassian.net/wiki' && conn.connector_specific_config.is_cloud === true,
    `config saved: ${JSON.stringify(conn.connector_specific_config)}`);
  check(await ada.locator('#connector-refresh-unit').inputValue() === '60' && await ada.locator('#connector-refresh').inputValue() === '30',
    'refresh shown as 30 minutes');
  // The MediaWiki form checks its fields before anything is sent (not
  // saved here); the file form has its place for the upload control.
  await ada.goto(`${url}#connector/new`);
  await ada.locator('#connector-form:not([hidden])').waitFor();
  await typeIn(ada, '#connector-name', 'Wiki');
  await choose(ada, '#connector-source', 'MediaWiki', 'mediawiki');
  const wikiField = (key) => `#connector-config [data-key="${key}"]`;
  await typeIn(ada, wikiField('hostname'), 'wiki.example.com');
  await press(ada, '#connector-save', { name: 'Create connector' });
  await ada.locator('#connector-error', { hasText: 'Name at least one page or one category.' }).waitFor();
  check(await ada.evaluate((sel) => document.activeElement === document.querySelector(sel), wikiField('pages')), 'the pages field takes the focus');
  await ada.keyboard.type('Main Page');
  await typeIn(ada, wikiField('recurse_depth'), '-2');
  await press(ada, '#connector-save', { name: 'Create connector' });
  await ada.locator('#connector-error', { hasText: 'Subcategory depth must be at least -1.' }).waitFor();
  await view(ada, 'connector-new-mediawiki-invalid');
  // The Jira form takes a project key or a JQL query, not both (Onyx's
  // tabs); not saved here either.
  await choose(ada, '#connector-source', 'Jira', 'jira');
  const jiraField = (key) => `#connector-config [data-key="${key}"]`;
  check(!(await ada.locator(jiraField('scoped_token')).isChecked()), 'Jira\'s scoped token box, unchecked');
  await typeIn(ada, jiraField('jira_base_url'), 'https://example.atlassian.net');
  await typeIn(ada, jiraField('project_key'), 'ENG');
  await typeIn(ada, jiraField('jql_query'), 'labels = docs');
  await press(ada, '#connector-save', { name: 'Create connector' });
  await ada.locator('#connector-error', { hasText: 'Give a project key or a JQL query, not both.' }).waitFor();
  check(await ada.evaluate((sel) => document.activeElement === document.querySelector(sel), jiraField('jql_query')), 'the JQL field takes the focus');
  await ada.locator('#connector-source').selectOption('file');
  await ada.locator('#connector-config [data-key="file_locations"]').waitFor();
  check(await ada.locator('#connector-file-box').isVisible(), 'the file form has its upload');
  // The GitHub form: Onyx's fields, its checkboxes set as the
  // connector's defaults, at least one kind of item (not saved here).
  await choose(ada, '#connector-source', 'GitHub', 'github');
  const ghField = (key) => `#connector-config [data-key="${key}"]`;
  await ada.locator(ghField('repo_owner')).waitFor();
  check(await ada.locator(ghField('include_prs')).isChecked() && !(await ada.locator(ghField('include_issues')).isChecked()),
    'a new GitHub connector reads pull requests, not issues');
  await typeIn(ada, ghField('repo_owner'), 'acme');
  await ada.locator(ghField('include_prs')).uncheck();
  await press(ada, '#connector-save', { name: 'Create connector' });
  await ada.locator('#connector-error', { hasText: 'Include pull requests, issues or documents: at least one.' }).waitFor();
  await view(ada, 'connector-new-github-invalid');
  // The Google Drive form: Onyx's fields, something to index asked for
  // (not saved here).
  await choose(ada, '#connector-source', 'Google Drive', 'google_drive');
  const gdField = (key) => `#connector-config [data-key="${key}"]`;
  await ada.locator(gdField('shared_folder_urls')).waitFor();
  await press(ada, '#connector-save', { name: 'Create connector' });
  await ada.locator('#connector-error', { hasText: 'Include shared drives, My Drives or files shared with you, or name drives, folders or My Drive emails: at least one.' }).waitFor();
  check(await ada.evaluate((sel) => document.activeElement === document.querySelector(sel), gdField('include_shared_drives')), 'the shared drives box takes the focus');
  // A second connector, for a pair no group shares: a web connector,
  // made with the keyboard through the web form, whose fields are
  // checked before saving.
  await navTo(ada, 'connectors');
  await press(ada, 'a[href="#connector/new"]');
  await ada.locator('#connector-form:not([hidden])').waitFor();
  await typeIn(ada, '#connector-name', 'Handbook');
  await choose(ada, '#connector-source', 'Web', 'web');
  const webField = (key) => `#connector-config [data-key="${key}"]`;
  await ada.locator(webField('base_url')).waitFor();
  check(await ada.locator(webField('web_connector_type')).inputValue() === 'recursive', 'a new web connector crawls recursively');
  await typeIn(ada, webField('request_delay_ms'), '70000');
  await view(ada, 'connector-new-web');
  await press(ada, '#connector-save', { name: 'Create connector' });
  await ada.locator('#connector-error', { hasText: 'Base URL is required.' }).waitFor();
  check(await ada.evaluate((sel) => document.activeElement === document.querySelector(sel) &&
    document.activeElement.getAttribute('aria-invalid') === 'true', webField('base_url')), 'the missing base URL is marked and focused');
  await ada.keyboard.type('https://handbook.example.com/');
  await press(ada, '#connector-save', { name: 'Create connector' });
  await ada.locator('#connector-error', { hasText: 'Pause between requests (ms) must be at most 60000.' }).waitFor();
  await view(ada, 'connector-new-web-invalid');
  await typeIn(ada, webField('request_delay_ms'), '0');
  await choose(ada, webField('web_connector_type'), 'single', 'single');
  await press(ada, '#connector-save', { name: 'Create connector' });
  await ada.waitForURL(/#connector\/\d+$/);
  const handbookID = idFromURL(ada, 'connector');
  const handbook = await ada.evaluate(async (id) => (await fetch(`manage/connector/${id}`)).json(), handbookID);
  check(JSON.stringify(handbook.connector_specific_config) ===
    JSON.stringify({ base_url: 'https://handbook.example.com/', web_connector_type: 'single', request_delay_ms: 0 }),
  `the web form's configuration: ${JSON.stringify(handbook.connector_specific_config)}`);
  await ada.locator(webField('base_url')).waitFor();
  check(await ada.locator(webField('base_url')).inputValue() === 'https://handbook.example.com/', 'the saved connector shows its base URL');
  // A file connector: files, then Onyx's zip with its metadata, uploaded
  // from the form (the bar shows the upload's progress), fill in the
  // configuration.
  await ada.goto(`${url}#connector/new`);
  await ada.locator('#connector-form:not([hidden])').waitFor();
  await ada.locator('#connector-name').fill('Uploaded files');
  check(await ada.locator('#connector-file-box').isHidden(), 'no upload for a source other than file');
  await ada.locator('#connector-source').selectOption('file');
  await ada.locator('#connector-file-box:not([hidden])').waitFor();
  // A file of a kind Quarry does not read is named, with why.
  await ada.getByLabel('Files to index').setInputFiles([{ name: 'chart.png', mimeType: 'image/png', buffer: Buffer.from('\x89PNG') },
    { name: 'readme.txt', mimeType: 'text/plain', buffer: Buffer.from('Granite.') }]);
  await ada.locator('#connector-file-box button', { hasText: 'Upload' }).click();
  await ada.locator('#connector-file-box [role="status"]', { hasText: 'Uploaded: 2 files (chart.png, readme.txt). 1 file will not be read.' }).waitFor();
  const unreadList = await ada.locator('#connector-file-box .note li').allInnerTexts();
  check(unreadList.length === 1 && unreadList[0].startsWith('chart.png: Quarry does not read .png files: it reads .txt, '),
    `the file not read, with why: ${JSON.stringify(unreadList)}`);
  await view(ada, 'connector-file-unread');
  await ada.getByLabel('Files to index').setInputFiles(fileURLToPath(new URL('../../outbound/connector/testdata/file/with_meta.zip', import.meta.url)));
  await ada.locator('#connector-file-box button', { hasText: 'Upload' }).click();
  await ada.locator('#connector-file-box [role="status"]', { hasText: 'Uploaded: 2 files (sample1.txt, sample2.txt), with the zip\'s metadata.' }).waitFor();
  check(await ada.locator('#connector-file-box .note').isHidden(), 'an upload of files all read lists none');
  check(await ada.locator('#connector-file-box progress').evaluate((p) => p.value) === 100, 'the progress bar is full');
  await view(ada, 'connector-file-upload');
  await ada.getByRole('button', { name: 'Create connector' }).click();
  await ada.waitForURL(/#connector\/\d+$/);
  const uploaded = await ada.evaluate(async (id) => (await fetch(`manage/connector/${id}`)).json(), idFromURL(ada, 'connector'));
  const fc = uploaded.connector_specific_config;
  check(fc.file_locations.length === 4 && fc.file_names.join() === 'chart.png,readme.txt,sample1.txt,sample2.txt' && typeof fc.zip_metadata_file_id === 'string',
    `the uploads' answers are the configuration: ${JSON.stringify(fc)}`);

  // 3. Credentials, owned by Ada.
  step = 'credential';
  // Made and edited with the keyboard alone.
  await navTo(ada, 'credentials');
  await ada.locator('#credentials-rows', { hasText: 'No credentials yet' }).waitFor();
  await press(ada, 'a[href="#credential/new"]');
  await ada.locator('#credential-form:not([hidden])').waitFor();
  await typeIn(ada, '#credential-name', 'wiki bot');
  await choose(ada, '#credential-source', 'Confluence', 'confluence');
  // The form offers Confluence's keys (Onyx's): their values are typed in.
  const offered = await ada.locator('#credential-fields input[id$="-k"]').evaluateAll((ks) => ks.map((k) => k.value));
  check(offered.join() === 'confluence_username,confluence_access_token', `the keys offered: ${offered}`);
  await typeIn(ada, '#credential-fields .kv-row:first-child input[id$="-v"]', 'bot@acme.com');
  await typeIn(ada, '#credential-fields .kv-row:last-child input[id$="-v"]', 'ATATT3x-0123456789-a-longer-secret');
  await view(ada, 'credential-new');
  await press(ada, '#credential-save', { name: 'Create credential' });
  await ada.waitForURL(/#credential\/\d+$/);
  await ada.locator('#credential-meta', { hasText: 'owner ada@example.com' }).waitFor();
  const credID = idFromURL(ada, 'credential');
  check(await ada.getByLabel('confluence_access_token', { exact: true }).inputValue() === 'ATAT...cret', 'the token is shown masked');
  await view(ada, 'credential');
  // Edited: a new user name, saved with Enter; the masked token is left as it is.
  await typeIn(ada, '#credential-fields input', 'support-bot@acme-corporation.example.com', { name: 'confluence_username' });
  await ada.keyboard.press('Enter');
  await ada.locator('#credential-saved', { hasText: 'Saved at' }).waitFor();
  // The server shows values masked: "supp....com" is the new name's mask
  // (the old one, under 30 characters, was all bullets).
  const edited = await ada.evaluate(async (id) => (await fetch(`manage/credential/${id}`)).json(), credID);
  check(edited.credential_json.confluence_username === 'supp....com' && edited.credential_json.confluence_access_token === 'ATAT...cret',
    `the credential is saved: ${JSON.stringify(edited.credential_json)}`);
  check((await tabTo(ada, '#credential-fields input', { name: 'confluence_username', max: 0 })).presses === 0,
    'after saving, the focus is still on the field');
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
  // Made, paused and resumed with the keyboard alone.
  await typeIn(ada, '#pair-name', 'wiki-support');
  await choose(ada, '#pair-access', 'private', 'private');
  await view(ada, 'pair-new');
  await press(ada, '#pair-create');
  await ada.waitForURL(/#pair\/\d+$/);
  const pairID = idFromURL(ada, 'pair');
  await ada.locator('#pair-facts', { hasText: 'Team wiki' }).waitFor();
  await settled(ada);
  await press(ada, '#pair-toggle', { name: 'Pause' });
  await ada.locator('#pair-saved', { hasText: 'Paused.' }).waitFor();
  check((await ada.locator('#pair-facts').innerText()).includes('paused'), 'the pair shows paused');
  await view(ada, 'pair');
  await press(ada, '#pair-toggle', { name: 'Resume', max: 0 }); // the focus stayed on the button
  await ada.locator('#pair-saved', { hasText: 'Resumed.' }).waitFor();
  // The connector's view links back to the pair.
  await press(ada, `#pair-facts a[href="#connector/${connID}"]`, { back: true });
  await ada.locator('#connector-pairs').getByRole('link', { name: 'wiki-support' }).waitFor();
  await view(ada, 'connector');
  await ada.goto(`${url}#pair/new?connector=${handbookID}&credential=${handbookCred}`);
  await ada.locator(`#pair-credential option[value="${handbookCred}"]`).waitFor({ state: 'attached' });
  await ada.locator('#pair-name').fill('handbook-all');
  await ada.getByRole('button', { name: 'Create the pair' }).click();
  await ada.waitForURL(/#pair\/\d+$/);
  const handbookPairID = idFromURL(ada, 'pair');

  // 4b. Indexing. The test server runs no scheduler: the story asks for a
  // pass (POST _e2e/schedule) where quarry serve would run one by itself.
  // Run now asks for a run; the page shows the attempt the pass makes by
  // itself (it refreshes while a run is asked for or an attempt waits).
  // Cancel pauses the pair, which cancels the attempt; resumed, the pair is
  // re-indexed from the beginning, confirmed. With the keyboard alone.
  step = 'indexing';
  const schedule = async () => {
    const res = await fetch(new URL('_e2e/schedule', url), { method: 'POST' });
    check(res.ok, `a pass of the scheduler: ${res.status}`);
    return res.json();
  };
  await ada.goto(`${url}#pair/${pairID}`);
  await ada.locator('#pair-attempts-rows', { hasText: 'No index attempts yet' }).waitFor();
  await settled(ada);
  const facts = await ada.locator('#pair-indexing-facts').innerText();
  check(facts.includes('Documents indexed') && facts.includes('never') && facts.includes('none yet'), `a pair never indexed: ${facts}`);
  await press(ada, '#pair-run', { name: 'Run now' });
  await ada.locator('#pair-indexing-done', { hasText: 'Asked for a run' }).waitFor();
  check((await schedule()).created >= 1, 'the pass makes the attempt');
  const attemptRows = ada.locator('#pair-attempts-rows tr[data-attempt]');
  await attemptRows.first().locator('.badge', { hasText: 'not started' }).waitFor();
  await ada.locator('#pair-live', { hasText: 'waits for a worker' }).waitFor();
  const firstAttempt = Number(await attemptRows.first().getAttribute('data-attempt'));
  check((await attemptRows.first().innerText()).includes('set when a worker takes it'), 'no poll window before a worker takes it');
  // Cancel is offered while an attempt waits: the pair's facts, which
  // show it, refresh apart from its attempts, so it may come a moment later.
  await ada.locator('#pair-cancel').waitFor({ state: 'visible' });
  check((await ada.locator('#pair-cancel').getAttribute('title')).includes('cancels a running attempt when its pair is paused'),
    'Cancel says it pauses');
  await view(ada, 'pair-attempt-waiting');
  await press(ada, '#pair-cancel', { name: 'Cancel' });
  await ada.locator('#pair-saved', { hasText: 'its attempt is canceled' }).waitFor();
  await ada.locator(`#pair-attempts-rows tr[data-attempt="${firstAttempt}"] .badge`, { hasText: 'canceled' }).waitFor();
  check(await ada.locator('#pair-run').isDisabled() && await ada.locator('#pair-cancel').isHidden(), 'a paused pair is not run');
  await press(ada, '#pair-toggle', { name: 'Resume', max: 0 }); // the focus went to Resume
  await ada.locator('#pair-saved', { hasText: 'Resumed.' }).waitFor();
  await press(ada, '#pair-reindex', { name: 'Re-index from the beginning' });
  await ada.locator('#confirm[open]').waitFor();
  await press(ada, '#confirm-yes', { name: 'Re-index from the beginning', back: true });
  await ada.locator('#pair-indexing-done', { hasText: 'from the beginning' }).waitFor();
  check((await schedule()).created === 1, 'the pass makes one attempt');
  await ada.locator('#pair-attempts-rows tr[data-attempt]:first-child .badge', { hasText: 'not started' }).waitFor();
  const reindexAttempt = Number(await attemptRows.first().getAttribute('data-attempt'));
  check(reindexAttempt > firstAttempt && await attemptRows.count() === 2, 'newest first');
  check((await attemptRows.first().locator('td').nth(2).innerText()) === 'yes', 'from the beginning');
  check((await ada.locator('#pair-attempts-summary').innerText()) === 'Attempts 1–2 of 2, newest first.', 'the attempts are counted');

  // 4c. Workers: Ada makes a registration token (shown once, with the
  // command that starts a worker); a worker registers with it and runs the
  // attempt, with errors, and fails it; the pair's page shows it as it
  // goes. Ada revokes the worker and the token.
  step = 'workers';
  await navTo(ada, 'workers');
  await ada.locator('#workers-rows', { hasText: 'No workers yet' }).waitFor();
  await ada.locator('#registrations-rows', { hasText: 'No registration tokens yet' }).waitFor();
  const leftAt = attemptCalls.ada;
  await view(ada, 'workers-empty');
  await typeIn(ada, '#registration-name', 'build box');
  await typeIn(ada, '#registration-hours', '2');
  await ada.keyboard.press('Enter');
  await ada.locator('#registration-secret:not([hidden])').waitFor();
  const regToken = await ada.locator('#registration-secret-value').inputValue();
  check(/^qrr_[A-Za-z0-9_-]{20,}$/.test(regToken), `a registration token shown once: ${regToken.slice(0, 8)}…`);
  const command = await ada.getByLabel('Start a worker on another machine with').inputValue();
  check(command === `quarry worker --server ${url.replace(/\/$/, '')} --registration-token ${regToken}`, `the command: ${command}`);
  await press(ada, '#registration-secret button', { name: 'Copy', max: 0 }); // the focus is on the token's Copy
  await ada.locator('#registration-secret', { hasText: 'Copied.' }).waitFor();
  check(await ada.evaluate(() => navigator.clipboard.readText()) === regToken, 'the token is on the clipboard');
  await ada.locator('#registrations-rows tr', { hasText: 'build box' }).locator('.badge', { hasText: 'valid' }).waitFor();
  await view(ada, 'workers-token');
  await press(ada, '#registration-secret button', { name: 'Done' });
  check(await ada.evaluate((t) => ![...document.querySelectorAll('input')].some((i) => i.value.includes(t)), regToken),
    'the token is gone from the page');
  // Away from the pair's page, its attempts are no longer asked for.
  await ada.waitForTimeout(3500);
  check(attemptCalls.ada === leftAt, `the pair's page stopped refreshing when left (${attemptCalls.ada - leftAt} requests since)`);
  // A worker (plain requests, as quarry worker makes them).
  const send = async (method, p, token, body) => {
    const res = await fetch(new URL(p, url), { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const registered = await send('POST', 'worker/register', regToken, { name: 'build-box-1' });
  check(registered.status === 200 && registered.body.token.startsWith('qrw_'), `the worker registers: ${registered.status}`);
  const workerToken = registered.body.token;
  // It takes the attempts waiting: the handbook's (due since it was made)
  // and the wiki's.
  const leases = [];
  for (let i = 0; i < 3; i++) {
    const l = await send('POST', 'worker/lease', workerToken);
    check(l.status === 200, `a lease: ${l.status}`);
    if (!l.body.attempt) break;
    leases.push(l.body.attempt);
  }
  const wikiLease = leases.find((l) => l.cc_pair_id === pairID);
  check(wikiLease && wikiLease.attempt_id === reindexAttempt && wikiLease.from_beginning, `the worker holds the wiki's attempt: ${JSON.stringify(leases)}`);
  await press(ada, '#workers-refresh');
  const workerRow = ada.locator('#workers-rows tr', { hasText: 'build-box-1' });
  await workerRow.waitFor();
  check((await workerRow.innerText()).includes(`#${reindexAttempt}`), 'the worker\'s row lists the attempt it holds');
  await ada.waitForFunction(() => document.querySelector('#registrations-rows tr td:nth-child(6)')?.textContent === '1'); // workers it made
  await view(ada, 'workers');
  // The pair's page, as the worker goes.
  await ada.goto(`${url}#pair/${pairID}`);
  await ada.locator('#pair-live', { hasText: `Attempt #${reindexAttempt} is running` }).waitFor();
  await ada.locator('#pair-live-age', { hasText: /Last update \d+ s ago/ }).waitFor();
  const doc = (id) => ({ id, sections: [{ text: 'Hello', link: `https://acme.atlassian.net/wiki/${id}` }], source: 'confluence',
    semantic_identifier: `Page ${id}`, metadata: {} });
  const progress = await send('POST', `worker/attempts/${reindexAttempt}/progress`, workerToken, {
    documents: [doc('DOC-1'), doc('DOC-2')],
    failures: [
      { failed_document: { document_id: 'DOC-3', document_link: 'https://acme.atlassian.net/wiki/DOC-3' }, failure_message: 'Page too large' },
      { failed_document: { document_id: 'DOC-4', document_link: 'javascript:alert(1)' }, failure_message: '<img src=x onerror=alert(1)>' },
      { failed_document: { document_id: '<m-5@example.com>', document_link: 'imap://mail.example.com:993/INBOX;UIDVALIDITY=7/;UID=5' }, failure_message: 'Message too large' },
    ],
  });
  check(progress.status === 200, `progress: ${progress.status} ${JSON.stringify(progress.body)}`);
  await ada.locator('#pair-live', { hasText: '2 documents so far, 3 errors' }).waitFor();
  const errorRows = ada.locator('#pair-errors-rows tr');
  await errorRows.nth(1).waitFor();
  const docLink = ada.locator('#pair-errors-rows a', { hasText: 'DOC-3' });
  check(await docLink.getAttribute('href') === 'https://acme.atlassian.net/wiki/DOC-3' && (await docLink.getAttribute('rel')).includes('noopener'),
    'an http(s) document link is a link, with rel=noopener');
  const mailLink = ada.locator('#pair-errors-rows a', { hasText: '<m-5@example.com>' });
  check(await mailLink.getAttribute('href') === 'imap://mail.example.com:993/INBOX;UIDVALIDITY=7/;UID=5', 'a mail message\'s IMAP URL is a link');
  check(await ada.locator('#pair-errors-rows a').count() === 2, 'a javascript: link is no link');
  check((await ada.locator('#pair-errors-rows').innerText()).includes('<img src=x onerror=alert(1)>') &&
    await ada.locator('#pair-errors-rows img').count() === 0, 'a message is text');
  check((await send('POST', 'worker/heartbeat', workerToken, { attempt_ids: leases.map((l) => l.attempt_id) })).status === 200, 'a heartbeat');
  const trace = 'Traceback (most recent call last):\n  File "connector.py", line 12, in load\nConnectorMissing: confluence';
  const finished = await send('POST', `worker/attempts/${reindexAttempt}/finish`, workerToken,
    { status: 'failed', error_msg: 'Quarry has no connector for confluence yet', full_exception_trace: trace });
  check(finished.status === 200 && finished.body.status === 'failed', `finished: ${JSON.stringify(finished.body)}`);
  for (const l of leases.filter((x) => x.cc_pair_id !== pairID)) {
    check((await send('POST', `worker/attempts/${l.attempt_id}/finish`, workerToken, { status: 'success' })).status === 200, 'the handbook is indexed');
  }
  await ada.locator('#pair-live', { hasText: `The latest attempt, #${reindexAttempt}, ended: failed` }).waitFor();
  const failedRow = ada.locator(`#pair-attempts-rows tr[data-attempt="${reindexAttempt}"]`);
  check((await failedRow.innerText()).includes('Quarry has no connector for confluence yet'), 'the error message');
  check((await failedRow.locator('td').nth(3).innerText()) === '2 / 2', 'new / total documents');
  await press(ada, `#pair-attempts-rows tr[data-attempt="${reindexAttempt}"] summary`, { name: 'Trace' });
  check((await failedRow.locator('pre').innerText()).includes('ConnectorMissing: confluence'), 'the trace, behind a disclosure');
  const indexed = await ada.locator('#pair-indexing-facts').innerText();
  check(indexed.includes('failed') && /Documents indexed\s+2/.test(indexed), `the pair's indexing: ${indexed}`);
  await view(ada, 'pair-attempt-failed');
  // Its documents: counted, listed, and one's text, with the keyboard.
  await ada.locator('#pair-docs-summary', { hasText: 'It holds 2 documents' }).waitFor();
  check((await rows(ada, 'pair-docs-rows')).length === 2, 'the pair\'s two documents are listed');
  await press(ada, '#pair-docs-rows button', { name: 'Show the text of Page DOC-1' });
  await ada.locator('#pair-doc:not([hidden])').waitFor();
  check(await ada.evaluate(() => document.activeElement?.id === 'pair-doc-title'), 'the document\'s title takes the focus');
  check((await ada.locator('#pair-doc-title').innerText()) === 'Page DOC-1' && (await ada.locator('#pair-doc-text').innerText()) === 'Hello',
    'the document\'s text');
  await view(ada, 'pair-document');
  await press(ada, '#pair-doc-close', { name: 'Close the document' });
  check(await ada.evaluate(() => document.activeElement?.getAttribute('aria-label') === 'Show the text of Page DOC-1'),
    'closing gives the focus back to the document\'s button');
  await ada.locator('#pair-prune-state', { hasText: 'Never pruned.' }).waitFor();
  await press(ada, '#pair-prune', { name: 'Prune now' });
  await ada.locator('#pair-prune-done', { hasText: 'Asked for a prune' }).waitFor();
  await ada.locator('#pair-prune-state', { hasText: 'A prune is asked for' }).waitFor();
  check((await schedule()).prunes === 1, 'the scheduler makes the prune asked for');
  // A prune that cannot run says why on the page (issue 39), not in a
  // green "Never pruned.".
  const pruneLease = await send('POST', 'worker/lease', workerToken);
  check(pruneLease.status === 200 && pruneLease.body.attempt?.kind === 'prune', `the prune is leased: ${JSON.stringify(pruneLease.body)}`);
  const cannot = 'The confluence connector cannot list the ids of its documents, so its cc-pairs cannot be pruned';
  check((await send('POST', `worker/attempts/${pruneLease.body.attempt.attempt_id}/finish`, workerToken,
    { status: 'failed', error_msg: cannot })).status === 200, 'the prune fails');
  await ada.goto(`${url}#pair/${pairID}`);
  const pruneState = ada.locator('#pair-prune-state', { hasText: cannot });
  await pruneState.waitFor();
  check(await pruneState.getAttribute('class') === 'error-text' && (await pruneState.innerText()).includes('The last prune (failed,') &&
    (await pruneState.innerText()).includes('Never pruned.'), `the failed prune on the page: ${await pruneState.innerText()}`);
  await view(ada, 'pair-prune-failed');
  // Revoked, the worker and the token are refused.
  await navTo(ada, 'workers');
  await ada.locator('#workers-rows tr', { hasText: 'build-box-1' }).waitFor();
  await press(ada, 'button[aria-label="Revoke worker build-box-1"]');
  await ada.locator('#confirm[open]').waitFor();
  await press(ada, '#confirm-yes', { name: 'Revoke', back: true });
  await ada.locator('#workers-done', { hasText: 'Worker build-box-1 is revoked' }).waitFor();
  await ada.locator('#workers-rows tr', { hasText: 'build-box-1' }).locator('.badge', { hasText: 'revoked' }).waitFor();
  check((await send('POST', 'worker/lease', workerToken)).status === 401, 'a revoked worker is refused');
  await press(ada, 'button[aria-label="Revoke registration token build box"]');
  await ada.locator('#confirm[open]').waitFor();
  await press(ada, '#confirm-yes', { name: 'Revoke', back: true });
  await ada.locator('#registrations-rows tr', { hasText: 'build box' }).locator('.badge', { hasText: 'revoked' }).waitFor();
  check((await send('POST', 'worker/register', regToken, { name: 'too late' })).status === 401, 'a revoked registration token is refused');
  await view(ada, 'workers-revoked');

  // 5. Deleting a connector that pairs use: the 409 says which.
  step = 'connector 409';
  await ada.goto(`${url}#connector/${connID}`);
  await ada.locator('#connector-form:not([hidden])').waitFor();
  await settled(ada);
  await press(ada, '#connector-delete');
  await ada.locator('#confirm[open]').waitFor();
  check(await ada.evaluate(() => document.activeElement.id) === 'confirm-no', 'the dialog starts on Cancel');
  await ada.keyboard.press('Shift+Tab');
  await ada.keyboard.press('Enter'); // "Delete", with the keyboard
  await ada.locator('#connector-error', { hasText: '409' }).waitFor();
  await ada.locator('#connector-error').getByRole('link', { name: 'wiki-support' }).waitFor();
  await view(ada, 'connector-409');
  // And the credential the pair uses: the same 409, the same list.
  await ada.goto(`${url}#credential/${credID}`);
  await ada.locator('#credential-form:not([hidden])').waitFor();
  await settled(ada);
  await press(ada, '#credential-delete');
  await ada.locator('#confirm[open]').waitFor();
  await press(ada, '#confirm-yes', { name: 'Delete', back: true });
  await ada.locator('#credential-error', { hasText: '409' }).waitFor();
  await ada.locator('#credential-error').getByRole('link', { name: 'wiki-support' }).waitFor();
  check((await ada.locator('#credential-error').innerText()).includes('These cc-pairs use it (1 pair)'), 'the 409 says how many pairs');

  // 6. A group, made with the keyboard alone; Cy is invited.
  step = 'group';
  await navTo(ada, 'groups');
  // The default groups are listed, marked, before any group of Ada's.
  await ada.locator('#groups-rows', { hasText: 'No groups of your own yet' }).waitFor();
  await ada.locator('#groups-rows tr', { hasText: 'Basic' }).locator('.badge', { hasText: 'default' }).waitFor();
  await tabTo(ada, '#group-new-name');
  await ada.keyboard.type('Support');
  await ada.keyboard.press('Enter');
  await ada.waitForURL(/#group\/\d+$/);
  const groupID = idFromURL(ada, 'group');
  await ada.locator('#group-body:not([hidden])').waitFor();
  await settled(ada);
  await typeIn(ada, '#group-name', 'Support desk');
  await ada.keyboard.press('Enter');
  await ada.locator('#group-saved', { hasText: 'Renamed.' }).waitFor();
  await ada.locator('#group-title', { hasText: 'Support desk' }).waitFor();
  // A permission granted and taken back with the keyboard (Space): every
  // group has basic; manage:llms is Onyx's and opens nothing here.
  await ada.locator('#group-perms-fixed', { hasText: 'basic' }).waitFor();
  const llms = '#group-perm-manage-llms';
  await press(ada, llms, { back: true, key: 'Space' });
  await ada.locator('#group-saved', { hasText: 'Support desk now has manage:llms' }).waitFor();
  await ada.reload();
  await ada.locator('#group-body:not([hidden])').waitFor();
  check(await ada.locator(llms).isChecked(), 'the grant is kept');
  await view(ada, 'group-permissions');
  await press(ada, llms, { key: 'Space' });
  await ada.locator('#group-saved', { hasText: 'no longer has manage:llms' }).waitFor();
  // The default group Basic shows its members and permissions, nothing to
  // change but those.
  await ada.goto(`${url}#group/2`);
  await ada.locator('#group-title', { hasText: 'Basic (default)' }).waitFor();
  await ada.locator('#group-default-note:not([hidden])').waitFor();
  check(await ada.locator('#group-rename-form').isHidden() && await ada.locator('#group-add-form').isHidden() &&
    await ada.locator('#group-pairs-section').isHidden(), 'a default group cannot be renamed, joined or shared with');
  await view(ada, 'group-default');
  await ada.goto(`${url}#group/${groupID}`);
  await ada.locator('#group-body:not([hidden])').waitFor();
  await navTo(ada, 'people');
  await ada.locator('#people-rows', { hasText: 'ada@example.com' }).waitFor();
  await tabTo(ada, '#invite-emails');
  await ada.keyboard.type('cy@example.com');
  await ada.keyboard.press('Enter');
  await ada.locator('#people-done', { hasText: 'Invited cy@example.com' }).waitFor();
  await ada.locator('#invites-rows', { hasText: 'cy@example.com' }).waitFor();
  // The invitation's link is shown once; only it lets Cy register.
  const link = await ada.locator('#invite-link-0-value').inputValue();
  check(link.startsWith(url) && link.includes('#register?') && link.includes('invitation=qri_'), `an invitation link: ${link}`);
  await view(ada, 'invitation-link');

  // 7. Cy registers with the link; a basic user lands on the search page.
  step = 'cy registers';
  const cy = await person('cy');
  page = cy;
  await cy.goto(link);
  await cy.locator('#register-form:not([hidden])').waitFor();
  check(await cy.locator('#register-email').inputValue() === 'cy@example.com', 'the link fills in the invited email');
  check(!(await cy.evaluate(() => location.href)).includes('qri_'), 'the token leaves the address bar');
  await cy.locator('#register-password').fill('a long and quiet river');
  await cy.keyboard.press('Enter');
  await cy.locator('#who', { hasText: 'basic' }).waitFor();
  check(await currentView(cy) === 'view-search', 'a basic user lands on the search page');
  check(await cy.locator('#nav a:not([hidden])').count() === 6, 'a basic user sees search, chat, assistants, credentials, tools and MCP servers only');

  // 7b. Ada changes Cy's role with the keyboard (type-ahead on the role's
  // select), and back: the focus stays on the role, drawn afresh.
  step = 'role';
  page = ada;
  await ada.reload();
  await ada.locator('#people-rows', { hasText: 'cy@example.com' }).waitFor();
  const cyRole = 'select[aria-label="Role of cy@example.com"]';
  await choose(ada, cyRole, 'l', 'limited');
  await ada.locator('#people-done', { hasText: 'cy@example.com is now limited' }).waitFor();
  await choose(ada, cyRole, 'b', 'basic', { max: 0 });
  await ada.locator('#people-done', { hasText: 'cy@example.com is now basic' }).waitFor();
  await tabTo(ada, cyRole, { max: 0 });

  // 8. Ada makes Cy the group's curator, and shares the wiki pair with it.
  // With the keyboard alone: Cy joins; Space sets the curator flag.
  step = 'curator';
  page = ada;
  await ada.goto(`${url}#group/${groupID}`);
  await ada.locator('#group-add-user option', { hasText: 'cy@example.com' }).waitFor({ state: 'attached' });
  await settled(ada);
  const cyOption = await ada.locator('#group-add-user option', { hasText: 'cy@example.com (basic)' }).getAttribute('value');
  await choose(ada, '#group-add-user', 'cy', cyOption);
  await press(ada, '#group-add');
  await ada.locator('#group-saved', { hasText: 'joined the group' }).waitFor();
  const flag = 'input[aria-label="cy@example.com curates Support desk"]';
  await press(ada, flag, { back: true, key: 'Space' });
  await ada.locator('#group-saved', { hasText: 'now curates' }).waitFor();
  await ada.locator('#group-members', { hasText: 'curator' }).waitFor();
  check(await ada.locator(flag).isChecked(), 'the flag is set');
  await tabTo(ada, flag, { max: 0 }); // the focus is back on the flag, drawn afresh
  await typeIn(ada, '#group-add-pair', String(pairID));
  await ada.keyboard.press('Enter');
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
  check(await cy.locator('#nav a:not([hidden])').count() === 9, 'a curator sees search, chat, status, connectors, document sets, assistants, credentials, tools and MCP servers');
  await view(cy, 'status-curator');

  // 9b. Search, the start page. A document comes in through Onyx's
  // ingestion API into the handbook pair; Ada finds it with the
  // keyboard alone: "/" to the query box, the words, Enter; the result's
  // words are highlighted; the source filter counts it; ↓ to the result,
  // Enter opens its text; other words find nothing. Cy, who may not see
  // the pair, neither finds nor opens it.
  step = 'search';
  page = ada;
  const pushed = await ada.evaluate(async (pair) => {
    const res = await fetch('onyx-api/ingestion', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ cc_pair_id: pair, document: { id: 'handbook-parental-leave', semantic_identifier: 'Parental leave policy',
        source: 'web', metadata: { team: 'people' }, doc_updated_at: new Date().toISOString(),
        sections: [{ text: 'Every employee may take sixteen weeks of paid parental leave, <b>in one or two parts</b>.',
          link: 'https://handbook.example.com/leave' }] } }) });
    return { status: res.status, body: await res.json() };
  }, handbookPairID);
  check(pushed.status === 200 && pushed.body.document_id === 'handbook-parental-leave', `the document is pushed: ${JSON.stringify(pushed)}`);
  await ada.goto(`${url}#status`);
  await ada.locator('#status-summary:not(:empty)').waitFor();
  await ada.evaluate(() => document.activeElement && document.activeElement.blur());
  await ada.keyboard.press('/');
  await ada.waitForURL(/#search/);
  await ada.waitForFunction(() => document.activeElement && document.activeElement.id === 'search-q');
  await ada.keyboard.type('parental leave');
  await ada.keyboard.press('Enter');
  await ada.waitForURL(/q=parental/);
  await ada.locator('#search-summary', { hasText: '1 result for' }).waitFor();
  const marks = await ada.locator('#search-results mark').allInnerTexts();
  check(marks.map((m) => m.toLowerCase()).includes('parental'), `the words are highlighted: ${JSON.stringify(marks)}`);
  check(await ada.locator('#search-results b').count() === 0, 'the document\'s markup stays text');
  check((await ada.locator('#search-sources').innerText()).includes('Web (1)'), 'the source filter counts the result');
  check((await ada.locator('#search-results a[href="https://handbook.example.com/leave"]').count()) === 1, 'a link to the source');
  await view(ada, 'search-results');
  await tabTo(ada, '#search-q', { back: true });
  await ada.keyboard.press('ArrowDown');
  check(await ada.evaluate(() => document.activeElement.hasAttribute('data-result')), 'ArrowDown goes to the first result');
  await ada.keyboard.press('Enter');
  await ada.waitForURL(/#document\//);
  await ada.locator('#document-text', { hasText: 'sixteen weeks of paid parental leave, <b>in one or two parts</b>.' }).waitFor();
  check(await ada.locator('#document-title').innerText() === 'Parental leave policy', 'the document\'s title');
  await view(ada, 'document');
  await ada.goBack();
  await ada.locator('#search-summary', { hasText: '1 result for' }).waitFor();
  // A filter that leaves nothing, kept in the location.
  await ada.locator('#search-time-day').check();
  await ada.waitForURL(/time=day/);
  await ada.locator('#search-summary', { hasText: '1 result for' }).waitFor();
  await typeIn(ada, '#search-q', 'zeppelin', { back: true });
  await ada.keyboard.press('Enter');
  await ada.locator('#search-summary', { hasText: 'Nothing found for' }).waitFor();
  await view(ada, 'search-nothing');
  // The handbook pair is private, shared with no group: its documents are
  // for the owner of its credential (Ada) alone. Cy neither finds nor
  // opens the document.
  page = cy;
  await cy.goto(`${url}#search?q=sixteen%20weeks`);
  await cy.locator('#search-summary', { hasText: 'Nothing found for' }).waitFor();
  await cy.goto(`${url}#document/handbook-parental-leave`);
  await cy.locator('#document-error', { hasText: 'does not exist, or you may not see it' }).waitFor();
  check(await cy.locator('#document-text').innerText() === '', 'no text of a document Cy may not see');

  // 9c. Each pair's copy stays its own. A document of the same id pushed
  // into the wiki pair (which Cy's group shares) is a second result for
  // Ada, each labelled with its pair, each opening its own text; a link by
  // the id alone tells Ada the two pairs. Cy, who may read the wiki's copy
  // alone, finds and opens that one.
  step = 'copies';
  page = ada;
  const wikiCopy = await ada.evaluate(async (pair) => {
    const res = await fetch('onyx-api/ingestion', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ cc_pair_id: pair, document: { id: 'handbook-parental-leave', semantic_identifier: 'Parental leave policy',
        metadata: {}, sections: [{ text: 'Parental leave is arranged with the support desk lead.' }] } }) });
    return { status: res.status, body: await res.json() };
  }, pairID);
  check(wikiCopy.status === 200 && wikiCopy.body.already_existed === false, `the wiki's copy is pushed: ${JSON.stringify(wikiCopy)}`);
  await ada.goto(`${url}#search?q=parental%20leave`);
  await ada.locator('#search-summary', { hasText: '2 results for' }).waitFor();
  const froms = await ada.locator('#search-results .from-pair').allInnerTexts();
  check(froms.length === 2 && froms.includes(`from “handbook-all” (pair #${handbookPairID}, private)`) &&
    froms.includes(`from “wiki-support” (pair #${pairID}, private)`), `each result says its pair: ${JSON.stringify(froms)}`);
  await view(ada, 'search-copies');
  await ada.locator('#search-results li', { hasText: 'wiki-support' }).locator('[data-result]').click();
  await ada.waitForURL(new RegExp(`#document/handbook-parental-leave\\?pair=${pairID}&`));
  await ada.locator('#document-text', { hasText: 'arranged with the support desk lead' }).waitFor();
  check((await ada.locator('#document-meta').innerText()).includes(`from “wiki-support” (pair #${pairID}, private)`), 'the copy says its pair');
  await ada.goBack();
  await ada.locator('#search-results li', { hasText: 'handbook-all' }).locator('[data-result]').click();
  await ada.locator('#document-text', { hasText: 'sixteen weeks of paid parental leave' }).waitFor();
  await ada.goto(`${url}#document/handbook-parental-leave`);
  await ada.locator('#document-error', { hasText: 'is in 2 pairs you may search' }).waitFor();
  check(await ada.locator('#document-text').innerText() === '', 'no copy chosen for Ada');
  page = cy;
  await cy.goto(`${url}#search?q=parental%20leave`);
  await cy.locator('#search-summary', { hasText: '1 result for' }).waitFor();
  await cy.goto(`${url}#document/handbook-parental-leave`);
  await cy.locator('#document-text', { hasText: 'arranged with the support desk lead' }).waitFor();

  // 9d. A sync pair's documents are each for those its connector says:
  // Cy, a curator who does not manage connectors, sees of it the one
  // document open to him, counted as such; Ada sees the whole pair. The
  // pair is deleted after (the rest of the story counts pairs).
  step = 'sync pair';
  page = ada;
  const synced = await ada.evaluate(async ({ conn, group, cy }) => {
    const post = async (method, p, body) => {
      const res = await fetch(p, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const k = await post('POST', 'manage/credential', { source: 'web', admin_public: true, credential_json: {}, name: 'synced reader' });
    const pair = await post('PUT', `manage/connector/${conn}/credential/${k.id}`, { name: 'handbook-synced', access_type: 'sync', groups: [group] });
    for (const [id, emails] of [['for-cy', [cy]], ['for-someone', ['someone@example.com']]]) {
      await post('POST', 'onyx-api/ingestion', { cc_pair_id: pair.data, document: { id, semantic_identifier: id, metadata: {},
        sections: [{ text: 'synced' }], external_access: { external_user_emails: emails, external_user_group_ids: [], is_public: false } } });
    }
    return { pair: pair.data, cred: k.id };
  }, { conn: handbookID, group: groupID, cy: 'cy@example.com' });
  page = cy;
  await cy.goto(`${url}#pair/${synced.pair}`);
  await cy.locator('#pair-indexing-facts', { hasText: '1 you may read' }).waitFor();
  await cy.locator('#pair-docs-summary', { hasText: 'It holds 1 document' }).waitFor();
  check((await rows(cy, 'pair-docs-rows')).join().includes('for-cy'), 'Cy lists the document open to him');
  await view(cy, 'pair-synced-curator');
  page = ada;
  await ada.goto(`${url}#pair/${synced.pair}`);
  await ada.locator('#pair-docs-summary', { hasText: 'It holds 2 documents' }).waitFor();
  check(!(await ada.locator('#pair-indexing-facts').innerText()).includes('you may read'), 'Ada sees the whole pair');
  await ada.evaluate(async ({ conn, cred }) => {
    const res = await fetch(`manage/connector/${conn}/credential/${cred}`, { method: 'DELETE' });
    if (!res.ok) throw new Error(`DELETE: ${res.status}`);
  }, { conn: handbookID, cred: synced.cred });

  // 10. The status table: sort, filter, counts, all kept in the location.
  step = 'status';
  page = ada;
  await ada.goto(`${url}#status`);
  await ada.reload(); // The indexing read before the wiki's copy came is kept a while.
  await ada.locator('#status-summary', { hasText: 'of 2 matching' }).waitFor();
  // Each pair's indexing: its latest attempt and its documents.
  await ada.locator('#status-rows tr', { hasText: 'wiki-support' }).locator('.badge', { hasText: 'failed' }).waitFor();
  await ada.locator('#status-rows tr', { hasText: 'handbook-all' }).locator('.badge', { hasText: 'success' }).waitFor();
  // Its documents: two indexed, one pushed (shown once the indexing is read again).
  await ada.locator('#status-rows tr', { hasText: 'wiki-support' }).locator('td').last().filter({ hasText: /^3$/ }).waitFor();
  // Sorted and filtered with the keyboard alone.
  const byName = '#status-table th[data-sort="name"] button';
  await press(ada, byName);
  await ada.waitForURL(/sort=name/);
  await press(ada, byName, { max: 0 });
  await ada.waitForURL(/dir=desc/);
  check((await rows(ada, 'status-rows'))[0].includes('wiki-support'), 'sorted by name, descending');
  check(await ada.locator('th[aria-sort="descending"]').innerText() === 'cc-pair ▼', 'the sorted column says so');
  await choose(ada, '#status-source', 'w', 'web', { back: true });
  await ada.waitForURL(/source=web/);
  await ada.locator('#status-summary', { hasText: 'Showing 1–1 of 1 matching' }).waitFor();
  await press(ada, '#status-counts summary');
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
  // Made, copied, regenerated and revoked with the keyboard alone.
  step = 'api keys';
  await navTo(ada, 'api-keys');
  await ada.locator('#keys-rows', { hasText: 'No API keys yet' }).waitFor();
  await tabTo(ada, '#key-name');
  await ada.keyboard.type('ci-bot');
  await ada.keyboard.press('Enter');
  await ada.locator('#keys-secret:not([hidden])').waitFor();
  const key = await ada.locator('#keys-secret input').inputValue();
  check(/^qry_[A-Za-z0-9_-]{43}$/.test(key), `a key shown once: ${key.slice(0, 8)}…`);
  await press(ada, '#keys-secret button', { name: 'Copy', max: 0 }); // the focus is on Copy
  await ada.locator('#keys-secret', { hasText: 'Copied.' }).waitFor();
  check(await ada.evaluate(() => navigator.clipboard.readText()) === key, 'the key is on the clipboard');
  await view(ada, 'api-keys');
  await press(ada, '#keys-secret button', { name: 'Done' });
  check(!(await ada.locator('body').innerText()).includes(key), 'the key is gone from the page');
  await press(ada, 'button[aria-label="Regenerate ci-bot"]');
  await ada.locator('#confirm[open]').waitFor();
  await press(ada, '#confirm-yes', { name: 'Regenerate', back: true });
  await ada.locator('#keys-secret', { hasText: 'Regenerated API key' }).waitFor();
  const key2 = await ada.locator('#keys-secret input').inputValue();
  check(key2 !== key, 'a new key');
  const oldKey = await fetch(new URL('me', url), { headers: { Authorization: `Bearer ${key}` } });
  check(oldKey.status === 401, `the old key is refused: ${oldKey.status}`);
  await press(ada, 'button[aria-label="Revoke ci-bot"]');
  await ada.locator('#confirm[open]').waitFor();
  await press(ada, '#confirm-yes', { name: 'Revoke', back: true });
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

  // 12b. The company's directory: Ada makes a SCIM token; the identity
  // provider (here, plain requests) provisions Dan and a group with him,
  // then deactivates him. The console shows what the directory manages,
  // read-only where the directory decides, and why.
  step = 'directory';
  await ada.getByRole('link', { name: 'API keys', exact: true }).click();
  await ada.locator('#scim-facts', { hasText: 'none' }).waitFor();
  await ada.getByRole('button', { name: 'Make a SCIM token' }).click();
  await ada.locator('#scim-secret', { hasText: 'SCIM token' }).waitFor();
  const scimToken = await ada.locator('#scim-secret input').inputValue();
  check(scimToken.startsWith('qrd_'), 'a SCIM token');
  await ada.locator('#scim-facts', { hasText: 'qrd_****' }).waitFor();
  await view(ada, 'api-keys-scim');
  const scim = async (method, p, body) => {
    const res = await fetch(`${url}scim/v2${p}`, { method, headers: { Authorization: `Bearer ${scimToken}`, 'Content-Type': 'application/scim+json' },
      body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    check(res.ok, `${method} ${p}: ${res.status} ${text}`);
    return JSON.parse(text);
  };
  const dan = await scim('POST', '/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'dan@example.com',
    externalId: '00u-dan', name: { givenName: 'Dan', familyName: 'Reyes' }, emails: [{ value: 'dan@example.com', primary: true, type: 'work' }] });
  const team = await scim('POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Directory team',
    members: [{ value: dan.id }] });
  await ada.getByRole('link', { name: 'People', exact: true }).click();
  await ada.locator('#people-rows tr', { hasText: 'dan@example.com' }).locator('.badge.directory').waitFor();
  await ada.getByRole('button', { name: 'Deactivate dan@example.com' }).waitFor();
  await scim('PATCH', `/Users/${dan.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }] });
  await ada.reload();
  const danRow = ada.locator('#people-rows tr', { hasText: 'dan@example.com' });
  await danRow.locator('text=deactivated by the directory').waitFor();
  await danRow.locator('text=activated in the directory').waitFor();
  check(await ada.getByRole('button', { name: 'Activate dan@example.com' }).count() === 0, 'no Activate button for a person the directory deactivated');
  await view(ada, 'people-directory');
  await ada.goto(`${url}#group/${team.id}`);
  await ada.locator('#group-directory:not([hidden])').waitFor();
  check(await ada.locator('#group-name').evaluate((e) => e.readOnly), "the directory's group name is read-only");
  check(await ada.locator('#group-rename').isHidden() && await ada.locator('#group-delete').isHidden(), 'no rename nor delete');
  const danMember = ada.locator('#group-members tr', { hasText: 'dan@example.com' });
  await danMember.locator('text=in the directory').waitFor();
  check(await ada.getByRole('button', { name: 'Remove dan@example.com from the group' }).count() === 0, 'no Remove for the directory\'s member');
  check(await ada.locator('#group-add-user option', { hasText: 'dan@example.com' }).count() === 0, 'the directory\'s people are not offered');
  // Its permissions are Quarry's: granted here, with the keyboard, as any
  // group's (the directory made it with basic).
  await ada.locator('#group-perms-fixed', { hasText: 'basic' }).waitFor();
  await press(ada, '#group-perm-manage-connectors', { back: true, key: 'Space' });
  await ada.locator('#group-saved', { hasText: 'Directory team now has manage:connectors' }).waitFor();
  await view(ada, 'group-directory');
  await ada.reload();
  await ada.locator('#group-directory:not([hidden])').waitFor();
  check(await ada.locator('#group-perm-manage-connectors').isChecked(), 'the grant to the directory\'s group is kept');
  await navTo(ada, 'groups');
  await ada.locator('#groups-rows tr', { hasText: 'Directory team' }).locator('.badge.directory').waitFor();
  // The default group Basic: Dan is in it by his role, shown as the
  // directory's person; the group is not the directory's.
  await ada.goto(`${url}#group/2`);
  await ada.locator('#group-title', { hasText: 'Basic (default)' }).waitFor();
  await ada.locator('#group-members tr', { hasText: 'dan@example.com' }).locator('.badge.directory').waitFor();
  check(await ada.locator('#group-directory').isHidden(), 'Basic is not the directory\'s');
  await view(ada, 'group-default-directory');

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
  // The tool: made, edited and deleted with the keyboard alone.
  await press(ada, 'a[href="#tool/new"]', { back: true });
  await ada.locator('#tool-form:not([hidden])').waitFor();
  await typeIn(ada, '#tool-name', 'tickets');
  await typeIn(ada, '#tool-description', 'Looks up tickets.');
  const oauthOption = await ada.locator('#tool-oauth-select option', { hasText: 'Tickets OAuth' }).getAttribute('value');
  await choose(ada, '#tool-oauth-select', 'Tickets', oauthOption);
  await view(ada, 'tool-new');
  await press(ada, '#tool-save', { name: 'Create tool' });
  await ada.waitForURL(/#tool\/\d+$/);
  await ada.locator('#tool-title', { hasText: 'tickets' }).waitFor();
  const toolID = idFromURL(ada, 'tool');
  check((await ada.locator('#tool-oauth-select option:checked').innerText()).includes('Tickets OAuth'), 'the tool uses the OAuth configuration');
  await view(ada, 'tool');
  await typeIn(ada, '#tool-description', 'Looks up tickets by number.');
  await press(ada, '#tool-save', { name: 'Save tool' });
  await ada.locator('#tool-saved', { hasText: 'Saved at' }).waitFor();
  const tool = await ada.evaluate(async (id) => (await fetch(`tool/${id}`)).json(), toolID);
  check(tool.description === 'Looks up tickets by number.', `the tool is saved: ${tool.description}`);
  await press(ada, '#tool-delete');
  await ada.locator('#confirm[open]').waitFor();
  await press(ada, '#confirm-yes', { name: 'Delete', back: true });
  await ada.waitForURL(/#tools$/);
  await ada.locator('#tools-rows a').first().waitFor();
  check(!(await ada.locator('#tools-rows').innerText()).includes('tickets'), 'the tool is gone');
  await ada.getByRole('link', { name: 'New custom tool' }).click();
  await ada.locator('#tool-form:not([hidden])').waitFor();
  await ada.locator('#tool-name').fill('tickets');
  await ada.getByRole('button', { name: 'Create tool' }).click();
  await ada.waitForURL(/#tool\/\d+$/);

  // 13b. MCP servers. One without credentials: added, its tools listed
  // from the server and two of them enabled, with the keyboard alone.
  step = 'mcp servers';
  await navTo(ada, 'mcp');
  await ada.locator('#mcp-rows', { hasText: 'No MCP servers yet' }).waitFor();
  await view(ada, 'mcp-empty');
  await press(ada, '#mcp-new summary');
  await typeIn(ada, '#mcp-name', 'docs');
  await typeIn(ada, '#mcp-url', mcpOpen);
  await view(ada, 'mcp-new');
  await press(ada, '#mcp-create', { name: 'Add server' });
  await ada.waitForURL(/#mcp-server\/\d+$/);
  await ada.locator('#mcp-server-title', { hasText: 'docs' }).waitFor();
  const docsID = idFromURL(ada, 'mcp-server');
  await settled(ada);
  await press(ada, '#mcp-tools-fetch', { name: 'List tools from the server' });
  await ada.locator('#mcp-server-done', { hasText: 'The server lists 4 tools' }).waitFor();
  check(await ada.locator('#mcp-tools-rows input:checked').count() === 0, 'new tools stay off until enabled');
  await press(ada, 'input[aria-label="Enable Echo"]', { back: true, key: 'Space' });
  await press(ada, 'input[aria-label="Enable add"]', { back: true, key: 'Space' });
  await press(ada, '#mcp-tools-save', { name: 'Save enabled tools' });
  await ada.locator('#mcp-server-done', { hasText: '2 tools enabled' }).waitFor();
  const docsTools = await ada.evaluate(async (id) => (await fetch(`admin/mcp/server/${id}/tools/snapshots`)).json(), docsID);
  check(docsTools.filter((t) => t.enabled).map((t) => t.name).sort().join(' ') === 'add echo', `enabled: ${JSON.stringify(docsTools)}`);
  await view(ada, 'mcp-server');
  // The tools list leads an MCP tool to its server's page.
  await ada.goto(`${url}#tools`);
  await ada.locator('#tools-rows', { hasText: 'MCP' }).waitFor();
  await ada.locator('#tools-rows').getByRole('link', { name: 'MCP server of tool Echo' }).click();
  await ada.waitForURL(new RegExp(`#mcp-server/${docsID}$`));
  // One that asks each person for their own key: a wrong key is refused
  // (the server is asked), Ada's own is kept.
  await ada.goto(`${url}#mcp`);
  await ada.locator('#mcp-rows', { hasText: 'docs' }).waitFor();
  await ada.locator('#mcp-new summary').click();
  await ada.locator('#mcp-name').fill('crm');
  await ada.locator('#mcp-url').fill(mcpKeyed);
  await ada.locator('#mcp-auth').selectOption('API_TOKEN');
  await ada.locator('#mcp-performer').selectOption('PER_USER');
  await ada.locator('#mcp-header').fill('X-Api-Key');
  await ada.locator('#mcp-value').fill('{api_key}');
  check(await ada.locator('#mcp-token-field').isHidden(), 'no shared token for a server of per-person keys');
  await view(ada, 'mcp-new-keyed');
  await ada.getByRole('button', { name: 'Add server' }).click();
  await ada.waitForURL(/#mcp-server\/\d+$/);
  await ada.locator('#mcp-access-text', { hasText: 'needs your own credentials' }).waitFor();
  await ada.getByLabel('Your API token').fill('not the key');
  await ada.getByRole('button', { name: 'Save and check' }).click();
  await ada.locator('#mcp-server-error:not(:empty)').waitFor();
  await ada.getByLabel('Your API token').fill('ada-key');
  await ada.getByRole('button', { name: 'Save and check' }).click();
  await ada.locator('#mcp-server-done', { hasText: 'Your credentials work' }).waitFor();
  await ada.locator('#mcp-access-text', { hasText: 'are saved' }).waitFor();
  check(await ada.getByLabel('Your API token').inputValue() !== 'ada-key', 'the key comes back masked');
  await ada.getByRole('button', { name: 'List tools from the server' }).click();
  await ada.locator('#mcp-server-done', { hasText: 'The server lists 4 tools' }).waitFor();
  await view(ada, 'mcp-server-keyed');
  await ada.goto(`${url}#mcp`);
  await ada.locator('#mcp-rows', { hasText: 'crm' }).waitFor();
  await view(ada, 'mcp');

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

  // 14b. Ada connects an MCP client: the address of /mcp, and a token of
  // her own, made with the keyboard alone and shown once. With it, a
  // client lists the tools she enabled; revoked, it is refused at once.
  step = 'mcp client';
  check(await ada.locator('#mcp-client-url').inputValue() === `${url}mcp`, `the MCP address: ${await ada.locator('#mcp-client-url').inputValue()}`);
  await ada.locator('#pats-rows', { hasText: 'No tokens yet' }).waitFor();
  await typeIn(ada, '#pat-name', 'Claude Desktop');
  await choose(ada, '#pat-expiry', 'in 7', '7');
  await press(ada, '#pat-create', { name: 'Make token' });
  await ada.locator('#pats-secret:not([hidden])').waitFor();
  const pat = await ada.locator('#pats-secret input').inputValue();
  check(/^qrp_[A-Za-z0-9_-]{43}$/.test(pat), `a token shown once: ${pat.slice(0, 8)}…`);
  await ada.locator('#pats-rows', { hasText: 'Claude Desktop' }).waitFor();
  check((await ada.locator('#pats-rows').innerText()).includes(`${pat.slice(0, 8)}****${pat.slice(-4)}`), 'the list shows the token\'s ends only');
  await view(ada, 'account-pats');
  const listed = await mcpTools(pat);
  check(listed.status === 200 && listed.names.includes('docs__echo') && listed.names.includes('docs__add') &&
    !listed.names.some((n) => n.startsWith('crm__') || n === 'docs__fail'), `an MCP client lists the enabled tools: ${JSON.stringify(listed)}`);
  await press(ada, 'button[aria-label="Revoke Claude Desktop"]', { back: true });
  await ada.locator('#confirm[open]').waitFor();
  await press(ada, '#confirm-yes', { name: 'Revoke', back: true });
  await ada.locator('#pats-done', { hasText: 'is revoked' }).waitFor();
  await ada.locator('#pats-rows', { hasText: 'No tokens yet' }).waitFor();
  check((await mcpTools(pat)).status === 401, 'a revoked token is refused');
  // A token scoped to search opens the search tools, and none of the others.
  await ada.locator('#pat-name').fill('search only');
  await ada.locator('#pat-unscoped').uncheck();
  await ada.getByLabel(/read:search/).check();
  await view(ada, 'account-pat-scopes');
  await ada.getByRole('button', { name: 'Make token' }).click();
  await ada.locator('#pats-secret:not([hidden])').waitFor();
  const scoped = await ada.locator('#pats-secret input').inputValue();
  await ada.locator('#pats-rows', { hasText: 'read:search' }).waitFor();
  const none = await mcpTools(scoped);
  check(none.status === 200 && none.names.join() === 'fetch,search,search_indexed_documents',
    `a token scoped to search lists the search tools only: ${JSON.stringify(none)}`);

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
  // Filtered and paged with the keyboard alone.
  await navTo(ada, 'audit');
  await ada.locator('#audit-rows tr').first().waitFor();
  await ada.waitForURL(/anchor=\d+/);
  await typeIn(ada, '#audit-actor', 'ADA@example.com');
  await choose(ada, '#audit-type', 'cc_pair', 'cc_pair');
  const filterButton = '#audit-filters button[type="submit"]';
  await press(ada, filterButton);
  await ada.waitForURL(/actor=ADA/);
  // 2 made, paused and resumed twice (once by Cancel), run twice, pruned,
  // a document pushed into each pair; the sync pair made, two documents
  // pushed into it, deleted.
  await ada.locator('#audit-summary', { hasText: 'of 15, newest first.' }).waitFor();
  const story = await rows(ada, 'audit-rows');
  check(story.some((r) => r.includes('cc_pair.create') && r.includes(`cc_pair #${pairID}`)), `the pair's creation: ${story.join(' | ')}`);
  check(story.filter((r) => r.includes('cc_pair.update') && r.includes('status')).length === 4, 'paused and resumed, twice');
  check(story.filter((r) => r.includes('cc_pair.run_once')).length === 2, 'run now, and from the beginning');
  check(story.filter((r) => r.includes('cc_pair.prune')).length === 1, 'a prune asked for');
  await view(ada, 'audit');
  await choose(ada, '#audit-type', 'Any', '', { back: true });
  await choose(ada, '#audit-action', 'user_group.set', 'user_group.set_curator', { back: true });
  await press(ada, filterButton);
  await ada.locator('#audit-summary', { hasText: 'of 1' }).waitFor();
  await press(ada, `#audit-rows a[href="#group/${groupID}"]`);
  await ada.locator('#group-title', { hasText: 'Support' }).waitFor();
  await ada.goBack();
  await ada.locator('#audit-summary', { hasText: 'of 1' }).waitFor();
  // Pages: every entry, 50 a page.
  await press(ada, '#audit-clear');
  await ada.locator('#audit-summary', { hasText: 'Entries 1–50 of' }).waitFor();
  await press(ada, '#audit-older', { max: 100 }); // past the entries' links
  await ada.waitForURL(/page=2/);
  await ada.locator('#audit-summary', { hasText: 'Entries 51–' }).waitFor();
  await press(ada, '#audit-newer', { back: true });
  await ada.locator('#audit-summary', { hasText: 'Entries 1–50 of' }).waitFor();

  // 16. Cy's new password works; Cy signs out.
  step = 'cy signs in again';
  page = cy;
  // With the keyboard alone.
  await cy.goto(url);
  await cy.locator('#login-email').waitFor();
  await typeIn(cy, '#login-email', 'cy@example.com');
  await typeIn(cy, '#login-password', cyPassword);
  await cy.keyboard.press('Enter');
  await cy.locator('#who', { hasText: 'curator' }).waitFor();
  await press(cy, '#sign-out', { back: true });
  await cy.locator('#login-email').waitFor();

  check(consoleErrors.length === 0, `no errors in the page: ${consoleErrors.join(' | ')}`);
  console.log(`axe ${JSON.stringify(axeReport)}`);
  console.log(`keyboard: ${keys.tabTo} controls reached with ${keys.presses} Tab presses in ${(keys.ms / 1000).toFixed(1)} s`);
  console.log(JSON.stringify({ ok: true, views: shotN }));
} catch (e) {
  console.error(`FAILED at step "${step}": ${e.stack || e}`);
  if (consoleErrors.length) console.error(`page errors: ${consoleErrors.join(' | ')}`);
  if (page) await page.screenshot({ path: path.join(outdir, 'console-failure.png'), fullPage: true }).catch(() => {});
  await browser.close();
  process.exit(1);
}
await browser.close();
