// MCP 2026-07-28 ("modern", stateless) beside the legacy era on stdio, as
// raw JSON-RPC lines to `taskbox serve`: how the first request decides a
// process's era, the _meta envelope checks, the shape of modern results,
// the session-less tools, cancellation, the Tasks extension
// (io.modelcontextprotocol/tasks) and the SDK v2 client's "auto" mode.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import {
  MODERN_VERSION,
  TASKS_EXTENSION,
  callTool,
  connectedEra,
  envelope,
  scratchDir,
  startServer,
  tasksCapabilities,
  writeConfig,
} from "../lib/client.mjs";
import { spawnRaw, initialize } from "./raw.mjs";

const SERVER_INFO = "io.modelcontextprotocol/serverInfo";
const SUPPORTED = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const NO_SESSIONS = "In MCP 2026-07-28 there are no sessions, so no default sandbox: sandbox_id is required.";
const M = envelope();
const MT = envelope(tasksCapabilities);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let dir;
let cfg;
let env;
const procs = new Set();

before(() => {
  dir = scratchDir("taskbox-modern-stdio-");
  cfg = writeConfig(dir, {
    default: "local",
    providers: { local: { plugin: "local", settings: { root: join(dir, "state") } } },
  });
  // The supervisor is python3 from PATH: the system's, not a shim.
  env = { PATH: `/usr/bin:/bin:${process.env.PATH || ""}`, XDG_STATE_HOME: join(dir, "xdg") };
});

