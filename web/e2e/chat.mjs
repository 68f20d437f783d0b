// A person chats with the assistant in the console (issue 41, item 4), in
// Debian's Chromium, as web/chat_e2e_test.go asks:
//
//   node chat.mjs <url> <screenshot dir> <basic key> <the ticket tool's secret>
//
// The server answers with a scripted OpenAI-compatible model (the test's
// internal/llmtest server, as the default provider): the first question is
// answered by a search of the company's documents, then a text citing the
// first document found; asking again gets a second text; the next
// question, a call of the ticket API's custom tool, then its answer; a question with
// "slowly" in it streams slowly, and one with "break" in it meets the
// provider's 500. The person: opens Chat from the nav; asks with the
// keyboard; sees the search, the answer and its source as a numbered link
// to the document; opens the citation; says the answer helped; reloads and
// finds the conversation, the feedback and the session in the list; asks
// again; sees the tool's call and answer, and never its secret; stops a slow answer with Escape; reads the provider's failure in
// the answer; deletes the conversation. Every view is checked with
// axe-core; the page must log no error.

import { check, Story } from './story.mjs';

const [base, outdir, key, toolSecret] = process.argv.slice(2);
if (!base || !outdir || !key || !toolSecret) {
  console.error('usage: node chat.mjs <url> <outdir> <basic key> <tool secret>');
  process.exit(2);
}
const story = new Story('chat', base, outdir);

const session = /#chat\/[0-9a-f-]{36}$/;

await story.run(async () => {
  story.step = 'open the chat';
  const p = await story.signIn('reader', key);
  await p.getByRole('link', { name: 'Chat', exact: true }).click();
  await p.locator('#view-chat:not([hidden])').waitFor();
  check(await p.evaluate(() => document.activeElement.id) === 'chat-input', 'the question box has the focus');
  await story.view(p, 'new');

  story.step = 'ask';
  await p.keyboard.type('How do we belay on granite?');
  await p.keyboard.press('Enter');
  await p.locator('#chat-status', { hasText: 'Answered.' }).waitFor({ timeout: 30_000 });
  check(session.test(p.url()), `the conversation's address: ${p.url()}`);
  const answer = p.locator('#chat-messages .chat-answer').last();
  const said = await answer.locator('.answer-text').innerText();
  check(said === 'Belay from the bolted anchor [1].', `the answer: ${said}`);
  const steps = await answer.locator('.answer-steps').innerText();
  check(steps.startsWith('Searched the company\'s documents for “granite belay”: '), `what it did: ${steps}`);
  const cite = answer.locator('a.cite');
  check(await cite.count() === 1 && /#document\/.+\?pair=\d+/.test(await cite.getAttribute('href')), `the citation: ${await cite.getAttribute('href')}`);
  const sources = await answer.locator('.answer-sources li').allInnerTexts();
  check(sources.length === 1 && sources[0].startsWith('Granite belay guide · Web · at the source'), `the sources: ${sources}`);
  await p.locator('#chat-sessions a[aria-current="page"]', { hasText: 'How do we belay on granite?' }).waitFor();
  await story.view(p, 'answered');

  story.step = 'open the citation';
  await cite.click();
  await p.locator('#view-document:not([hidden]) #document-title', { hasText: 'Granite belay guide' }).waitFor();
  await p.goBack();
  await p.locator('#chat-messages:not([aria-busy]) .chat-answer .answer-text', { hasText: 'bolted anchor' }).waitFor();

  story.step = 'feedback';
  const helpful = p.locator('#chat-messages .chat-answer').last().getByRole('button', { name: 'Helpful', exact: true });
  await helpful.click();
  await p.locator('#chat-messages .chat-answer [role="status"]', { hasText: 'your feedback is saved' }).waitFor();
  check(await helpful.getAttribute('aria-pressed') === 'true', 'the button says it is pressed');

  story.step = 'reload';
  await p.reload();
  await p.locator('#chat-messages .chat-answer .answer-text', { hasText: 'bolted anchor' }).waitFor();
  check(await p.locator('#chat-messages > li').count() === 2, 'the question and its answer, kept');
  check(await p.locator('#chat-messages .chat-answer').last().getByRole('button', { name: 'Helpful', exact: true })
    .getAttribute('aria-pressed') === 'true', 'the feedback, kept');
  check(await p.locator('#chat-messages a.cite').count() === 1, 'the citation, kept');

  story.step = 'ask again';
  await p.getByRole('button', { name: 'Ask again' }).click();
  await p.locator('#chat-status', { hasText: 'Answered.' }).waitFor({ timeout: 30_000 });
  const again = await p.locator('#chat-messages .chat-answer .answer-text').last().innerText();
  check(again === 'Clip in twice before you lean back.', `the second answer: ${again}`);
  check(await p.locator('#chat-messages > li').count() === 2, 'one question, and its newest answer');

  story.step = 'a tool';
  await p.locator('#chat-input').fill('What does ticket 42 say?');
  await p.locator('#chat-input').press('Enter');
  await p.locator('#chat-status', { hasText: 'Answered.' }).waitFor({ timeout: 30_000 });
  const toolAnswer = p.locator('#chat-messages .chat-answer').last();
  check(await toolAnswer.locator('.answer-text').innerText() === 'Ticket 42 is open.', 'the answer after the tool');
  const call = toolAnswer.locator('.answer-steps details');
  check(await call.locator('summary').innerText() === 'Called the tool get_ticket', `the call: ${await call.locator('summary').innerText()}`);
  await call.locator('summary').click();
  const result = await call.locator('pre.tool-result').innerText();
  check(result.includes('"status": "open"') && result.includes('"owner": "ada"'), `the tool's answer: ${result}`);
  check(!(await p.locator('body').innerText()).includes(toolSecret), 'the tool\'s secret is never shown');
  await story.view(p, 'tool');

  story.step = 'stop';
  await p.locator('#chat-input').fill('Tell me about slab climbing, slowly.');
  await p.locator('#chat-input').press('Enter');
  await p.locator('#chat-stop:not([hidden])').waitFor();
  await p.locator('#chat-messages .chat-answer .answer-text', { hasText: 'Slab' }).waitFor({ timeout: 30_000 });
  await p.keyboard.press('Escape');
  await p.locator('#chat-status', { hasText: 'Stopped.' }).waitFor({ timeout: 30_000 });
  const cut = await p.locator('#chat-messages .chat-answer .answer-text').last().innerText();
  check(cut.startsWith('Slab') && !cut.includes('THE END'), `the stopped answer: ${cut}`);
  check(await p.locator('#chat-send:not([hidden])').count() === 1, 'the form asks again');
  await story.view(p, 'stopped');

  story.step = 'provider failure';
  await p.locator('#chat-input').fill('This will break the model.');
  await p.locator('#chat-input').press('Enter');
  await p.locator('#chat-status', { hasText: 'The answer failed.' }).waitFor({ timeout: 30_000 });
  const failed = p.locator('#chat-messages .chat-answer').last();
  await failed.locator('.error p').waitFor();
  const why = await failed.locator('.error').innerText();
  check(why.includes('500') && !why.includes('sk-'), `the failure: ${why}`);
  check(await failed.locator('.answer-text').innerText() === '', 'the failure is said once');
  await story.view(p, 'failed');

  story.step = 'delete';
  await p.getByRole('button', { name: 'Delete conversation' }).click();
  await p.locator('#confirm-yes').click();
  await p.waitForURL(/#chat$/);
  await p.locator('#chat-sessions-empty:not([hidden])').waitFor();
  check(await p.locator('#chat-messages > li').count() === 0, 'nothing shown');
});
