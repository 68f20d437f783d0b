// The chat page (#chat, and #chat/<session id> for one session): ask the
// assistant, see its answer stream in with its sources as numbered links
// to the documents, the searches and tools it ran and what they answered,
// stop it, ask again, say whether it helped; the person's own sessions
// beside. It speaks Onyx's chat API: POST /chat/send-chat-message with
// "stream": true answers JSON lines (the ids of the question and the
// answer first, then packets {"placement", "obj": {"type", …}}, or an
// {"error"} line), and GET /chat/get-chat-session/{id} reads a session
// back with each answer's packets.
//
// A new conversation is started with an assistant the person picks (GET
// persona: those they may use; POST chat/create-chat-session with its
// persona_id); the page says which tools it may call and where it
// searches, and offers its starter messages.
//
// Keyboard: Enter in the question box sends it (Shift+Enter starts a new
// line), Escape stops the answer being written. Text from the model, the
// documents and the tools is only ever set as text; the model's citations
// ([[n]](link)) become links to the console's page of the document cited.

import { call, stream } from './api.js';
import { $, el, showError, clearError, ago, safeLink, confirmAction } from './ui.js';
import { href, go } from './route.js';
import { sourceName } from './sources.js';
import { toolName, searchScope } from './assistants.js';

const state = {
  id: '',         // the session shown ('' for a new one)
  seq: 0,         // the latest load's number: only its answer is shown
  answering: null, // the answer being written: {sessionID, stopped}
  assistants: null, // the assistants the person may use (GET persona), once read
};

/** assistantNote says what assistant p may call and where it searches. */
function assistantNote(p) {
  const tools = p.tools.map(toolName);
  const sets = searchScope(p);
  const search = sets === null ? 'It does not search.'
    : sets.length === 0 ? 'It searches every document you may read.' : `It searches only in: ${sets.join(', ')}.`;
  return `${p.name} may call ${tools.length ? tools.join(', ') : 'no tool'}. ${search}`;
}

/** assistants returns the assistants the person may use, read once a page load. */
async function assistants() {
  if (!state.assistants) state.assistants = (await call('GET', 'persona')).data;
  return state.assistants;
}

/** picker offers the assistants to start a conversation with, the one chosen before kept. */
async function picker(seq) {
  const field = $('chat-assistant-field');
  try {
    const list = await assistants();
    if (seq !== state.seq) return;
    const select = $('chat-assistant');
    const was = select.value;
    select.replaceChildren(...list.map((p) => el('option', { value: String(p.id) }, p.name)));
    if (list.some((p) => String(p.id) === was)) select.value = was;
    field.hidden = list.length === 0;
    describe();
  } catch (e) {
    if (seq === state.seq) showError($('chat-error'), e);
  }
}

/**
 * describe says what the assistant chosen may do, and offers its starter
 * messages: a button each that asks it.
 */
function describe() {
  const p = (state.assistants || []).find((x) => String(x.id) === $('chat-assistant').value);
  $('chat-assistant-tools').textContent = p ? assistantNote(p) : '';
  const starters = (p && p.starter_messages) || []; // null when it has none
  $('chat-starters').replaceChildren(...starters.map((m) => {
    const b = el('button', { type: 'button', class: 'secondary small' }, m.name);
    b.addEventListener('click', () => {
      $('chat-input').value = m.message;
      $('chat-input').focus();
      $('chat-form').requestSubmit();
    });
    return b;
  }));
  $('chat-starters').hidden = starters.length === 0;
}

/** sessionAssistant says which assistant the session shown answers with. */
async function sessionAssistant(seq, id) {
  try {
    const p = (await assistants()).find((x) => x.id === id);
    if (seq === state.seq) $('chat-assistant-tools').textContent = p ? `With ${assistantNote(p)}` : '';
  } catch {
    // The conversation is shown without it.
  }
}

/** citation finds the model's citations in its text: [[n]](link). */
const citation = /\[\[(\d+)\]\]\(([^)\s]*)\)/g;

