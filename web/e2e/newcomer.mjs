// What a newcomer met (issue 39, item 6), in Debian's Chromium, as
// web/newcomer_e2e_test.go asks:
//
//   node newcomer.mjs <url> <screenshot dir> <bootstrap admin key> <basic key> <Notion pair id>
//
// The server is as quarry serve starts it (its bootstrap admin key, a
// worker in the process); POST /_e2e/schedule runs a pass of its
// scheduler. The bootstrap key made a file connector "notes" with a
// credential "no secrets", a Notion pair, and an ingestion API pair
// holding 89 documents about granite rock (60 of source web, 29 of
// confluence, two years old) and 31 about basalt rock. The admin, with the bootstrap key: reads
// in the connector picker which sources Quarry indexes; makes an IMAP
// connector with STARTTLS and a CA certificate; makes an IMAP credential
// from the keys the form offers, whose password shows nothing; pairs the
// file connector and watches the new pair's first attempt run on its
// page, with no reload, until the page stops asking; reads a Notion
// pair's page; searches for granite, where the count is the filters';
// sees the key named by its name as creator, owner and actor. A basic
// user sees no "Quarry admin", and a sentence instead of a 403 on the
// status page. Every view is checked with axe-core (no serious or
// critical violation); the page must log no error.

import { check, Story } from './story.mjs';

const [base, outdir, adminKey, basicKey, wikiPair] = process.argv.slice(2);
if (!base || !outdir || !adminKey || !basicKey || !wikiPair) {
  console.error('usage: node newcomer.mjs <url> <outdir> <admin key> <basic key> <Notion pair id>');
  process.exit(2);
}
const story = new Story('newcomer', base, outdir);
const { url } = story;
const signIn = (who, key) => story.signIn(who, key);
const view = (p, name) => story.view(p, name);

const text = (p, sel) => p.locator(sel).innerText();
const idFromURL = (p, kind) => {
  const m = new RegExp(`#${kind}/(\\d+)`).exec(p.url());
  check(m, `${kind} id in ${p.url()}`);
  return Number(m[1]);
};

const pem = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQuarryE2ETestCertificate0wCgYIKoZIzj0EAwIw\n-----END CERTIFICATE-----';