after(() => {
  for (const p of procs) p.child.kill("SIGKILL");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// A raw server process on the suite's config and state.
function raw() {
  const r = spawnRaw(["--config", cfg], { env });
  procs.add(r);
  return r;
}

async function done(r) {
  const { code, signal } = await r.close();
  procs.delete(r);
  assert.equal(signal, null);
  assert.equal(code, 0, "clean exit at end of input");
  assert.equal(r.trailing, "", "output ends with a complete line");
}

let nextId = 1;
// Sends a request and returns its answer.
async function ask(r, method, params, ms = 20000) {
  const id = nextId++;
  r.send(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
  return r.waitFor((m) => m.id === id && ("result" in m || "error" in m), ms);
}
// A request with the modern envelope (meta) in params._meta.
const modern = (r, method, params = {}, meta = M) => ask(r, method, { ...params, _meta: meta });

function errorOf(m, code, what) {
  assert.ok(m.error, `${what}: expected error ${code}, got ${JSON.stringify(m.result)?.slice(0, 400)}`);
  assert.equal(m.error.code, code, `${what}: ${JSON.stringify(m.error)}`);
  return m.error;
}

// A modern result: resultType (complete unless said) and serverInfo.
function modernResult(m, what, resultType = "complete") {
  assert.ok(m.result, `${what}: expected a result, got ${JSON.stringify(m.error)}`);
  assert.equal(m.result.resultType, resultType, `${what}: resultType`);
  const info = m.result._meta?.[SERVER_INFO];
  assert.equal(info?.name, "taskbox", `${what}: serverInfo in _meta: ${JSON.stringify(m.result._meta)}`);
  assert.equal(info.title, "taskbox");
  assert.match(info.version, /^\d+\.\d+/);
  return m.result;
}

// A legacy result: no resultType, no serverInfo in _meta.
function legacyResult(m, what) {
  assert.ok(m.result, `${what}: expected a result, got ${JSON.stringify(m.error)}`);
  assert.equal("resultType" in m.result, false, `${what}: no resultType in the legacy era`);
  assert.equal(m.result._meta?.[SERVER_INFO], undefined, `${what}: no serverInfo _meta in the legacy era`);
  return m.result;
}

function checkDiscover(result) {
  assert.deepEqual(result.supportedVersions, SUPPORTED);
  assert.deepEqual(result.capabilities, { tools: { listChanged: false }, extensions: { [TASKS_EXTENSION]: {} } });
  assert.equal(result.ttlMs, 60000);
  assert.equal(result.cacheScope, "public");
}

async function legacyHandshake(r, version = "2025-11-25") {
  const id = nextId++;
  r.send(initialize(id, version));
  const init = await r.waitFor((m) => m.id === id);
  assert.equal(init.result?.protocolVersion, version, JSON.stringify(init));
  r.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return init.result;
}

const toolResult = (m) => m.result.structuredContent ?? JSON.parse(m.result.content[0].text);

async function createSandbox(r) {
  const res = modernResult(await modern(r, "tools/call", { name: "create_sandbox", arguments: { timeout: 600 } }), "create_sandbox");
  assert.equal(res.isError, false, JSON.stringify(res));
  return toolResult({ result: res }).sandbox_id;
}

async function runCommand(r, sandbox_id, command) {
  const res = modernResult(await modern(r, "tools/call", { name: "run_command", arguments: { sandbox_id, command } }), `run_command ${command}`);
  assert.equal(res.isError, false, JSON.stringify(res));
  return toolResult({ result: res });
}

async function killSandbox(r, sandbox_id) {
  const res = modernResult(await modern(r, "tools/call", { name: "kill_sandbox", arguments: { sandbox_id } }), "kill_sandbox");
  assert.equal(res.isError, false, JSON.stringify(res));
}

test("a modern request as a process's first line is served, and pins the process to 2026-07-28", async () => {
  const r = raw();
  const list = modernResult(await modern(r, "tools/list"), "tools/list");
  assert.ok(list.tools.some((t) => t.name === "run_command"));
  // Pinned: ping is gone, a request without the envelope is refused.
  errorOf(await modern(r, "ping"), -32601, "ping");
  errorOf(await ask(r, "tools/list"), -32602, "tools/list without the envelope");
  await done(r);
});

test("server/discover is answered before either era and pins nothing: then initialize is a legacy session", async () => {
  const r = raw();
  const d = modernResult(await modern(r, "server/discover"), "server/discover");
  checkDiscover(d);
  const init = await legacyHandshake(r);
  assert.equal(init.serverInfo.name, "taskbox");
  assert.deepEqual(init.capabilities.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
  legacyResult(await ask(r, "tools/list"), "legacy tools/list");
  assert.deepEqual((await ask(r, "ping")).result, {}, "ping is served in the legacy era");
  await done(r);

  // Without the envelope, discover is -32602, and pins nothing either.
  const r2 = raw();
  const e = errorOf(await ask(r2, "server/discover"), -32602, "server/discover without _meta");
  assert.match(e.message, /protocolVersion/);
  await legacyHandshake(r2, "2024-11-05");
  await done(r2);
});

test("once modern, initialize is -32022 naming the supported version; requests need the envelope", async () => {
  const r = raw();
  modernResult(await modern(r, "tools/list"), "tools/list");
  for (const v of ["2025-11-25", "2024-11-05"]) {
    const m = await ask(r, "initialize", { protocolVersion: v, capabilities: {}, clientInfo: { name: "raw-test", version: "1.0.0" } });
    const e = errorOf(m, -32022, `initialize ${v}`);
    assert.deepEqual(e.data, { supported: [MODERN_VERSION], requested: v });
  }
  const e = errorOf(await ask(r, "tools/call", { name: "create_sandbox", arguments: {} }), -32602, "tools/call without _meta");
  assert.match(e.message, /_meta/);
  assert.match(e.message, /io\.modelcontextprotocol\/protocolVersion/);
  errorOf(await ask(r, "server/discover"), -32602, "discover without _meta");
  checkDiscover(modernResult(await modern(r, "server/discover"), "discover, enveloped"));
  await done(r);
});

test("methods removed in 2026-07-28 are -32601 when sent modern", async () => {
  const removed = [
    ["ping", {}],
    ["initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } }],
    ["logging/setLevel", { level: "info" }],
    ["tasks/result", { taskId: "local:x/0123456789abcdef0123456789abcdef" }],
    ["tasks/list", {}],
    ["resources/list", {}],
    ["resources/read", { uri: "file:///x" }],
    ["resources/subscribe", { uri: "file:///x" }],
    ["resources/templates/list", {}],
  ];
  // As the first line too: removed-as-modern is still modern.
  for (const [method, params] of removed) {
    const r = raw();
    const e = errorOf(await modern(r, method, params, MT), -32601, `${method} first`);
    assert.match(e.message, new RegExp(method.replace("/", "\\/")));
    modernResult(await modern(r, "tools/list"), `tools/list after ${method}`);
    errorOf(await ask(r, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } }), -32022, `initialize after ${method}`);
    await done(r);
  }
  const r = raw();
  modernResult(await modern(r, "tools/list"), "tools/list");
  for (const [method, params] of removed) errorOf(await modern(r, method, params, MT), -32601, method);
  await done(r);
});

test("an unsupported version is -32022 with data, and pins nothing", async () => {
  for (const v of ["2099-01-01", "2025-11-25"]) {
    const r = raw();
    const e = errorOf(await modern(r, "tools/list", {}, { ...M, "io.modelcontextprotocol/protocolVersion": v }), -32022, `version ${v}`);
    assert.equal(e.message, `Unsupported protocol version: ${v}`);
    assert.deepEqual(e.data, { supported: [MODERN_VERSION], requested: v });
    // Neither era was chosen: initialize still makes a legacy session.
    await legacyHandshake(r);
    await done(r);
  }
  const r = raw();
  errorOf(await modern(r, "tools/list", {}, { ...M, "io.modelcontextprotocol/protocolVersion": "2099-01-01" }), -32022, "2099");
  modernResult(await modern(r, "tools/list"), "then a supported one");
  await done(r);
});

test("an envelope without clientCapabilities is -32602", async () => {
  const noCaps = { ...M };
  delete noCaps["io.modelcontextprotocol/clientCapabilities"];
  const r = raw();
  const e = errorOf(await modern(r, "tools/list", {}, noCaps), -32602, "first line");
  assert.equal(e.message, "Invalid _meta envelope for protocol revision 2026-07-28: io.modelcontextprotocol/clientCapabilities: missing");
  modernResult(await modern(r, "tools/list"), "then a whole envelope");
  const again = errorOf(await modern(r, "tools/call", { name: "create_sandbox", arguments: {} }, noCaps), -32602, "once modern");
  assert.equal(again.message, e.message);
  const bad = errorOf(await modern(r, "tools/list", {}, { ...M, "io.modelcontextprotocol/clientCapabilities": 5 }), -32602, "not an object");
  assert.match(bad.message, /clientCapabilities/);
  await done(r);
});

// An envelope (client capabilities, client info) without
// io.modelcontextprotocol/protocolVersion: on a fresh process or a modern
// one a request whose envelope misses its version (-32602, nothing
// pinned); on a legacy process a legacy request with _meta.
test("an envelope without protocolVersion: -32602 on a fresh or modern process, legacy on a legacy one", async () => {
  const noVersion = { ...M };
  delete noVersion["io.modelcontextprotocol/protocolVersion"];

  const fresh = raw();
  const e = errorOf(await modern(fresh, "tools/list", {}, noVersion), -32602, "fresh process");
  assert.match(e.message, /io\.modelcontextprotocol\/protocolVersion/);
  // Nothing was pinned: either era may follow.
  modernResult(await modern(fresh, "tools/list"), "a modern request after it");
  await done(fresh);
  const fresh2 = raw();
  errorOf(await modern(fresh2, "tools/list", {}, noVersion), -32602, "fresh process");
  await legacyHandshake(fresh2);
  legacyResult(await modern(fresh2, "tools/list", {}, noVersion), "legacy after it");
  await done(fresh2);

  const mod = raw();
  modernResult(await modern(mod, "tools/list"), "tools/list");
  const m = errorOf(await modern(mod, "tools/list", {}, noVersion), -32602, "modern process");
  assert.match(m.message, /io\.modelcontextprotocol\/protocolVersion/);
  await done(mod);
});

test("every modern result has resultType and serverInfo; tools/list and discover are cacheable", async () => {
  const r = raw();
  const d = modernResult(await modern(r, "server/discover"), "server/discover");
  checkDiscover(d);
  const list = modernResult(await modern(r, "tools/list"), "tools/list");
  assert.equal(list.ttlMs, 60000, "tools/list ttlMs");
  assert.equal(list.cacheScope, "public", "tools/list cacheScope");
  const sb = await createSandbox(r);
  const ran = await runCommand(r, sb, "echo hi");
  assert.equal(ran.stdout, "hi\n");
  // A tool error is a modern result too.
  const failing = modernResult(await modern(r, "tools/call", { name: "read_file", arguments: { sandbox_id: sb, path: "no/such" } }), "read_file missing");
  assert.equal(failing.isError, true);
  const started = modernResult(await modern(r, "tools/call", { name: "start_task", arguments: { sandbox_id: sb, command: "true" } }), "start_task");
  assert.equal(started.isError, false);
  assert.equal(started.structuredContent.sandbox_id, sb);
  modernResult(await modern(r, "tools/call", { name: "list_tasks", arguments: { sandbox_id: sb } }), "list_tasks");
  // An unknown tool is a protocol error, as in the legacy era.
  errorOf(await modern(r, "tools/call", { name: "no_such_tool", arguments: {} }), -32602, "unknown tool");
  await killSandbox(r, sb);
  await done(r);
});

// sandbox_id is required on every tool that has it; the sentence saying why
// is on those whose sandbox_id the session default made optional (the
// legacy list), not on those that always required it (kill_sandbox,
// get_task, cancel_task, remove_task).
test("modern tools/list: sandbox_id is required wherever it is a property; where it was optional, the description says why", async () => {
  const l = raw();
  await legacyHandshake(l);
  const legacy = legacyResult(await ask(l, "tools/list"), "legacy tools/list").tools;
  await done(l);
  const wasOptional = legacy
    .filter((t) => t.inputSchema.properties?.sandbox_id && !t.inputSchema.required?.includes("sandbox_id"))
    .map((t) => t.name)
    .sort();
  assert.deepEqual(wasOptional, ["list_tasks", "read_file", "run_command", "start_task", "write_file"]);
  for (const t of legacy) assert.equal(t.description.includes(NO_SESSIONS), false, `legacy ${t.name}`);

  const r = raw();
  const { tools } = modernResult(await modern(r, "tools/list"), "tools/list");
  await done(r);
  const withSandbox = tools.filter((t) => t.inputSchema.properties?.sandbox_id);
  assert.deepEqual(withSandbox.map((t) => t.name).sort(), [
    "cancel_task", "get_task", "kill_sandbox", "list_tasks", "read_file", "remove_task", "resize_task", "run_command", "start_task",
    "write_file", "write_task",
  ]);
  for (const t of withSandbox)
    assert.ok(t.inputSchema.required?.includes("sandbox_id"), `${t.name}: required ${JSON.stringify(t.inputSchema.required)}`);
  const explained = tools.filter((t) => t.description.includes(NO_SESSIONS)).map((t) => t.name).sort();
  assert.deepEqual(explained, wasOptional);
  // The legacy list is otherwise the same tools.
  assert.deepEqual(tools.map((t) => t.name).sort(), legacy.map((t) => t.name).sort());
});

test("modern tools have no default sandbox: a tool error naming sandbox_id", async () => {
  const r = raw();
  await createSandbox(r); // not a default either
  for (const [name, args] of [
    ["run_command", { command: "true" }],
    ["read_file", { path: "x" }],
    ["write_file", { path: "x", content: "y" }],
    ["start_task", { command: "true" }],
    ["list_tasks", {}],
  ]) {
    const res = modernResult(await modern(r, "tools/call", { name, arguments: args }), name);
    assert.equal(res.isError, true, `${name}: ${JSON.stringify(res)}`);
    assert.match(res.content[0].text, /sandbox_id: required: MCP 2026-07-28 has no sessions, so there is no default sandbox; pass the sandbox_id that create_sandbox returned/);
  }
  await done(r);
});

test("a legacy-pinned process serves enveloped requests as legacy ones; server/discover stays modern", async () => {
  const r = raw();
  await legacyHandshake(r);
  const list = legacyResult(await modern(r, "tools/list"), "enveloped tools/list");
  assert.equal("ttlMs" in list, false);
  const run = legacyResult(await modern(r, "tools/call", { name: "run_command", arguments: { command: "echo legacy" } }), "enveloped run_command");
  // The session's default sandbox: legacy semantics.
  assert.equal(run.isError, false, JSON.stringify(run));
  assert.equal(run.structuredContent.stdout, "legacy\n");
  assert.deepEqual(legacyResult(await modern(r, "ping"), "enveloped ping"), {});
  checkDiscover(modernResult(await modern(r, "server/discover"), "discover on a legacy process"));
  legacyResult(await ask(r, "tools/list"), "plain tools/list");
  await done(r);
});

test("notifications/cancelled carrying the full envelope cancels a modern run_command: no answer comes", { timeout: 60000 }, async () => {
  const r = raw();
  const sb = await createSandbox(r);
  r.send({
    jsonrpc: "2.0",
    id: "long",
    method: "tools/call",
    params: { name: "run_command", arguments: { sandbox_id: sb, command: "echo $$ > run.pid; exec sleep 60" }, _meta: M },
  });
  let pid = "";
  for (let i = 0; i < 200 && !pid; i++) {
    pid = (await runCommand(r, sb, "cat run.pid 2>/dev/null || true")).stdout.trim();
    if (!pid) await sleep(100);
  }
  assert.match(pid, /^\d+$/, "the command started");
  r.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "long", reason: "test", _meta: M } });
  let state = "alive";
  for (let i = 0; i < 200 && state !== "gone"; i++) {
    state = (await runCommand(r, sb, `kill -0 ${pid} 2>/dev/null && echo alive || echo gone`)).stdout.trim();
    if (state !== "gone") await sleep(100);
  }
  assert.equal(state, "gone", "the cancelled command was stopped");
  await sleep(500);
  modernResult(await modern(r, "tools/list"), "the server serves on");
  assert.deepEqual(r.messages.filter((m) => m.id === "long"), [], "no answer for the cancelled call");
  await killSandbox(r, sb);
  await done(r);
  assert.deepEqual(r.messages.filter((m) => m.id === "long"), [], "not even at the end");
});

