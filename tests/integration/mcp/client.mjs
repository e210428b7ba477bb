// Drives cella's MCP server with the official MCP SDK client, for
// test_mcp.py. Usage:
//   node client.mjs http URL [TOKEN] < plan.json
//   node client.mjs stdio CELLA_BIN < plan.json     (CELLA_URL, CELLA_TOKEN in env)
// plan.json is a list of tool calls, {"name": ..., "arguments": {...}}; the
// string "$SID" in arguments is replaced by the sandbox_id the last
// create_sandbox call returned. Prints one JSON object: the server's
// info, its tools, and each call's result (or the error it threw).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [mode, target, token] = process.argv.slice(2);
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const plan = JSON.parse(Buffer.concat(chunks).toString() || '[]');

let transport;
if (mode === 'http') {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else {
  transport = new StdioClientTransport({ command: target, args: ['mcp'], env: process.env,
                                         stderr: 'inherit' });
}
const client = new Client({ name: 'cella-e2e', version: '1.0.0' });
const out = { results: [] };
try {
  await client.connect(transport);
  out.server = client.getServerVersion();
  out.protocolVersion = transport.protocolVersion ?? null;
  out.instructions = client.getInstructions() ?? null;
  out.tools = (await client.listTools()).tools;
  let sid = null;
  const subst = (v) => typeof v === 'string' ? v.replaceAll('$SID', sid ?? '') :
    Array.isArray(v) ? v.map(subst) :
    v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, subst(x)])) : v;
  for (const step of plan) {
    try {
      const r = await client.callTool({ name: step.name, arguments: subst(step.arguments ?? {}) });
      if (step.name === 'create_sandbox' && !r.isError) sid = JSON.parse(r.content[0].text).sandbox_id;
      out.results.push(r);
    } catch (e) {
      out.results.push({ thrown: String(e.message ?? e), code: e.code ?? null });
    }
  }
  await client.ping();
} catch (e) {
  out.fatal = String(e.stack ?? e);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + '\n');