/** docHref is the console's page of one pair's copy of a document. */
const docHref = (id, pair) => href('document', encodeURIComponent(id), { pair });

/**
 * answerText returns the nodes of an answer's text: its citations as links
 * to the documents they cite (cited maps a number to {document_id,
 * cc_pair_id}), the rest as text. A citation not (yet) known stays text.
 */
function answerText(text, cited) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(citation)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const c = cited.get(Number(m[1]));
    out.push(c
      ? el('a', { href: docHref(c.document_id, c.cc_pair_id), class: 'cite', 'aria-label': `source ${m[1]}` }, `[${m[1]}]`)
      : `[${m[1]}]`);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/**
 * Answer is one answer on the page: its text, its sources, the searches
 * and tools it ran, its error, and its actions. It is filled from the
 * stream's packets as they come, or from a saved message.
 */
class Answer {
  constructor(id) {
    this.id = id;
    this.text = '';
    this.cited = new Map(); // citation number → {document_id, cc_pair_id}
    this.docs = new Map();  // document id → the document as the search gave it
    this.body = el('div', { class: 'answer-text' });
    this.steps = el('ol', { class: 'answer-steps small', 'aria-label': 'What the assistant did' });
    this.sources = el('ol', { class: 'answer-sources small', 'aria-label': 'Sources' });
    this.error = el('div', { class: 'error', role: 'alert' });
    this.actions = el('div', { class: 'answer-actions' });
    this.current = null; // the step of the tool call being made
    this.node = el('li', { class: 'chat-answer', 'data-message': id ?? '' },
      el('p', { class: 'chat-who' }, 'Assistant'), this.steps, this.body, this.sources, this.error, this.actions);
  }

  /** packet applies one streamed (or replayed) packet's obj. */
  packet(obj) {
    switch (obj.type) {
      case 'message_start':
        for (const d of obj.final_documents || []) this.doc(d);
        break;
      case 'message_delta':
        this.text += obj.content || '';
        this.showText();
        break;
      case 'search_tool_start':
        this.search = el('li', {}, 'Searched the company\'s documents');
        this.steps.append(this.search);
        break;
      case 'search_tool_queries_delta':
        if (this.search && obj.queries?.length) this.search.append(' for ', obj.queries.map((q) => `“${q}”`).join(', '));
        break;
      case 'search_tool_documents_delta':
        for (const d of obj.documents || []) this.doc(d);
        if (this.search) this.search.append(`: ${obj.documents?.length ?? 0} found`);
        break;
      case 'citation_info':
        this.cite(obj.citation_number, obj.document_id, obj.cc_pair_id);
        break;
      case 'custom_tool_start':
        this.current = null;
        this.tool(obj);
        break;
      case 'custom_tool_args':
        this.tool(obj).args.textContent = JSON.stringify(obj.tool_args, null, 2);
        break;
      case 'custom_tool_delta': {
        const t = this.tool(obj);
        if (obj.error) {
          t.summary.textContent = `The tool ${obj.tool_name} failed`;
          t.result.textContent = obj.error.message;
        } else {
          t.result.textContent = JSON.stringify(obj.data, null, 2);
        }
        break;
      }
      case 'stop':
        if (obj.stop_reason === 'user_cancelled') this.stopped = true;
        break;
      default:
        break;
    }
  }

  /**
   * tool returns the step of the tool call a packet is of (its summary,
   * arguments and result): the call its custom_tool_start began, or a new
   * one.
   */
  tool(obj) {
    let t = this.current;
    if (!t || t.name !== obj.tool_name) {
      t = { name: obj.tool_name, summary: el('summary', {}, `Called the tool ${obj.tool_name}`),
        args: el('pre', { class: 'tool-args' }), result: el('pre', { class: 'tool-result' }) };
      this.steps.append(el('li', {}, el('details', {}, t.summary,
        el('p', { class: 'muted' }, 'Arguments'), t.args, el('p', { class: 'muted' }, 'Answer'), t.result)));
      this.current = t;
    }
    return t;
  }

