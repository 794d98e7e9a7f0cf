// The official requester of the Tasks extension of MCP 2026-07-28
// (@modelcontextprotocol/ext-tasks) on a real SDK v2 client in "auto" mode
// against `taskbox serve` over stdio: tool calls that become tasks, their
// results, cancellation, and a task read back by a fresh server process.
// SDK v2 2.4.0 itself rejects resultType "task", so the session gets a raw
// JSON-RPC path on the client's own transport (rawChannel in
// tests/lib/client.mjs), as the extension's own client example does.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import {
  CLIENT_INFO,
  MODERN_VERSION,
  TASKS_EXTENSION,
  callTool,
  connectedEra,
  rawChannel,
  scratchDir,
  startServer,
  tasksCapabilities,
  writeConfig,
} from "../lib/client.mjs";

let dir;
let cfg;
let env;
const servers = new Set();
const sessions = new Set();
const sandboxes = new Set();

before(() => {
  dir = scratchDir("taskbox-ext-tasks-");
  cfg = writeConfig(dir, {
    default: "local",
    providers: { local: { plugin: "local", settings: { root: join(dir, "state") } } },
  });
  env = { PATH: `/usr/bin:/bin:${process.env.PATH || ""}`, XDG_STATE_HOME: join(dir, "xdg") };
});

after(async () => {
  for (const s of sessions) await s.close().catch(() => {});
  if (sandboxes.size) {
    const s = await server().catch(() => null);
    if (s) for (const id of sandboxes) await callTool(s.client, "kill_sandbox", { sandbox_id: id }).catch(() => {});
  }
  for (const s of servers) await s.close().catch(() => {});
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// An SDK v2 client in auto mode on a server process of its own.
async function server() {
  const s = await startServer({ client: "v2-auto", transport: "stdio", args: ["--config", cfg], env });
  servers.add(s);
  return s;
}

// A task session on s, with a raw path on s's transport.
function taskSession(s, raw, errors) {
  const session = createTaskSessionFromClient(s.client, {
    endpointId: "taskbox-tests",
    rawDispatch: raw.dispatch,
    v2RequestFraming: { protocolVersion: MODERN_VERSION, clientInfo: CLIENT_INFO, clientCapabilities: {} },
    onInputRequest: async (request) => {
      throw new Error(`taskbox asked for input: ${JSON.stringify(request)}`);
    },
    onError: (e) => errors.push(e),
  });
  sessions.add(session);
  return session;
}

async function closeSession(session) {
  sessions.delete(session);
  await session.close();
}

async function closeServer(s) {
  servers.delete(s);
  await s.close();
}

function ok(result, what) {
  assert.equal(result.isError, false, `${what}: ${result.content?.[0]?.text}`);
  return result.structuredContent;
}

// What the first test leaves for the second: task ids and their sandbox.
const left = {};

test("ext-tasks on an SDK v2 client (auto): run_command as a task, settled, and a long one cancelled", { timeout: 90000 }, async () => {
  const a = await server();
  assert.equal(connectedEra(a.client), "modern", "auto mode chose 2026-07-28");
  assert.deepEqual(a.client.getServerCapabilities().extensions, { [TASKS_EXTENSION]: {} });
  const errors = [];
  const raw = rawChannel(a);
  const session = taskSession(a, raw, errors);
  assert.equal(session.capabilities.execution, true, JSON.stringify(session.capabilities));
  assert.equal(session.capabilities.cancellation, true, JSON.stringify(session.capabilities));

  // A tool without task support is immediate, even through the session.
  const mk = await session.callTool("create_sandbox", { timeout: 600 });
  assert.equal(mk.kind, "immediate");
  const made = await mk.settle();
  assert.equal(made.outcome.status, "completed");
  const sb = resultFromTaskOutcome(made.outcome).structuredContent.sandbox_id;
  assert.match(sb, /^local:/);
  sandboxes.add(sb);

  // run_command becomes a task; settle() follows it to its result.
  const ex = await session.callTool("run_command", { sandbox_id: sb, command: "sleep 1; echo done" });
  assert.equal(ex.kind, "task");
  const taskId = ex.handle.taskId;
  assert.ok(taskId.startsWith(`${sb}/`), taskId);
  assert.match(taskId.slice(sb.length + 1), /^[0-9a-f]{32}$/);
  const events = [];
  const { outcome, lastTask } = await ex.settle({ onEvent: (e) => events.push(e) });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome));
  assert.equal(lastTask?.status, "completed");
  const result = resultFromTaskOutcome(outcome);
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.stdout, "done\n");
  assert.equal(result.structuredContent.exit_code, 0);
  assert.ok(events.some((e) => e.type === "task" && e.task.status === "working"), "a working task was seen first");

  // A failing command is a completed task whose result is a tool error.
  const bad = await session.callTool("run_command", { sandbox_id: sb, command: "echo out; exit 3" });
  assert.equal(bad.kind, "task");
  const badDone = await bad.settle();
  assert.equal(badDone.outcome.status, "completed", JSON.stringify(badDone.outcome));
  const badResult = resultFromTaskOutcome(badDone.outcome);
  assert.equal(badResult.isError, true);
  // A tool error carries its body as text (no structuredContent).
  const badBody = JSON.parse(badResult.content[0].text);
  assert.equal(badBody.exit_code, 3);
  assert.equal(badBody.stdout, "out\n");

  // A long one, cancelled with execution.cancel(): outcome cancelled.
  const long = await session.callTool("run_command", { sandbox_id: sb, command: "sleep 60" });
  assert.equal(long.kind, "task");
  const longId = long.handle.taskId;
  const settling = long.settle();
  await new Promise((r) => setTimeout(r, 300));
  await long.cancel();
  const t0 = Date.now();
  const cancelled = await settling;
  assert.equal(cancelled.outcome.status, "cancelled", JSON.stringify(cancelled.outcome));
  assert.ok(Date.now() - t0 < 20000, "cancelled well before the command's 60 s");
  // The task it was: cancelled in taskbox too.
  const g = ok(await callTool(a.client, "get_task", { sandbox_id: sb, task_id: longId.slice(sb.length + 1) }), "get_task");
  assert.equal(g.state, "cancelled");

  assert.deepEqual(errors.map(String), [], "the session reported no error");
  Object.assign(left, { sb, taskId, longId });
  await closeSession(session);
  await closeServer(a);
});

