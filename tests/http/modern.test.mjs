// MCP 2026-07-28 on the Streamable HTTP endpoint, on the wire: raw POSTs
// against `taskbox serve --http`, each case of the revision's tables
// answered with the status and the JSON-RPC error it asks for, beside
// legacy sessions on the same endpoint; and the SDK v2 client pinned to
// 2026-07-28 and in "auto" mode against it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import net from "node:net";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { scratchDir, taskboxCommand, writeConfig } from "../lib/client.mjs";

const MODERN = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const TOKEN = randomBytes(24).toString("hex");

async function serve() {
  const dir = scratchDir("taskbox-modern-http-");
  const cfg = writeConfig(dir, { default: "local", providers: { local: { plugin: "local", settings: { root: join(dir, "state") } } } });
  const { command, args } = taskboxCommand(["serve", "--http", "127.0.0.1:0", "--config", cfg]);
  const child = spawn(command, args, { env: { ...process.env, TASKBOX_HTTP_TOKEN: TOKEN }, stdio: ["ignore", "inherit", "pipe"] });
  const exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    let seen = "";
    child.stderr.on("data", (d) => {
      process.stderr.write(d);
      seen += d;
      const m = /listening on (http:\/\/\S+)/.exec(seen);
      if (m) resolve(m[1]);
    });
    exited.then((e) => reject(new Error(`server exited (${e.signal || e.code}): ${seen}`)));
  });
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      const e = await exited;
      assert.equal(e.code, 0, `exit after SIGTERM: ${e.signal || e.code}`);
    },
  };
}

const envelope = (caps = {}, version = MODERN) => ({
  "io.modelcontextprotocol/protocolVersion": version,
  "io.modelcontextprotocol/clientCapabilities": caps,
});

// The headers a modern request must carry, for method and params.
function headersFor(method, params = {}, version = MODERN) {
  const name = params.name ?? params.taskId;
  return { "mcp-protocol-version": version, "mcp-method": method, ...(name !== undefined ? { "mcp-name": name } : {}) };
}

