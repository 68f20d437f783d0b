// Reads internal/llmtest's scripted server with OpenAI's official Node
// client, as an application reads OpenAI, and prints what it got as one
// JSON object (node_test.go checks it).
//
//   node client.mjs BASE_URL API_KEY
import OpenAI from "openai";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const tools = [{
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
}];
const out = {};

// A streamed answer with text and calls of tools, put together by the
// client's own helper.
const runner = client.chat.completions.stream({
  model: "gpt-test",
  messages: [{ role: "user", content: "Weather in Oslo? [tools]" }],
  tools,
  stream_options: { include_usage: true },
});
const pieces = [];
runner.on("content", (delta) => pieces.push(delta));
const final = await runner.finalChatCompletion();
out.stream = {
  pieces,
  finish_reason: final.choices[0].finish_reason,
  content: final.choices[0].message.content,
  tool_calls: final.choices[0].message.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
  usage: final.usage,
};

// The raw chunks, with stream: true.
const chunks = await client.chat.completions.create({
  model: "gpt-test", stream: true, messages: [{ role: "user", content: "hi" }],
});
const text = [];
let finish = null;
for await (const chunk of chunks) {
  for (const choice of chunk.choices) {
    if (choice.delta.content) text.push(choice.delta.content);
    if (choice.finish_reason) finish = choice.finish_reason;
  }
}
out.raw = { text, finish };

// An answer not streamed.
const whole = await client.chat.completions.create({
  model: "gpt-test", messages: [{ role: "user", content: "Weather in Oslo? [tools]" }], tools,
});
out.whole = {
  object: whole.object,
  content: whole.choices[0].message.content,
  finish_reason: whole.choices[0].finish_reason,
  tool_calls: whole.choices[0].message.tool_calls.length,
  usage: whole.usage,
};

// Errors, as the client's error classes.
for (const [name, content] of [["rate_limited", "[busy]"], ["server_error", "[broken]"]]) {
  try {
    await client.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content }] });
    out[name] = "no error";
  } catch (e) {
    out[name] = { class: e.constructor.name, status: e.status, message: e.error?.message, retry_after: e.headers?.get("retry-after") };
  }
}
try {
  await new OpenAI({ baseURL, apiKey: "sk-wrong", maxRetries: 0 }).chat.completions.create({
    model: "gpt-test", messages: [{ role: "user", content: "hi" }],
  });
  out.wrong_key = "no error";
} catch (e) {
  out.wrong_key = { class: e.constructor.name, status: e.status, code: e.code };
}

// A failure in the middle of a stream (an error chunk).
try {
  const s = await client.chat.completions.create({
    model: "gpt-test", stream: true, messages: [{ role: "user", content: "[midway]" }],
  });
  for await (const _ of s) { /* read on */ }
  out.midway = "no error";
} catch (e) {
  out.midway = { class: e.constructor.name, message: e.message };
}

console.log(JSON.stringify(out));