  /** doc remembers a document a search gave. */
  doc(d) {
    if (!this.docs.has(d.document_id)) this.docs.set(d.document_id, d);
  }

  /** cite records citation n and lists its document among the sources. */
  cite(n, id, pair) {
    if (this.cited.has(n)) return;
    const d = this.docs.get(id);
    const c = { document_id: id, cc_pair_id: pair ?? d?.cc_pair_id };
    this.cited.set(n, c);
    const title = d?.semantic_identifier || id;
    const link = safeLink(d?.link);
    this.sources.append(el('li', { value: n },
      el('a', { href: docHref(id, c.cc_pair_id) }, title),
      d ? el('span', { class: 'muted' }, ` · ${sourceName(d.source_type)}`) : null,
      ...(link ? [' · ', el('a', { href: link, target: '_blank', rel: 'noopener noreferrer' }, 'at the source',
        el('span', { class: 'visually-hidden' }, ` (${title}, opens in a new tab)`))] : [])));
    this.showText();
  }

  /** showText shows the text as it stands, its known citations as links. */
  showText() {
    this.body.replaceChildren(...answerText(this.text, this.cited));
  }

  /** fail shows an error the answer ended with. */
  fail(message) {
    showError(this.error, new Error(message));
  }
}

/** question returns the node of a person's question. */
const question = (text) => el('li', { class: 'chat-question' }, el('p', { class: 'chat-who' }, 'You'), el('p', { class: 'question-text' }, text));

/** reset forgets what the page showed (signing out). */
export function reset() {
  state.id = '';
  state.seq++;
  state.assistants = null;
  $('chat-assistant').replaceChildren();
  $('chat-assistant-field').hidden = true;
  $('chat-assistant-tools').textContent = '';
  $('chat-starters').replaceChildren();
  $('chat-starters').hidden = true;
  $('chat-messages').replaceChildren();
  $('chat-sessions').replaceChildren();
  $('chat-input').value = '';
}

/** show opens the page: a new conversation, or session id's. */
export async function show(id) {
  state.id = id || '';
  const seq = ++state.seq;
  clearError($('chat-error'));
  sessions(seq);
  state.assistants = null;
  $('chat-assistant-field').hidden = true;
  $('chat-assistant-tools').textContent = '';
  $('chat-starters').hidden = true;
  if (!state.id) {
    picker(seq);
    $('chat-title').textContent = 'Chat';
    $('chat-messages').replaceChildren();
    $('chat-status').textContent = 'Ask a question: the assistant searches the documents you may read and cites them.';
    $('chat-delete').hidden = true;
    $('chat-input').focus();
    return;
  }
  // What is shown until the session is read is the page left before: busy,
  // so that nobody acts on answers about to be redrawn.
  $('chat-messages').setAttribute('aria-busy', 'true');
  await load(seq);
  if (seq === state.seq) $('chat-messages').removeAttribute('aria-busy');
}

/** sessions lists the person's sessions beside, the one shown marked. */
async function sessions(seq) {
  try {
    const { data } = await call('GET', 'chat/get-user-chat-sessions');
    if (seq !== state.seq) return;
    const list = (data && data.sessions) || [];
    $('chat-sessions').replaceChildren(...list.map((s) => el('li', {},
      el('a', { href: href('chat', s.id), 'aria-current': s.id === state.id ? 'page' : null }, s.name || 'Untitled'),
      el('span', { class: 'muted small' }, ` ${ago(s.time_updated)}`))));
    $('chat-sessions-empty').hidden = list.length > 0;
  } catch (e) {
    if (seq === state.seq) showError($('chat-error'), e);
  }
}