// POSTs body with headers; resolves { status, type, messages, last }.
async function post(s, body, headers = {}) {
  const r = await fetch(s.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${TOKEN}`, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const type = r.headers.get("content-type") || "";
  const text = await r.text();
  let messages = [];
  if (type.startsWith("text/event-stream"))
    messages = text.split("\n\n").filter(Boolean).map((f) => JSON.parse(f.split("\n").find((l) => l.startsWith("data: ")).slice(6)));
  else if (text) messages = [JSON.parse(text)];
  return { status: r.status, type, messages, last: messages.at(-1), headers: r.headers };
}

// POSTs body over a raw socket with header lines as given; resolves with
// the whole answer (the connection is closed after it).
function rawPost(s, body, lines) {
  const u = new URL(s.url);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname, () => {
      sock.write([
        `POST ${u.pathname} HTTP/1.1`, `Host: ${u.host}`, "Connection: close",
        "Content-Type: application/json", "Accept: application/json, text/event-stream",
        `Authorization: Bearer ${TOKEN}`, ...lines, `Content-Length: ${Buffer.byteLength(text)}`, "", text,
      ].join("\r\n"));
    });
    let answer = "";
    sock.on("data", (d) => (answer += d));
    sock.on("end", () => resolve(answer));
    sock.on("error", reject);
  });
}

// A well-formed modern request.
function modern(s, id, method, params = {}, { caps, headers } = {}) {
  const body = { jsonrpc: "2.0", id, method, params: { ...params, _meta: { ...envelope(caps), ...(params._meta || {}) } } };
  return post(s, body, { ...headersFor(method, params), ...(headers || {}) });
}

function result(r) {
  assert.equal(r.status, 200, JSON.stringify(r.last));
  assert.ok(r.last.result, JSON.stringify(r.last));
  return r.last.result;
}

function toolData(r) {
  const res = result(r);
  assert.equal(res.resultType, "complete");
  assert.equal(res.isError, false, JSON.stringify(res));
  return res.structuredContent;
}

test("discover, tools/list and tools/call: resultType, serverInfo, cacheable lists, no session", { timeout: 60000 }, async () => {
  const s = await serve();
  try {
    const d = await modern(s, 1, "server/discover");
    const disc = result(d);
    assert.ok(disc.supportedVersions.includes(MODERN) && disc.supportedVersions.includes("2025-11-25"), "both eras");
    assert.deepEqual(disc.capabilities.extensions, { [TASKS]: {} });
    assert.equal(disc.resultType, "complete");
    assert.equal(typeof disc.ttlMs, "number");
    assert.ok(["public", "private"].includes(disc.cacheScope));
    assert.equal(disc._meta["io.modelcontextprotocol/serverInfo"].name, "taskbox");
    assert.equal(d.headers.get("mcp-session-id"), null, "no session");

    const list = result(await modern(s, 2, "tools/list"));
    assert.equal(list.resultType, "complete");
    assert.equal(typeof list.ttlMs, "number");
    const run = list.tools.find((t) => t.name === "run_command");
    assert.ok(run.inputSchema.required.includes("sandbox_id"), "sandbox_id is required without sessions");

    const sb = toolData(await modern(s, 3, "tools/call", { name: "create_sandbox", arguments: { timeout: 600 } })).sandbox_id;
    const out = toolData(await modern(s, 4, "tools/call", { name: "run_command", arguments: { sandbox_id: sb, command: "echo hi" } }));
    assert.equal(out.stdout, "hi\n");
    // No session default sandbox: a tool error that names sandbox_id.
    const nodef = result(await modern(s, 5, "tools/call", { name: "run_command", arguments: { command: "true" } }));
    assert.equal(nodef.isError, true);
    assert.match(nodef.content[0].text, /sandbox_id: required/);
    // An unknown tool: 200 with -32602.
    const unknown = await modern(s, 6, "tools/call", { name: "nope", arguments: {} });
    assert.equal(unknown.status, 200);
    assert.equal(unknown.last.error.code, -32602);
    // Progress, asked for with a progressToken: SSE, notifications first.
    const t = toolData(await modern(s, 7, "tools/call", { name: "start_task", arguments: { sandbox_id: sb, command: "printf ab; sleep 30" } }));
    const w = await modern(s, 8, "tools/call", {
      name: "get_task", arguments: { sandbox_id: sb, task_id: t.task_id, wait: 2, stdout_offset: 2 }, _meta: { progressToken: "p1" },
    });
    assert.equal(w.status, 200);
    assert.ok(w.type.startsWith("text/event-stream"), w.type);
    assert.equal(w.messages[0].method, "notifications/progress");
    assert.equal(w.messages[0].params.progressToken, "p1");
    assert.equal(w.last.result.resultType, "complete");
    // Without a progressToken: one JSON answer.
    const quiet = await modern(s, 9, "tools/call", { name: "get_task", arguments: { sandbox_id: sb, task_id: t.task_id, wait: 1, stdout_offset: 2 } });
    assert.ok(quiet.type.startsWith("application/json"), quiet.type);
    toolData(await modern(s, 10, "tools/call", { name: "kill_sandbox", arguments: { sandbox_id: sb } }));
  } finally {
    await s.stop();
  }
});

test("the revision's refusals: headers, envelope, versions, removed methods, batches, capabilities", { timeout: 60000 }, async () => {
  const s = await serve();
  try {
    const params = { _meta: envelope() };
    const body = (id, method, p = params) => ({ jsonrpc: "2.0", id, method, params: p });
    const check = (r, status, code, what) => {
      assert.equal(r.status, status, `${what}: ${JSON.stringify(r.last)}`);
      assert.equal(r.last.error.code, code, `${what}: ${JSON.stringify(r.last)}`);
    };
    // Headers that do not repeat the body: 400, -32020, the request's id.
    let r = await post(s, body(1, "tools/list"), { "mcp-method": "tools/list" });
    check(r, 400, -32020, "no MCP-Protocol-Version");
    assert.equal(r.last.id, 1);
    assert.equal(r.last.error.data.mismatch.name, "MCP-Protocol-Version");
    check(await post(s, body(2, "tools/list"), { "mcp-protocol-version": "2025-11-25", "mcp-method": "tools/list" }), 400, -32020, "version differs");
    check(await post(s, body(3, "tools/list"), { "mcp-protocol-version": MODERN }), 400, -32020, "no Mcp-Method");
    check(await post(s, body(4, "tools/list"), { "mcp-protocol-version": MODERN, "mcp-method": "tools/call" }), 400, -32020, "method differs");
    const call = { name: "create_sandbox", arguments: {}, _meta: envelope() };
    check(await post(s, body(5, "tools/call", call), { "mcp-protocol-version": MODERN, "mcp-method": "tools/call" }), 400, -32020, "no Mcp-Name");
    check(await post(s, body(6, "tools/call", call), { ...headersFor("tools/call", call), "mcp-name": "kill_sandbox" }), 400, -32020, "name differs");
    check(await post(s, body(7, "tools/call", call), { ...headersFor("tools/call", call), "mcp-name": "=?base64?!!!?=" }), 400, -32020, "bad base64");
    // Headers and body disagreeing comes before the version's support.
    r = await post(s, body(21, "tools/list", { _meta: envelope({}, "v999") }), headersFor("tools/list"));
    check(r, 400, -32020, "an unknown version in the body only");
    // Whitespace around a header's value is not part of it.
    // (fetch trims values itself: the request goes out raw.)
    const padded = await rawPost(s, body(22, "tools/call", call), [
      `MCP-Protocol-Version: ${MODERN}  `, "Mcp-Method:   tools/call\t", "Mcp-Name: \t create_sandbox  "]);
    assert.match(padded, /^HTTP\/1\.1 200 /, padded);
    // The base64 form, decoded, matches.
    const b64 = `=?base64?${Buffer.from("create_sandbox").toString("base64")}?=`;
    const made = await post(s, body(8, "tools/call", call), { ...headersFor("tools/call", call), "mcp-name": b64 });
    assert.equal(made.status, 200, JSON.stringify(made.last));
    assert.equal(made.last.result.isError, false);

    // The envelope: unsupported version 400/-32022 with the versions;
    // capabilities missing 400/-32602; a modern header with no claim in
    // the body 400/-32602.
    r = await post(s, body(9, "tools/list", { _meta: envelope({}, "2099-01-01") }), headersFor("tools/list", {}, "2099-01-01"));
    check(r, 400, -32022, "unsupported version");
    assert.deepEqual(r.last.error.data, { supported: [MODERN], requested: "2099-01-01" });
    r = await post(s, body(10, "tools/list", { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } }), headersFor("tools/list"));
    check(r, 400, -32602, "no clientCapabilities");
    assert.match(r.last.error.message, /clientCapabilities/);
    check(await post(s, body(11, "tools/list", {}), headersFor("tools/list")), 400, -32602, "header without a body claim");

    // Removed methods: 404, -32601.
    for (const [id, method] of [[12, "ping"], [13, "initialize"], [14, "logging/setLevel"], [15, "tasks/result"], [16, "tasks/list"], [17, "resources/subscribe"]])
      check(await modern(s, id, method, method === "initialize" ? { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } } : {}), 404, -32601, method);
    // A batch: 400, -32600. An unparseable body: 400, -32700.
    check(await post(s, [body(18, "tools/list")], headersFor("tools/list")), 400, -32600, "batch");
    check(await post(s, "{nope", headersFor("tools/list")), 400, -32700, "parse error");
    // tasks/* without declaring the extension: 400, -32021.
    r = await modern(s, 19, "tasks/get", { taskId: "local:x/y" });
    check(r, 400, -32021, "undeclared extension");
    assert.deepEqual(r.last.error.data.requiredCapabilities.extensions, { [TASKS]: {} });
    // Declared, an unknown task: 200, -32602.
    check(await modern(s, 20, "tasks/get", { taskId: "local:0123/4567" }, { caps: { extensions: { [TASKS]: {} } } }), 200, -32602, "unknown task");
    // A notification with an envelope: 202.
    const n = await post(s, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99, _meta: envelope() } }, headersFor("notifications/cancelled"));
    assert.equal(n.status, 202);
    // GET and DELETE are not the revision's: 405 / 400.
    const g = await fetch(s.url, { headers: { authorization: `Bearer ${TOKEN}`, accept: "text/event-stream" } });
    assert.equal(g.status, 405);
    await g.text();
  } finally {
    await s.stop();
  }
});

test("the Tasks extension over HTTP: create, poll, inline result, cancel, ack", { timeout: 90000 }, async () => {
  const s = await serve();
  const caps = { extensions: { [TASKS]: {} } };
  try {
    const sb = toolData(await modern(s, 1, "tools/call", { name: "create_sandbox", arguments: { timeout: 600 } })).sandbox_id;
    const created = result(await modern(s, 2, "tools/call", { name: "run_command", arguments: { sandbox_id: sb, command: "sleep 1; echo done; exit 3" } }, { caps }));
    assert.equal(created.resultType, "task");
    assert.match(created.taskId, new RegExp(`^${sb}/[0-9a-f]{32}$`));
    assert.equal(created.status, "working");
    assert.equal(created.ttlMs, null);
    assert.equal(typeof created.pollIntervalMs, "number");
    assert.equal(created.ttl, undefined, "no legacy field names");
    let got;
    for (let id = 3; ; id++) {
      got = result(await modern(s, id, "tasks/get", { taskId: created.taskId }, { caps }));
      assert.equal(got.resultType, "complete");
      if (got.status !== "working") break;
      await new Promise((r) => setTimeout(r, created.pollIntervalMs));
      assert.ok(id < 100);
    }
    // A command that failed ran to its end: completed, its result isError.
    assert.equal(got.status, "completed");
    assert.equal(got.result.resultType, "complete");
    assert.equal(got.result.isError, true);
    assert.equal(JSON.parse(got.result.content[0].text).stdout, "done\n");
    assert.equal(got.result._meta?.["io.modelcontextprotocol/related-task"], undefined);

    const long = result(await modern(s, 200, "tools/call", { name: "start_task", arguments: { sandbox_id: sb, command: "sleep 120" } }, { caps }));
    assert.equal(long.resultType, "task");
    const ack = result(await modern(s, 201, "tasks/cancel", { taskId: long.taskId }, { caps }));
    assert.deepEqual(Object.keys(ack).filter((k) => k !== "_meta"), ["resultType"]);
    const after = result(await modern(s, 202, "tasks/get", { taskId: long.taskId }, { caps }));
    assert.equal(after.status, "cancelled");
    // Idempotent: a second cancel of an ended task is the same ack.
    assert.equal(result(await modern(s, 203, "tasks/cancel", { taskId: long.taskId }, { caps })).resultType, "complete");
    // tasks/update: refused, the task needs no input.
    const upd = await modern(s, 204, "tasks/update", { taskId: long.taskId, inputResponses: {} }, { caps });
    assert.equal(upd.last.error.code, -32602);
    // Without the declaration the same tool runs at once.
    const sync = toolData(await modern(s, 205, "tools/call", { name: "run_command", arguments: { sandbox_id: sb, command: "echo now" } }));
    assert.equal(sync.stdout, "now\n");
  } finally {
    await s.stop();
  }
});

test("legacy sessions beside: initialize, Mcp-Session-Id, ping; an enveloped request with a session id is still stateless", { timeout: 60000 }, async () => {
  const s = await serve();
  try {
    const init = await post(s, { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } } });
    assert.equal(init.status, 200);
    assert.equal(init.last.result.protocolVersion, "2025-11-25");
    assert.equal(init.last.result.resultType, undefined, "legacy results have no resultType");
    const sid = init.headers.get("mcp-session-id");
    assert.match(sid, /^[0-9a-f]{32}$/);
    const ping = await post(s, { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" });
    assert.deepEqual(ping.last.result, {});
    // The body decides: an enveloped tools/list is modern even with the id.
    const list = result(await modern(s, 3, "tools/list", {}, { headers: { "mcp-session-id": sid } }));
    assert.equal(list.resultType, "complete");
  } finally {
    await s.stop();
  }
});

test("the SDK v2 client, pinned to 2026-07-28 and in auto mode", { timeout: 60000 }, async () => {
  const s = await serve();
  try {
    for (const mode of [{ pin: MODERN }, "auto"]) {
      const client = new Client({ name: "modern-http-test", version: "1" }, { versionNegotiation: { mode } });
      await client.connect(new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
      assert.equal(client.getServerVersion()?.name, "taskbox", `serverInfo (${JSON.stringify(mode)})`);
      assert.equal(client.getProtocolEra(), "modern", `the era chosen (${JSON.stringify(mode)})`);
      const tools = await client.listTools();
      assert.ok(tools.tools.some((t) => t.name === "start_task"));
      const sb = (await client.callTool({ name: "create_sandbox", arguments: { timeout: 600 } })).structuredContent.sandbox_id;
      const r = await client.callTool({ name: "run_command", arguments: { sandbox_id: sb, command: "echo v2" } });
      assert.equal(r.structuredContent.stdout, "v2\n");
      await client.callTool({ name: "kill_sandbox", arguments: { sandbox_id: sb } });
      await client.close();
    }
  } finally {
    await s.stop();
  }
});
