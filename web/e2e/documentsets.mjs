// Document sets in the console (issue 42, item 5), in Debian's Chromium,
// as web/documentset_e2e_test.go asks:
//
//   node documentsets.mjs <url> <screenshot dir> <admin key> <reader key> <keeper key> <curator key>
//
// The server holds two public pairs, "Granite wiki" and "Basalt wiki",
// each with one document about rock; the reader (a basic key) is in the
// group "Climbers"; the keeper (a basic key) is in a group granted
// manage:document_sets. The reader is not shown the Document sets page,
// and is told who may use it; the keeper is shown it, by the grant, and
// offered the pairs of the sets they see (they may not list every pair).
// The admin, with the keyboard alone: saves a set without pairs and reads
// the API's refusal; makes "Granite climbing" of the granite pair, shared
// with the group and the reader; changes its description. A curator of
// no group sees a public set the admin made, read-only. The reader
// searches for rock, narrows the search to the set with the keyboard and
// sees the basalt document go; the filter stays in the address through a
// reload. The admin deletes the set (keyboard again); the reader's search
// by it then shows the server's refusal. Every view is checked with
// axe-core; the page must log no error.

import { check, Story, tabTo, press, typeIn, choose, navTo } from './story.mjs';

const [base, outdir, adminKey, readerKey, keeperKey, curatorKey] = process.argv.slice(2);
if (!base || !outdir || !adminKey || !readerKey || !keeperKey || !curatorKey) {
  console.error('usage: node documentsets.mjs <url> <outdir> <admin key> <reader key> <keeper key> <curator key>');
  process.exit(2);
}
const story = new Story('documentsets', base, outdir);
const { url } = story;

const text = (p, sel) => p.locator(sel).innerText();

/**
 * api calls the API as the page's person (with the key the page keeps in
 * this tab) and returns the answer's JSON; a refusal throws.
 */