test("ext-tasks: a fresh server process (a new client) reads the tasks the first one made", { timeout: 60000 }, async () => {
  assert.ok(left.taskId, "the first test left its tasks");
  const b = await server();
  const errors = [];
  const raw = rawChannel(b);
  const session = taskSession(b, raw, errors);

  const done = session.task(left.taskId);
  const view = await done.snapshot();
  assert.equal(view.taskId, left.taskId);
  assert.equal(view.status, "completed");
  const outcome = await done.result();
  assert.equal(outcome.status, "completed", JSON.stringify(outcome));
  assert.equal(resultFromTaskOutcome(outcome).structuredContent.stdout, "done\n");

  const gone = await session.task(left.longId).snapshot();
  assert.equal(gone.status, "cancelled");

  // The same, raw, on the same process.
  const r = await raw.request("tasks/get", { taskId: left.taskId }, { capabilities: tasksCapabilities });
  assert.equal(r.kind, "result", JSON.stringify(r.error));
  assert.equal(r.result.resultType, "complete");
  assert.equal(r.result.status, "completed");
  assert.equal(r.result.result.resultType, "complete");
  assert.equal(r.result.result.structuredContent.stdout, "done\n");

  assert.deepEqual(errors.map(String), [], "the session reported no error");
  await closeSession(session);
  ok(await callTool(b.client, "kill_sandbox", { sandbox_id: left.sb }), "kill_sandbox");
  sandboxes.delete(left.sb);
  await closeServer(b);
});