test("Tasks extension, raw: create, get until completed, cancel, read from a fresh process, errors", { timeout: 90000 }, async () => {
  const r = raw();
  const d = modernResult(await modern(r, "server/discover"), "discover");
  assert.deepEqual(d.capabilities.extensions, { [TASKS_EXTENSION]: {} });
  const sb = await createSandbox(r);

  // run_command declared with the extension: a flat CreateTaskResult.
  const created = modernResult(
    await modern(r, "tools/call", { name: "run_command", arguments: { sandbox_id: sb, command: "sleep 1; echo done" } }, MT),
    "run_command as a task",
    "task",
  );
  assert.deepEqual(Object.keys(created).sort(), [
    "_meta", "createdAt", "lastUpdatedAt", "pollIntervalMs", "resultType", "status", "statusMessage", "taskId", "ttlMs",
  ]);
  assert.equal(created.status, "working");
  assert.equal(typeof created.statusMessage, "string");
  assert.equal(created.ttlMs, null);
  assert.equal(created.pollIntervalMs, 500);
  assert.ok(created.taskId.startsWith(`${sb}/`), created.taskId);
  assert.match(created.taskId.slice(sb.length + 1), /^[0-9a-f]{32}$/);
  assert.ok(!Number.isNaN(Date.parse(created.createdAt)));
  let got;
  for (let i = 0; i < 120; i++) {
    got = modernResult(await modern(r, "tasks/get", { taskId: created.taskId }, MT), "tasks/get");
    assert.equal(got.taskId, created.taskId);
    assert.equal(got.createdAt, created.createdAt);
    if (got.status !== "working") break;
    await sleep(got.pollIntervalMs);
  }
  assert.equal(got.status, "completed", JSON.stringify(got));
  assert.equal(got.result.resultType, "complete", "the inlined result is a full 2026 CallToolResult");
  assert.equal(got.result.isError, false);
  assert.equal(got.result.structuredContent.stdout, "done\n");
  assert.equal(got.result.structuredContent.exit_code, 0);
  assert.equal(got.error, undefined);

  // tasks/cancel on a running start_task.
  const long = modernResult(
    await modern(r, "tools/call", { name: "start_task", arguments: { sandbox_id: sb, command: "sleep 60" } }, MT),
    "start_task as a task",
    "task",
  );
  const ack = modernResult(await modern(r, "tasks/cancel", { taskId: long.taskId }, MT), "tasks/cancel");
  assert.deepEqual(Object.keys(ack).sort(), ["_meta", "resultType"], JSON.stringify(ack));
  const cancelled = modernResult(await modern(r, "tasks/get", { taskId: long.taskId }, MT), "tasks/get after cancel");
  assert.equal(cancelled.status, "cancelled", JSON.stringify(cancelled));
  const ack2 = modernResult(await modern(r, "tasks/cancel", { taskId: long.taskId }, MT), "a second tasks/cancel");
  assert.deepEqual(Object.keys(ack2).sort(), ["_meta", "resultType"]);

  // Errors: not declared, unknown, malformed, input that is never asked.
  const undeclared = errorOf(await modern(r, "tasks/get", { taskId: created.taskId }), -32021, "tasks/get without the extension");
  assert.deepEqual(undeclared.data, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  errorOf(await modern(r, "tasks/cancel", { taskId: long.taskId }), -32021, "tasks/cancel without the extension");
  errorOf(await modern(r, "tasks/get", { taskId: `${sb}/${"0".repeat(32)}` }, MT), -32602, "an unknown taskId");
  errorOf(await modern(r, "tasks/get", { taskId: "nope" }, MT), -32602, "a malformed taskId");
  errorOf(await modern(r, "tasks/update", { taskId: long.taskId, inputResponses: {} }, MT), -32602, "tasks/update");
  await done(r);

  // A fresh process on the same state finds both tasks by their ids.
  const r2 = raw();
  const again = modernResult(await modern(r2, "tasks/get", { taskId: created.taskId }, MT), "tasks/get from a fresh process");
  assert.equal(again.status, "completed");
  assert.equal(again.result.structuredContent.stdout, "done\n");
  const again2 = modernResult(await modern(r2, "tasks/get", { taskId: long.taskId }, MT), "the cancelled one from a fresh process");
  assert.equal(again2.status, "cancelled");
  await killSandbox(r2, sb);
  await done(r2);
});

test("the SDK v2 client in auto mode connects over stdio as modern and calls tools", { timeout: 60000 }, async () => {
  const s = await startServer({ client: "v2-auto", transport: "stdio", args: ["--config", cfg], env });
  try {
    assert.equal(s.era, "modern");
    assert.equal(connectedEra(s.client), "modern", "the probe chose 2026-07-28");
    assert.equal(s.client.getServerVersion()?.name, "taskbox", "serverInfo from discover");
    assert.deepEqual(s.client.getServerCapabilities().extensions, { [TASKS_EXTENSION]: {} });
    const { tools } = await s.client.listTools();
    assert.ok(tools.some((t) => t.name === "run_command"));
    const created = await callTool(s.client, "create_sandbox", { timeout: 600 });
    assert.equal(created.isError, false);
    const sb = created.structuredContent.sandbox_id;
    const ran = await callTool(s.client, "run_command", { sandbox_id: sb, command: "echo auto" });
    assert.equal(ran.isError, false);
    assert.equal(ran.structuredContent.stdout, "auto\n");
    // Modern for real: no session default.
    const none = await callTool(s.client, "run_command", { command: "echo auto" });
    assert.equal(none.isError, true);
    assert.match(none.content[0].text, /sandbox_id: required/);
    const killed = await callTool(s.client, "kill_sandbox", { sandbox_id: sb });
    assert.equal(killed.isError, false);
  } finally {
    await s.close();
  }
});