/** load reads the session shown and shows its conversation. */
async function load(seq) {
  try {
    const { data } = await call('GET', `chat/get-chat-session/${encodeURIComponent(state.id)}`);
    if (seq !== state.seq) return;
    $('chat-title').textContent = data.description || 'Chat';
    $('chat-delete').hidden = false;
    $('chat-assistant-field').hidden = true;
    $('chat-starters').hidden = true;
    sessionAssistant(seq, data.persona_id);
    const nodes = [];
    // Each answer's saved packets, in the order of the session's answers.
    const replays = new Map();
    (data.messages || []).filter((m) => m.message_type === 'assistant')
      .forEach((m, i) => replays.set(m.message_id, (data.packets || [])[i] || []));
    const messages = thread(data.messages || []);
    const lastAnswer = messages.filter((m) => m.message_type === 'assistant').at(-1);
    let last = null;
    for (const m of messages) {
      if (m.message_type === 'user') {
        nodes.push(question(m.message));
        last = m;
      } else if (m.message_type === 'assistant') {
        const a = new Answer(m.message_id);
        for (const d of m.context_docs || []) a.doc(d);
        for (const p of replays.get(m.message_id)) if (p.obj.type !== 'message_delta') a.packet(p.obj);
        // A failed answer's text is its error, which the alert shows.
        a.text = m.error && m.message === m.error ? '' : m.message;
        for (const [n, docID] of Object.entries(m.citations || {})) a.cite(Number(n), docID);
        a.showText();
        if (m.error) a.fail(m.error);
        actions(a, m, m === lastAnswer ? last : null);
        nodes.push(a.node);
      }
    }
    $('chat-messages').replaceChildren(...nodes);
    $('chat-status').textContent = '';
    document.title = `${$('chat-title').textContent} · Quarry`;
  } catch (e) {
    if (seq !== state.seq) return;
    $('chat-messages').replaceChildren();
    showError($('chat-error'), e.status === 404 || e.status === 400 ? new Error('This conversation does not exist, or is not yours.') : e);
  }
}

/**
 * thread returns the conversation a session's messages hold now: from its
 * first message, each message's latest child (an answer asked again has
 * siblings; the newest is shown).
 */
function thread(messages) {
  const byID = new Map(messages.map((m) => [m.message_id, m]));
  const out = [];
  for (let m = messages.find((x) => x.parent_message === null || !byID.has(x.parent_message)); m; m = byID.get(m.latest_child_message)) {
    out.push(m);
  }
  return out;
}

/**
 * actions gives a saved answer its buttons: feedback (a toggle each), and,
 * given q (the question of the conversation's last answer), asking again:
 * a regenerated answer to the same question.
 */
function actions(a, m, q) {
  const like = el('button', { type: 'button', class: 'secondary small', 'aria-pressed': String(m.current_feedback === 'like') }, 'Helpful');
  const dislike = el('button', { type: 'button', class: 'secondary small', 'aria-pressed': String(m.current_feedback === 'dislike') }, 'Not helpful');
  const said = el('span', { class: 'muted small', role: 'status' });
  const feedback = async (button, positive) => {
    clearError(a.error);
    const on = button.getAttribute('aria-pressed') !== 'true';
    try {
      if (on) await call('POST', 'chat/create-chat-message-feedback', { body: { chat_message_id: m.message_id, is_positive: positive } });
      else await call('DELETE', `chat/remove-chat-message-feedback?chat_message_id=${m.message_id}`);
      like.setAttribute('aria-pressed', String(on && positive));
      dislike.setAttribute('aria-pressed', String(on && !positive));
      said.textContent = on ? 'Thank you: your feedback is saved.' : 'Your feedback is removed.';
    } catch (e) {
      showError(a.error, e);
    }
  };
  like.addEventListener('click', () => feedback(like, true));
  dislike.addEventListener('click', () => feedback(dislike, false));
  a.actions.replaceChildren(like, dislike);
  if (q) {
    const again = el('button', { type: 'button', class: 'secondary small', 'data-regenerate': '' }, 'Ask again');
    again.addEventListener('click', () => ask(q.message, q.message_id));
    a.actions.append(again);
  }
  a.actions.append(' ', said);
}

/** setAnswering switches the form between asking and waiting for an answer. */
function setAnswering(on) {
  $('chat-send').hidden = on;
  $('chat-stop').hidden = !on;
  $('chat-messages').setAttribute('aria-busy', String(on));
  for (const b of document.querySelectorAll('#chat-messages [data-regenerate]')) b.disabled = on;
}

