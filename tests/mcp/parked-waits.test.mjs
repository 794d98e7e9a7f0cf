// Waits that hold no thread: a thousand get_task calls waiting on running
// tasks leave the server answering everything else, end at once when the
// client cancels them, and each ends on its task's change. Runs over the
// transport the harness is set to (stdio by default; the -http file runs it
// over Streamable HTTP).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { callTool, startServer } from "../lib/client.mjs";

const WAITS = 1000;
const TASKS = 10;

function data(result) {
  assert.ok(!result.isError, `tool error: ${result.content?.[0]?.text}`);
  return result.structuredContent ?? JSON.parse(result.content[0].text);
}

// The server's threads, from /proc.
function threadsOf(pid) {
  const m = /^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m[1]);
}

async function setup(server) {
  const { client } = server;
  const sb = data(await callTool(client, "create_sandbox", {})).sandbox_id;
  const gate = `gate-${process.pid}-${Date.now()}`;
  const tasks = [];
  for (let i = 0; i < TASKS; i++)
    tasks.push(data(await callTool(client, "start_task", {
      sandbox_id: sb,
      command: `until [ -e ${gate} ]; do sleep 0.05; done`,
    })).task_id);
  const done = data(await callTool(client, "start_task", { sandbox_id: sb, command: "echo ready" })).task_id;
  // The unrelated task is finished before any wait starts (a wait ends on
  // its output too: wait again past it).
  const seen = data(await callTool(client, "get_task", { sandbox_id: sb, task_id: done, wait: 30 }));
  data(await callTool(client, "get_task", { sandbox_id: sb, task_id: done, wait: 30, stdout_offset: seen.stdout_size }));
  return { sb, gate, tasks, done };
}

// Starts n waits (wait: 50 s, far past the test's own ends) spread over the
// tasks; each promise records when it settled. With mcpTasks, every other
// wait is the MCP tasks utility's tasks/result (which waits for the end).
function startWaits(client, sb, tasks, n, signal, mcpTasks = false) {
  const waits = [];
  for (let i = 0; i < n; i++) {
    const w = { settled: false };
    const task_id = tasks[i % tasks.length];
    const options = { signal, timeout: 120000 };
    w.promise = (
      mcpTasks && i % 2
        ? client.request({ method: "tasks/result", params: { taskId: `${sb}/${task_id}` } }, CallToolResultSchema, options)
        : callTool(client, "get_task", { sandbox_id: sb, task_id, wait: 50 }, options)
    )
      .then((r) => ((w.settled = true), (w.result = r)))
      .catch((e) => ((w.settled = true), (w.error = e)));
    waits.push(w);
  }
  return waits;
}

// Destroys the test's sandbox (its looping tasks with it) whatever happened.
async function cleanUp(server, box) {
  try {
    if (box.sb) await callTool(server.client, "kill_sandbox", { sandbox_id: box.sb });
  } finally {
    await server.close();
  }
}

test(`${WAITS} parked waits: other calls are answered meanwhile, and every wait ends on its task's end`, { timeout: 180000 }, async () => {
  const server = await startServer();
  const box = {};
  try {
    const { client } = server;
    const { sb, gate, tasks, done } = Object.assign(box, await setup(server));
    const waits = startWaits(client, sb, tasks, WAITS);
    // Every wait has reached the server once a call sent after them is
    // answered (one client, requests handled in order).
    await callTool(client, "list_tasks", { sandbox_id: sb });
    // The unrelated get_task, and a second one, answer while all wait.
    for (let i = 0; i < 2; i++) {
      const v = data(await callTool(client, "get_task", { sandbox_id: sb, task_id: done }));
      assert.equal(v.state, "succeeded");
      assert.equal(v.stdout, "ready\n");
    }
    assert.equal(waits.filter((w) => w.settled).length, 0, "no wait ended before its task did");
    // The threads stay bounded (the pool and the parker's), whatever the
    // waits: no thread per wait.
    const threads = threadsOf(server.pid);
    assert.ok(threads < 64, `${threads} threads with ${WAITS} waits`);
    // The tasks end: every wait returns the end, long before its 50 s.
    const opened = Date.now();
    data(await callTool(client, "write_file", { sandbox_id: sb, path: gate, content: "" }));
    await Promise.all(waits.map((w) => w.promise));
    const errors = waits.filter((w) => w.error || w.result.isError);
    assert.equal(errors.length, 0, `failed waits: ${errors.slice(0, 3).map((w) => w.error?.message ?? w.result.content[0].text)}`);
    for (const w of waits) {
      const v = data(w.result);
      assert.equal(v.state, "succeeded");
    }
    assert.ok(Date.now() - opened < 40000, "the waits ended on the tasks' end, not on their time");
  } finally {
    await cleanUp(server, box);
  }
});

test("the starvation case: a plain get_task is answered while a dozen waits (get_task, tasks/result) hold on, and cancelled waits end at once", { timeout: 120000 }, async () => {
  const server = await startServer();
  const box = {};
  try {
    const { client } = server;
    const { sb, gate, tasks, done } = Object.assign(box, await setup(server));
    const abort = new AbortController();
    const waits = startWaits(client, sb, tasks, 12, abort.signal, true);
    await callTool(client, "list_tasks", { sandbox_id: sb });
    const v = data(await callTool(client, "get_task", { sandbox_id: sb, task_id: done }));
    assert.equal(v.state, "succeeded");
    assert.equal(waits.filter((w) => w.settled).length, 0, "the plain get_task came back before any wait");
    // The client cancels them (notifications/cancelled on stdio, the
    // request's connection dropped on HTTP): they end, and the server goes
    // on serving with nothing parked.
    abort.abort();
    await Promise.all(waits.map((w) => w.promise));
    assert.ok(waits.every((w) => w.error), "every cancelled wait was rejected by the client");
    const again = startWaits(client, sb, tasks, 4, undefined, true);
    await callTool(client, "list_tasks", { sandbox_id: sb });
    assert.equal(again.filter((w) => w.settled).length, 0, "no wait ended before its task did");
    data(await callTool(client, "write_file", { sandbox_id: sb, path: gate, content: "" }));
    await Promise.all(again.map((w) => w.promise));
    for (const w of again) {
      assert.ok(!w.error, w.error?.message);
      assert.equal(data(w.result).state, "succeeded");
    }
  } finally {
    await cleanUp(server, box);
  }
});
