// Assistants in the console (issue 42, item 5), in Debian's Chromium, as
// web/assistant_e2e_test.go asks:
//
//   node assistants.mjs <url> <screenshot dir> <admin key> <reader key>
//
// The server holds two public pairs, "Granite wiki" and "Basalt wiki",
// each with one document about rock, a public document set "Granite
// climbing" of the granite pair, and the scripted model as the default
// provider (a search for rock, then an answer citing the first document).
// The admin, with the keyboard alone: reads the built-in assistant
// (read-only here); saves an assistant without a name and reads the
// API's refusal; makes "Granite guide" with instructions,
// the search limited to the set, the custom tool "Tickets", the model, a
// starter message, shared with the reader; changes its description. The
// reader sees it in the list, read-only on its page; shared with them as
// an editor, they may change it but neither delete it nor make it public.
// On the chat page they pick it with the keyboard, read what it may call
// and where it searches, ask its starter message with the keyboard, and
// see its search for rock find one document (of two). The admin deletes it (keyboard again). Every new view
// is checked strictly with axe-core; the page must log no error.

import { check, Story, tabTo, press, typeIn, choose, navTo } from './story.mjs';

const [base, outdir, adminKey, readerKey] = process.argv.slice(2);
if (!base || !outdir || !adminKey || !readerKey) {
  console.error('usage: node assistants.mjs <url> <outdir> <admin key> <reader key>');
  process.exit(2);
}
const story = new Story('assistants', base, outdir);

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

