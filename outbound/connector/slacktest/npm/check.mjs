// Reads outbound/connector/slacktest's simulated Web API with Slack's
// official Node client (@slack/web-api), as an application reads Slack:
// every listing through the client's own paginate (it follows
// response_metadata.next_cursor), a 429 waited out by the client's own
// retries. It prints what it read as one JSON object (node_test.go
// compares it with what the simulator holds).
//
//   node check.mjs API_URL TOKEN
import { WebClient, WebClientEvent, ErrorCode } from "@slack/web-api";

const [slackApiUrl, token] = process.argv.slice(2);
// The client's log goes to stderr: stdout is the answer.
const say = (...m) => console.error(...m);
const logger = { debug: say, info: say, warn: say, error: say, setLevel() {}, getLevel() { return "info"; }, setName() {} };
const client = new WebClient(token, { slackApiUrl, logger, retryConfig: { retries: 3, factor: 1, minTimeout: 10, maxTimeout: 10 } });
const out = { pages: {}, channels: [], history: {}, replies: {}, members: {}, users: {}, users_list: [], rate_limited: [] };
client.on(WebClientEvent.RATE_LIMITED, (seconds, { url }) => out.rate_limited.push({ seconds, method: new URL(url).pathname.split("/").pop() }));

// Every page of a listing, counted.
async function* pages(method, options) {
  for await (const page of client.paginate(method, options)) {
    out.pages[method] = (out.pages[method] ?? 0) + 1;
    yield page;
  }
}

for await (const page of pages("conversations.list", { types: "public_channel,private_channel", exclude_archived: true, limit: 900 })) {
  for (const c of page.channels) out.channels.push({ id: c.id, name: c.name, is_private: c.is_private, is_member: c.is_member });
}
for (const c of out.channels) {
  out.members[c.id] = [];
  for await (const page of pages("conversations.members", { channel: c.id, limit: 900 })) out.members[c.id].push(...page.members);
  if (!c.is_member) continue;
  out.history[c.id] = [];
  for await (const page of pages("conversations.history", { channel: c.id, oldest: "0", limit: 900 })) {
    for (const m of page.messages) {
      out.history[c.id].push(m.ts);
      if (!m.reply_count) continue;
      out.replies[m.ts] = [];
      for await (const r of pages("conversations.replies", { channel: c.id, ts: m.ts, limit: 900 })) {
        out.replies[m.ts].push(...r.messages.map((x) => x.ts));
      }
    }
  }
}
for (const id of new Set(Object.values(out.members).flat())) {
  const { user } = await client.users.info({ user: id });
  out.users[id] = user.profile.email ?? "";
}
for await (const page of pages("users.list", { limit: 900 })) out.users_list.push(...page.members.map((u) => u.id));

// A token the workspace does not take: the client's platform error.
try {
  await new WebClient("xoxb-not-the-token", { slackApiUrl, logger }).auth.test();
  out.invalid = "no error";
} catch (e) {
  out.invalid = e.code === ErrorCode.PlatformError ? e.data.error : `${e.code}: ${e.message}`;
}
console.log(JSON.stringify(out));