const api = (p, path, method = 'GET', body = undefined) => p.evaluate(async ([to, m, b]) => {
  const res = await fetch(to, { method: m, cache: 'no-store', body: b === undefined ? undefined : JSON.stringify(b),
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${sessionStorage.getItem('quarry.apiKey')}` } });
  if (!res.ok) throw new Error(`${m} ${to}: ${res.status} ${await res.text()}`);
  return res.json();
}, [path, method, body]);

/** sets returns the sets the page's person sees. */
const sets = (p) => api(p, 'manage/document-set');

/** summary waits until the search page's summary says what starts with s. */
const summary = (p, s) => p.locator('#search-summary', { hasText: s }).waitFor();

await story.run(async () => {
  story.step = 'the reader may not manage sets';
  const reader = await story.signIn('reader', readerKey);
  const readerID = (await api(reader, 'me')).id;
  check(await reader.locator('#nav a[href="#document-sets"]').isHidden(), 'a basic user is not offered Document sets');
  await reader.goto(`${url}#document-sets`);
  await reader.locator('#view-denied:not([hidden])').waitFor();
  const denied = await text(reader, '#denied-text');
  check(denied === 'Document sets is for admins, global curators, curators and those whose groups are granted manage:document_sets; your role is basic, so it is not shown to you.',
    `who may: ${denied}`);
  await story.view(reader, 'denied', { strict: true });
  await reader.goto(`${url}#search`);
  await reader.locator('#view-search:not([hidden])').waitFor();
  check(await reader.locator('#search-set-field').isHidden(), 'no set to narrow a search to yet');

  story.step = 'the keeper manages sets by a grant';
  const keeper = await story.signIn('keeper', keeperKey);
  await navTo(keeper, 'document-sets');
  await keeper.locator('#document-sets-rows', { hasText: 'No document sets yet' }).waitFor();
  await story.view(keeper, 'list-empty', { strict: true });
  await press(keeper, 'a[href="#document-set/new"]', { name: 'New document set' });
  await keeper.locator('#document-set-form:not([hidden])').waitFor();
  check((await text(keeper, '#document-set-pairs-note')).startsWith('Only curators and those who manage connectors'),
    'the keeper is told which pairs are offered');
  check(await keeper.locator('#document-set-pairs input').count() === 0, 'no pairs in sets yet');

  story.step = 'the admin meets a refusal';
  const admin = await story.signIn('admin', adminKey);
  await navTo(admin, 'document-sets');
  await admin.locator('#document-sets-rows', { hasText: 'No document sets yet' }).waitFor();
  await press(admin, 'a[href="#document-set/new"]', { name: 'New document set' });
  await admin.locator('#document-set-form:not([hidden])').waitFor();
  await admin.locator('#document-set-pairs input').first().waitFor();
  await typeIn(admin, '#document-set-name', 'Granite climbing');
  await typeIn(admin, '#document-set-description', 'Where to climb.');
  await press(admin, '#document-set-save', { name: 'Make document set' });
  await admin.locator('#document-set-error', { hasText: '400: Cannot create a document set with no connectors' }).waitFor();
  await story.view(admin, 'new-refused', { strict: true });

  story.step = 'the admin makes a set';
  await typeIn(admin, '#document-set-pair-filter', 'granite', { back: true });
  await admin.locator('#document-set-pairs-count', { hasText: '0 cc-pairs chosen.' }).waitFor();
  check(await admin.locator('#document-set-pairs input').count() === 1, 'the filter leaves the granite pair');
  await press(admin, '#document-set-pairs input', { key: 'Space' });
  await admin.locator('#document-set-pairs-count', { hasText: '1 cc-pair chosen.' }).waitFor();
  const climbers = await admin.locator('#document-set-groups label', { hasText: 'Climbers' }).getAttribute('for');
  const climbersID = await admin.locator(`#${climbers}`).getAttribute('value');
  await press(admin, `#${climbers}`, { key: 'Space' });
  await tabTo(admin, '#document-set-person');
  for (let i = 0; i < 10 && !(await admin.locator('#document-set-person option:checked').innerText()).includes('reader'); i++) {
    await admin.keyboard.press('ArrowDown');
  }
  await press(admin, '#document-set-person-add', { name: 'Share with this person' });
  await admin.locator('#document-set-people', { hasText: 'API key “reader”' }).waitFor();
  await press(admin, '#document-set-save', { name: 'Make document set' });
  await admin.waitForURL(/#document-set\/\d+$/);
  await admin.locator('#document-set-saved', { hasText: 'The document set “Granite climbing” is made.' }).waitFor();
  let [set] = await sets(admin);
  check(set.name === 'Granite climbing' && set.description === 'Where to climb.' && !set.is_public &&
    set.cc_pair_summaries.map((p) => p.name).join() === 'Granite wiki' && set.users.join() === readerID &&
    set.groups.join() === climbersID, `the set made: ${JSON.stringify(set)}`);
  check(await admin.locator('#document-set-pairs input:checked').count() === 1, 'the page shows the pair chosen');
  await story.view(admin, 'set', { strict: true });

  story.step = 'the admin changes the set';
  await typeIn(admin, '#document-set-description', 'Granite slabs and cracks.');
  await press(admin, '#document-set-save', { name: 'Save document set' });
  await admin.locator('#document-set-saved', { hasText: 'Saved at' }).waitFor();
  [set] = await sets(admin);
  check(set.description === 'Granite slabs and cracks.' && set.users.length === 1 && set.groups.length === 1,
    `the set changed: ${JSON.stringify(set)}`);
  await navTo(admin, 'document-sets');
  await admin.locator('#document-sets-rows', { hasText: 'Granite climbing' }).waitFor();
  const row = await text(admin, '#document-sets-rows');
  check(row.includes('Granite slabs and cracks.') && row.includes('1 group, 1 person') && row.includes('change and delete it'),
    `the list: ${row}`);
  await story.view(admin, 'list', { strict: true });

  story.step = 'a curator sees a set they may not change';
  const everything = await api(admin, 'manage/admin/document-set', 'POST', { name: 'Everything', description: '',
    cc_pair_ids: set.cc_pair_summaries.map((p) => p.id), is_public: true, users: [], groups: [] });
  const curator = await story.signIn('curator', curatorKey);
  await navTo(curator, 'document-sets');
  await curator.locator('#document-sets-rows a').first().waitFor();
  const seen = await text(curator, '#document-sets-rows');
  check(seen.includes('Everything') && seen.includes('everyone (public)') && seen.includes('search by it') &&
    !seen.includes('Granite climbing'), `what the curator sees: ${seen}`);
  await press(curator, '#document-sets-rows a', { name: 'Everything' });
  await curator.locator('#document-set-readonly:not([hidden])').waitFor();
  check(await curator.locator('#document-set-buttons').isHidden() && await curator.locator('#document-set-person-row').isHidden() &&
    await curator.evaluate(() => document.getElementById('document-set-fieldset').disabled), 'nothing to change');
  await story.view(curator, 'set-readonly', { strict: true });
  await api(admin, `manage/admin/document-set/${everything}`, 'DELETE');

  story.step = 'the reader narrows a search to the set';
  await navTo(reader, 'credentials');
  await reader.locator('#view-credentials:not([hidden])').waitFor();
  await reader.keyboard.press('/');
  await reader.locator('#view-search:not([hidden])').waitFor();
  await reader.keyboard.type('rock');
  await reader.keyboard.press('Enter');
  await summary(reader, '2 results for “rock”.');
  await reader.locator('#search-set-field:not([hidden])').waitFor();
  await choose(reader, '#search-set', 'Granite', 'Granite climbing');
  await summary(reader, '1 result for “rock” (in “Granite climbing”).');
  const found = await text(reader, '#search-results');
  check(found.includes('Granite slab guide') && !found.includes('Basalt'), `narrowed to the set: ${found}`);
  check(new URL(reader.url()).hash === '#search?q=rock&set=Granite+climbing', `the address keeps the set: ${reader.url()}`);
  await story.view(reader, 'search-set', { strict: true });
  await reader.reload();
  await summary(reader, '1 result for “rock” (in “Granite climbing”).');
  check(await reader.locator('#search-set').inputValue() === 'Granite climbing', 'the set is chosen after a reload');
  await choose(reader, '#search-set', 'All', '', { back: true });
  await summary(reader, '2 results for “rock”.');
  await reader.goBack();
  await summary(reader, '1 result for “rock” (in “Granite climbing”).');

  story.step = 'the admin deletes the set';
  await press(admin, '#document-sets-rows a', { name: 'Granite climbing' });
  await admin.locator('#document-set-title', { hasText: 'Granite climbing' }).waitFor();
  await press(admin, '#document-set-delete', { name: 'Delete document set' });
  await admin.locator('#confirm[open]').waitFor();
  await press(admin, '#confirm-yes', { name: 'Delete', back: true });
  await admin.waitForURL(/#document-sets$/);
  await admin.locator('#document-sets-rows', { hasText: 'No document sets yet' }).waitFor();
  check((await sets(admin)).length === 0, 'the set is gone');

  story.step = 'the reader\'s search by a deleted set';
  await reader.reload();
  await reader.locator('#search-error', { hasText: "403: User does not have access to document sets: ['Granite climbing']" }).waitFor();
  await story.view(reader, 'search-set-gone', { strict: true });
});