await story.run(async () => {
  story.step = 'the reader\'s assistants';
  const reader = await story.signIn('reader', readerKey);
  const readerID = (await api(reader, 'me')).id;

  story.step = 'the admin meets a refusal';
  const admin = await story.signIn('admin', adminKey);
  await navTo(admin, 'assistants');
  await admin.locator('#assistants-rows a').first().waitFor();
  const builtin = await text(admin, '#assistants-rows');
  check(builtin.includes('everyone (built in)') && builtin.includes('all its user may read'), `the list: ${builtin}`);
  await story.view(admin, 'list', { strict: true });
  await press(admin, '#assistants-rows a', { name: 'Assistant' });
  await admin.locator('#assistant-readonly:not([hidden])', { hasText: 'The built-in assistant is not changed here' }).waitFor();
  check(await admin.locator('#assistant-buttons').isHidden(), 'the built-in assistant is read-only here');
  await navTo(admin, 'assistants');
  await admin.locator('#assistants-rows a').first().waitFor();
  await press(admin, 'a[href="#assistant/new"]', { name: 'New assistant' });
  await admin.locator('#assistant-form:not([hidden])').waitFor();
  check(await admin.locator('#assistant-search').isChecked(), 'a new assistant searches');
  await press(admin, '#assistant-save', { name: 'Make assistant' });
  await admin.locator('#assistant-error', { hasText: '400: An assistant needs a name' }).waitFor();
  await story.view(admin, 'new-refused', { strict: true });

  story.step = 'the admin makes an assistant';
  await typeIn(admin, '#assistant-name', 'Granite guide', { back: true });
  await typeIn(admin, '#assistant-description', 'Knows the granite crags.');
  await typeIn(admin, '#assistant-instructions', 'Answer as a climbing guide.');
  await press(admin, '#assistant-sets input', { name: 'Granite climbing', key: 'Space' });
  check(await admin.locator('#assistant-sets input').isChecked(), 'the set is chosen');
  await press(admin, '#assistant-tools input', { name: 'Tickets · The ticket API', key: 'Space' });
  const llama = (await api(admin, 'llm/provider')).providers[0].model_configurations[0].id;
  await choose(admin, '#assistant-model', 'local', String(llama));
  await typeIn(admin, '#assistant-starters', 'Where do we climb today?');
  await tabTo(admin, '#assistant-person');
  for (let i = 0; i < 10 && !(await admin.locator('#assistant-person option:checked').innerText()).includes('reader'); i++) {
    await admin.keyboard.press('ArrowDown');
  }
  await press(admin, '#assistant-person-add', { name: 'Share with this person' });
  await admin.locator('#assistant-people', { hasText: 'API key “reader”' }).waitFor();
  await press(admin, '#assistant-save', { name: 'Make assistant' });
  await admin.waitForURL(/#assistant\/\d+$/);
  await admin.locator('#assistant-saved', { hasText: 'The assistant “Granite guide” is made.' }).waitFor();
  const id = Number(new URL(admin.url()).hash.split('/')[1]);
  const made = await api(admin, `persona/${id}`);
  check(made.name === 'Granite guide' && made.description === 'Knows the granite crags.' &&
    made.system_prompt === 'Answer as a climbing guide.' && !made.is_public &&
    made.document_sets.map((s) => s.name).join() === 'Granite climbing' &&
    made.tools.map((t) => t.in_code_tool_id || t.name).join() === 'SearchTool,Tickets' && made.default_model_configuration_id === llama &&
    made.starter_messages.map((m) => m.message).join() === 'Where do we climb today?' &&
    made.users.map((u) => u.id).join() === readerID, `the assistant made: ${JSON.stringify(made)}`);
  await story.view(admin, 'assistant', { strict: true });

  story.step = 'the admin changes it';
  await typeIn(admin, '#assistant-description', 'Knows every granite crag.', { back: true });
  await press(admin, '#assistant-save', { name: 'Save assistant' });
  await admin.locator('#assistant-saved', { hasText: 'Saved at' }).waitFor();
  const changed = await api(admin, `persona/${id}`);
  check(changed.description === 'Knows every granite crag.' && changed.users.length === 1 && changed.tools.length === 2 &&
    changed.document_sets.length === 1 && changed.system_prompt === made.system_prompt, `the assistant changed: ${JSON.stringify(changed)}`);

  story.step = 'the reader sees it';
  await navTo(reader, 'assistants');
  await reader.locator('#assistants-rows', { hasText: 'Granite guide' }).waitFor();
  const row = await text(reader, '#assistants-rows');
  check(row.includes('Granite climbing') && row.includes('Tickets') && row.includes('chat with it'), `the reader's list: ${row}`);
  await press(reader, '#assistants-rows a', { name: 'Granite guide' });
  await reader.locator('#assistant-readonly:not([hidden])').waitFor();
  check(await reader.locator('#assistant-buttons').isHidden() &&
    await reader.evaluate(() => document.getElementById('assistant-fieldset').disabled), 'nothing to change');
  await story.view(reader, 'assistant-readonly', { strict: true });

  story.step = 'the reader as an editor';
  await api(admin, `persona/${id}/share`, 'PATCH', { user_shares: [{ user_id: readerID, permission: 'EDITOR' }] });
  await reader.reload();
  await reader.locator('#assistant-form:not([hidden])').waitFor();
  await reader.locator('#assistant-buttons:not([hidden])').waitFor();
  check(await reader.locator('#assistant-readonly').isHidden() && await reader.locator('#assistant-delete').isHidden() &&
    await reader.locator('#assistant-public').isDisabled(), 'an editor changes it, but neither deletes it nor makes it public');
  check((await text(reader, '#assistant-public-hint')) === 'Only its owners and admins make it public or not.', 'the editor is told who may');
  await story.view(reader, 'assistant-editor', { strict: true });

  story.step = 'the reader picks it on the chat page';
  await navTo(reader, 'chat');
  await reader.locator('#chat-assistant-field:not([hidden])').waitFor();
  await choose(reader, '#chat-assistant', 'Granite', String(id), { back: true });
  const note = await text(reader, '#chat-assistant-tools');
  check(note === 'Granite guide may call Search the company\'s documents, Tickets. It searches only in: Granite climbing.', `what it may do: ${note}`);
  check(await text(reader, '#chat-error') === '', `no error on the chat page: ${await text(reader, '#chat-error')}`);
  await story.view(reader, 'chat-picked', { strict: true });
  await press(reader, '#chat-starters button', { name: 'Where do we climb today?' });
  await reader.locator('#chat-status', { hasText: /Answered\.|failed/ }).waitFor({ timeout: 30_000 });
  check(await text(reader, '#chat-status') === 'Answered.', `the answer: ${await text(reader, '#chat-messages')} ${await text(reader, '#chat-error')}`);
  const answer = reader.locator('#chat-messages .chat-answer').last();
  const steps = await answer.locator('.answer-steps').innerText();
  check(steps === 'Searched the company\'s documents for “rock”: 1 found', `what it did: ${steps}`);
  const sources = await answer.locator('.answer-sources li').allInnerTexts();
  check(sources.length === 1 && sources[0].startsWith('Granite slab guide'), `the sources: ${sources}`);
  await reader.locator('#chat-assistant-tools', { hasText: 'With Granite guide may call' }).waitFor();
  check(await reader.locator('#chat-assistant-field').isHidden(), 'a conversation keeps its assistant');
  check(await reader.evaluate(() => document.activeElement.id) === 'chat-input', 'the question box has the focus');
  await story.view(reader, 'chat-answered', { strict: true });

  story.step = 'the admin deletes it';
  await navTo(admin, 'assistants');
  await press(admin, '#assistants-rows a', { name: 'Granite guide' });
  await admin.locator('#assistant-title', { hasText: 'Granite guide' }).waitFor();
  await press(admin, '#assistant-delete', { name: 'Delete assistant' });
  await admin.locator('#confirm[open]').waitFor();
  await press(admin, '#confirm-yes', { name: 'Delete', back: true });
  await admin.waitForURL(/#assistants$/);
  await admin.locator('#assistants-rows a').first().waitFor();
  check(!(await text(admin, '#assistants-rows')).includes('Granite guide'), 'the assistant is gone');
});