/**
 * ask sends text as a question of the session shown (a new session first
 * if none), or, with regenerate, asks again for an answer to that earlier
 * question, and shows the answer as it streams.
 */
async function ask(text, regenerate) {
  if (state.answering) return;
  clearError($('chat-error'));
  const seq = state.seq;
  state.answering = { stopped: false };
  setAnswering(true);
  try {
    if (!state.id) {
      const { data } = await call('POST', 'chat/create-chat-session', { body: { persona_id: Number($('chat-assistant').value || 0) } });
      state.id = data.chat_session_id;
      history.replaceState(null, '', href('chat', state.id));
      $('chat-delete').hidden = false;
      $('chat-assistant-field').hidden = true;
      $('chat-starters').hidden = true;
    }
    state.answering.sessionID = state.id;
    const list = $('chat-messages');
    if (regenerate === undefined) list.append(question(text));
    const a = new Answer(null);
    list.append(a.node);
    $('chat-status').textContent = 'The assistant is answering…';
    const first = !list.querySelector('.chat-answer[data-message]:not([data-message=""])');
    const body = { chat_session_id: state.id, message: text, stream: true };
    if (regenerate !== undefined) body.parent_message_id = regenerate;
    let failed = false;
    await stream('POST', 'chat/send-chat-message', { body }, (line) => {
      if (line.error !== undefined) {
        failed = true;
        a.fail(line.error);
      } else if (line.reserved_assistant_message_id !== undefined) a.id = line.reserved_assistant_message_id;
      else if (line.obj) a.packet(line.obj);
    });
    $('chat-status').textContent = failed ? 'The answer failed.' : a.stopped || state.answering.stopped ? 'Stopped.' : 'Answered.';
    // A new conversation is named after its first question (the server's
    // name when none is given).
    if (first && !failed) await call('PUT', 'chat/rename-chat-session', { body: { chat_session_id: state.id, name: null } });
  } catch (e) {
    showError($('chat-error'), e);
    $('chat-status').textContent = '';
  } finally {
    state.answering = null;
    setAnswering(false);
  }
  // The conversation as the server keeps it: ids, feedback, asking again.
  if (seq === state.seq && state.id) {
    const said = $('chat-status').textContent;
    await load(state.seq);
    sessions(state.seq);
    $('chat-status').textContent = said;
  }
}

/** stop asks the server to stop the answer being written. */
async function stop() {
  const a = state.answering;
  if (!a || !a.sessionID || a.stopped) return;
  a.stopped = true;
  try {
    await call('POST', `chat/stop-chat-session/${encodeURIComponent(a.sessionID)}`);
  } catch (e) {
    showError($('chat-error'), e);
  }
}

/** submit sends the question box's text. */
function submit(ev) {
  ev.preventDefault();
  const input = $('chat-input');
  const text = input.value.trim();
  if (!text) {
    input.setAttribute('aria-invalid', 'true');
    $('chat-status').textContent = 'Type a question first.';
    input.focus();
    return;
  }
  input.removeAttribute('aria-invalid');
  input.value = '';
  ask(text);
}

/** remove deletes the session shown, once confirmed. */
async function remove() {
  if (!state.id || !(await confirmAction('Delete this conversation? It cannot be brought back.', 'Delete conversation'))) return;
  try {
    await call('DELETE', `chat/delete-chat-session/${encodeURIComponent(state.id)}`);
    go(href('chat'));
  } catch (e) {
    showError($('chat-error'), e);
  }
}

/** wire connects the page's controls, once. */
export function wire() {
  $('chat-form').addEventListener('submit', submit);
  $('chat-stop').addEventListener('click', stop);
  $('chat-delete').addEventListener('click', remove);
  $('chat-assistant').addEventListener('change', describe);
  $('chat-input').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      $('chat-form').requestSubmit();
    }
  });
  $('view-chat').addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && state.answering) {
      ev.preventDefault();
      stop();
    }
  });
}
