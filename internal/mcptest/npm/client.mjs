// A client of an MCP server, with the TypeScript SDK: it connects to the
// URL (Streamable HTTP) with a bearer token, lists the tools and the
// resources, calls a tool, reads a resource, and prints what it got as
// one JSON object. Used by Quarry's tests (internal/mcptest).
//
//   node client.mjs URL TOKEN TOOL ARGS_JSON [RESOURCE_URI]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, tool, args, resource] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "quarry-tests", version: "1.0.0" });
await client.connect(transport);
const out = { server: client.getServerVersion(), capabilities: client.getServerCapabilities() };
out.tools = (await client.listTools()).tools.map((t) => t.name);
out.call = await client.callTool({ name: tool, arguments: JSON.parse(args) });
out.resources = (await client.listResources()).resources.map((r) => r.uri);
if (resource) {
  const read = await client.readResource({ uri: resource });
  out.resource = read.contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType, length: c.text.length, json: JSON.parse(c.text) }));
}
await client.close();
console.log(JSON.stringify(out));