await story.run(async () => {
  story.step = 'the admin signs in with the bootstrap key';
  const admin = await signIn('admin', adminKey);
  check((await text(admin, '#who-text')).includes('API key “bootstrap admin”'), `signed in as: ${await text(admin, '#who-text')}`);

  // 1. The connector picker says which sources Quarry indexes.
  story.step = 'connector picker';
  await admin.goto(`${url}#connector/new`);
  await admin.locator('#connector-form:not([hidden])').waitFor();
  const groups = await admin.$$eval('#connector-source optgroup', (gs) => gs.map((g) => ({
    label: g.label, values: [...g.querySelectorAll('option')].map((o) => o.value) })));
  check(groups.length === 3 && groups[0].label === 'Indexed by Quarry' &&
    groups[0].values.join() === 'confluence,imap,file,github,google_drive,jira,mediawiki,mock_connector,slack,web,wikipedia', `the picker's groups: ${JSON.stringify(groups)}`);
  check(groups[1].values.join() === 'ingestion_api' && groups[2].values.includes('notion') &&
    groups.reduce((n, g) => n + g.values.length, 0) === 55, 'every source is offered, once');
  check((await text(admin, '#connector-source-hint')).startsWith('Quarry indexes Web:'), 'the hint of the default source');
  await admin.locator('#connector-source').selectOption('notion');
  await admin.locator('#connector-source-hint', { hasText: 'Quarry has no connector for Notion yet' }).waitFor();
  await view(admin, 'connector-picker');

  // 2. The IMAP form: security and CA certificates.
  story.step = 'IMAP connector';
  await admin.locator('#connector-source').selectOption('imap');
  await admin.locator('#connector-name').fill('mail');
  await admin.getByLabel('IMAP host').fill('imap.example.com');
  await admin.getByLabel('Port (optional)').fill('143');
  const security = admin.getByLabel('Security (optional)');
  check(await security.inputValue() === 'tls', 'TLS from the first byte by default');
  check((await security.locator('option').allInnerTexts()).length === 2, 'two ways, neither in clear');
  await security.selectOption('starttls');
  const ca = admin.getByLabel('CA certificates (PEM) (optional)');
  await ca.fill('not a certificate');
  await admin.getByRole('button', { name: 'Create connector' }).click();
  await admin.locator('#connector-error', { hasText: 'must be PEM' }).waitFor();
  check(await ca.getAttribute('aria-invalid') === 'true' && await ca.evaluate((e) => e === document.activeElement), 'the field is marked and focused');
  await ca.fill(pem);
  await view(admin, 'connector-imap');
  await admin.getByRole('button', { name: 'Create connector' }).click();
  await admin.waitForURL(/#connector\/\d+$/);
  await admin.locator('#connector-title', { hasText: 'mail' }).waitFor();
  check(await admin.getByLabel('Security (optional)').inputValue() === 'starttls', 'STARTTLS kept');

  // 2b. The Slack form: Onyx's fields, channels kept in lower case, the
  // checkboxes as booleans.
  story.step = 'Slack connector';
  await admin.goto(`${url}#connector/new`);
  await admin.locator('#connector-form:not([hidden])').waitFor();
  await admin.locator('#connector-source').selectOption('slack');
  await admin.locator('#connector-name').fill('chat');
  await admin.getByLabel('Channels (optional)', { exact: true }).fill('Support\n#General');
  await admin.getByLabel('Include bot messages', { exact: true }).check();
  await view(admin, 'connector-slack');
  await admin.getByRole('button', { name: 'Create connector' }).click();
  await admin.waitForURL(/#connector\/\d+$/);
  await admin.locator('#connector-title', { hasText: 'chat' }).waitFor();
  const slackID = idFromURL(admin, 'connector');
  const slack = await (await fetch(`${url}manage/connector/${slackID}`, { headers: { Authorization: `Bearer ${adminKey}` } })).json();
  check(JSON.stringify(slack.connector_specific_config) === JSON.stringify({ channels: ['support', '#general'], channel_regex_enabled: false,
    exclude_channel_regex_enabled: false, include_bot_messages: true }), `the Slack configuration: ${JSON.stringify(slack.connector_specific_config)}`);
  check(await admin.getByLabel('Include bot messages', { exact: true }).isChecked(), 'the checkbox kept');

  // 3. A credential is offered its source's keys; its password shows nothing.
  story.step = 'IMAP credential';
  await admin.goto(`${url}#credential/new`);
  await admin.locator('#credential-form:not([hidden])').waitFor();
  check((await text(admin, '#credential-source-hint')).includes('needs no secrets'), 'web needs no secrets');
  await admin.locator('#credential-source').selectOption('imap');
  const keys = admin.locator('#credential-fields input[id$="-k"]');
  await admin.locator('#credential-source-hint', { hasText: 'imap_username, imap_password' }).waitFor();
  const offered = await keys.evaluateAll((ks) => ks.map((k) => k.value));
  check(offered.join() === 'imap_username,imap_password', `the keys offered: ${offered}`);
  const values = admin.locator('#credential-fields input[id$="-v"]');
  await values.nth(0).fill('ada@example.com');
  await values.nth(1).fill('imap-pass--2026!');
  await admin.locator('#credential-name').fill('mailbox');
  await view(admin, 'credential-imap-new');
  await admin.getByRole('button', { name: 'Create credential' }).click();
  await admin.waitForURL(/#credential\/\d+$/);
  await admin.locator('#view-credential[aria-busy="false"] #credential-form:not([hidden])').waitFor();
  check(await admin.getByLabel('imap_password', { exact: true }).inputValue() === '\u2022'.repeat(12),
    `a 16-character password shows nothing: ${await admin.getByLabel('imap_password', { exact: true }).inputValue()}`);
  check((await text(admin, '#credential-meta')).includes('owner API key “bootstrap admin”'), `the owner: ${await text(admin, '#credential-meta')}`);
  await view(admin, 'credential-imap');

  // 4. A new pair's page follows its first attempt by itself, then stops.
  story.step = 'new pair';
  await admin.goto(`${url}#pair/new`);
  await admin.locator('#pair-connector option', { hasText: 'notes' }).waitFor({ state: 'attached' });
  await admin.locator('#pair-connector').selectOption({ label: (await admin.locator('#pair-connector option', { hasText: 'notes' }).innerText()) });
  await admin.locator('#pair-access').selectOption('public');
  await admin.getByRole('button', { name: 'Create the pair' }).click();
  await admin.waitForURL(/#pair\/\d+$/);
  const pairID = idFromURL(admin, 'pair');
  await admin.locator('#pair-attempts-rows', { hasText: 'No index attempts yet' }).waitFor();
  check((await text(admin, '#pair-facts')).includes('Created by\nAPI key “bootstrap admin”'), `the creator: ${await text(admin, '#pair-facts')}`);
  check(await admin.locator('#pair-indexed').innerText() === 'yes', 'Quarry indexes the file source');
  await view(admin, 'pair-new');
  let asked = 0;
  admin.on('request', (r) => {
    if (r.url().endsWith(`/manage/admin/cc-pair/${pairID}`)) asked += 1;
  });
  const pass = await (await fetch(`${url}_e2e/schedule`, { method: 'POST' })).json();
  check(pass.created >= 1, `the scheduler made the attempt: ${JSON.stringify(pass)}`);
  await admin.locator('#pair-attempts-rows tr[data-status="success"]').waitFor({ timeout: 30_000 });
  await admin.waitForFunction(() => [...document.querySelectorAll('#pair-indexing-facts dt')]
    .some((dt) => dt.textContent === 'Documents indexed' && dt.nextElementSibling.textContent === '1'));
  check(asked >= 1, 'the page asked for the pair by itself');
  // Idle: the page stops asking (it asks every 3 s while it waits).
  await admin.waitForTimeout(4_000);
  const before = asked;
  await admin.waitForTimeout(7_000);
  check(asked === before, `the page still asks for the pair after its attempt ended: ${asked - before} requests in 7 s`);
  await view(admin, 'pair-indexed');

  // 5. A pair of a source Quarry does not index says so.
  story.step = 'Notion pair';
  await admin.goto(`${url}#pair/${wikiPair}`);
  await admin.locator('#pair-body:not([hidden])').waitFor();
  check(await admin.locator('#pair-indexed').innerText() === 'no', 'Quarry does not index Notion');
  check((await text(admin, '#pair-facts')).includes('Quarry has no connector for Notion yet'), 'and says why');
  await view(admin, 'pair-not-indexed');

  // 6. Search: the count is the filters' count.
  story.step = 'search';
  await admin.goto(`${url}#search?q=granite`);
  await admin.locator('#search-summary', { hasText: 'granite' }).waitFor();
  await admin.locator('#search-facets:not([hidden])').waitFor();
  let summary = await text(admin, '#search-summary');
  check(summary === '89 results for “granite”.', `the summary: ${summary}`);
  check(await admin.locator('#search-results > li').count() === 89, 'every result listed');
  check((await admin.locator('label[for="search-source-all"]').innerText()) === 'All sources (89)', 'the filter counts the same');
  await view(admin, 'search');
  await admin.locator('label[for="search-source-web"]').click();
  await admin.locator('#search-summary', { hasText: '(Web)' }).waitFor();
  summary = await text(admin, '#search-summary');
  check(summary === '60 results for “granite” (Web).' && (await admin.locator('label[for="search-source-web"]').innerText()) === 'Web (60)',
    `filtered: ${summary}`);
  check(await admin.locator('#search-results > li').count() === 60, '60 listed');
  await admin.locator('label[for="search-source-all"]').click();
  await admin.locator('label[for="search-time-year"]').click();
  await admin.locator('#search-summary', { hasText: '(past year)' }).waitFor();
  summary = await text(admin, '#search-summary');
  check(summary === '60 results for “granite” (past year).' && (await admin.locator('label[for="search-time-year"]').innerText()) === 'Past year (60)',
    `by time: ${summary}`);
  // More matches than a page: the page says it shows the best 100, which
  // the counts are of.
  await admin.locator('label[for="search-time-all"]').click();
  await admin.locator('#search-q').fill('rock');
  await admin.keyboard.press('Enter');
  await admin.locator('#search-summary', { hasText: 'rock' }).waitFor();
  summary = await text(admin, '#search-summary');
  check(summary === 'The 100 best results for “rock”: there may be more, which more words narrow down.', `capped: ${summary}`);
  check(await admin.locator('#search-results > li').count() === 100 && (await text(admin, '#search-facet-note')) === 'Counts are of the 100 best matches.' &&
    (await admin.locator('label[for="search-source-all"]').innerText()) === 'All sources (100)', 'the page and the counts are of the same 100');

  // 7. The audit log names the key.
  story.step = 'audit';
  await admin.goto(`${url}#audit`);
  await admin.locator('#audit-rows td[data-label="Who"]').first().waitFor();
  const who = await admin.locator('#audit-rows tr td[data-label="Who"]').allInnerTexts();
  check(who.some((w) => w.startsWith('API key “bootstrap admin”')) && !who.some((w) => w.includes('quarry.invalid')), `who: ${who}`);
  await view(admin, 'audit');

  // 8. A basic user: no "Quarry admin", no bare 403.
  story.step = 'basic user';
  const reader = await signIn('reader', basicKey);
  check(!(await reader.locator('body').innerText()).includes('Quarry admin') && !(await reader.title()).includes('admin'),
    `"Quarry admin" shown to a basic user: ${await reader.title()}`);
  check((await reader.locator('#nav a:not([hidden])').allInnerTexts()).join() === 'Search,Chat,Assistants,Credentials,Custom tools,MCP servers', 'the sections a basic user may use');
  await reader.goto(`${url}#status`);
  await reader.locator('#view-denied:not([hidden])').waitFor();
  check((await text(reader, '#denied-text')) === 'Status is for admins, global curators and curators; your role is basic, so it is not shown to you.',
    `the sentence: ${await text(reader, '#denied-text')}`);
  check((await reader.locator('#denied-links a').allInnerTexts()).join() === 'Search,Chat,Assistants,Credentials,Custom tools,MCP servers,Your account', 'what they may use instead');
  check(!(await reader.locator('main').innerText()).includes('403'), 'no 403 shown');
  await view(reader, 'basic-status');
  await reader.goto(`${url}#pair/${wikiPair}`);
  await reader.locator('#denied-text', { hasText: 'Status is for' }).waitFor();
  // With the keyboard: from the title (where the focus is), Tab to the
  // first link and Enter.
  check(await reader.evaluate(() => document.activeElement.id) === 'denied-title', 'the focus is on the title');
  await reader.keyboard.press('Tab');
  check(await reader.evaluate(() => document.activeElement.textContent) === 'Search', 'Tab reaches the first link');
  await reader.keyboard.press('Enter');
  await reader.locator('#view-search:not([hidden])').waitFor();

});
