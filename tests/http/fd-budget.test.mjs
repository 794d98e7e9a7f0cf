// The descriptor budget over Streamable HTTP on the local provider: a
// parked wait costs its connection and one descriptor; the server derives
// from its open-file limit how many connections (and so waits) it can
// hold, refuses calls past that with 503, and never answers a call with an
// I/O error; another client's calls keep working meanwhile. The server runs
// without the test wrapper under its own `ulimit -n`: valgrind keeps
// descriptors of its own below the limit, which would change what is
// measured.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readlinkSync } from "node:fs";
import { callTool, startServer } from "../lib/client.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function data(result) {
  assert.ok(!result.isError, `tool error: ${result.content?.[0]?.text}`);
  return result.structuredContent ?? JSON.parse(result.content[0].text);
}

// The server under `ulimit -n limit`, without the test wrapper.
function limited(limit) {
  return startServer({
    transport: "http",
    wrapper: ["sh", "-c", `ulimit -n ${limit} && exec "$0" "$@"`],
  });
}

const fdsOf = (pid) => readdirSync(`/proc/${pid}/fd`).length;

// The descriptors that are sockets or anonymous inodes, not files.
function handlesOf(pid) {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (/^(socket|anon_inode|pipe):/.test(readlinkSync(`/proc/${pid}/fd/${fd}`))) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

// What a call's failure says: the tool error's text, or the thrown error's
// (with the HTTP status the SDK puts in its code).
function failure(outcome) {
  if (outcome.error) return `${outcome.error.code} ${outcome.error.message ?? outcome.error}`;
  if (outcome.result.isError) return outcome.result.content?.[0]?.text ?? "";
  return null;
}

// A refusal past the budget: HTTP 503.
const refused = (text) => text.startsWith("503 ");

// Starts n get_task waits on tasks (round robin), each recording its end.
function startWaits(client, sb, tasks, n, wait) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const o = { settled: false };
    o.promise = callTool(client, "get_task", { sandbox_id: sb, task_id: tasks[i % tasks.length], wait }, { timeout: 120000 })
      .then((r) => (o.result = r))
      .catch((e) => (o.error = e))
      .finally(() => (o.settled = true));
    out.push(o);
  }
  return out;
}

// Gated tasks: each runs until the gate file exists.
async function gatedTasks(client, sb, n, gate) {
  const ids = [];
  for (let i = 0; i < n; i++)
    ids.push(data(await callTool(client, "start_task", { sandbox_id: sb, command: `until [ -e ${gate} ]; do sleep 0.2; done` })).task_id);
  return ids;
}

// Waits until count() reaches n or ms pass; returns the last count.
async function until(count, n, ms) {
  const end = Date.now() + ms;
  let c = count();
  while (c < n && Date.now() < end) {
    await sleep(100);
    c = count();
  }
  return c;
}

test("700 parked waits under RLIMIT_NOFILE 4096: each costs its connection and one descriptor, none fails, other calls answer", { timeout: 360000 }, async () => {
  const WAITS = 700;
  const server = await limited(4096);
  let sb;
  try {
    const { client } = server;
    const other = await server.session();
    sb = data(await callTool(client, "create_sandbox", {})).sandbox_id;
    const gate = `gate-${process.pid}-${Date.now()}`;
    const tasks = await gatedTasks(client, sb, 10, gate);
    // What a parked wait holds is sockets and anonymous inodes (eventfd,
    // pidfd, epoll); open files and directories belong to the caches
    // sized from the limit (kept files, idle connections), which a wait
    // leaves open only as their bounded share.
    const idle = handlesOf(server.pid);
    const waits = startWaits(client, sb, tasks, WAITS, 60);
    await until(() => handlesOf(server.pid) - idle, 2 * WAITS, 60000);
    await sleep(2000); // any wait that would hold more holds it now
    const busy = handlesOf(server.pid);
    const perWait = (busy - idle) / WAITS;
    console.log(`# ${fdsOf(server.pid)} descriptors with ${WAITS} waits: sockets and anonymous inodes ${idle} before, ${busy} after: ${perWait.toFixed(2)} per parked wait`);
    // Another client's calls answer while they all wait.
    const listed = data(await callTool(other.client, "list_tasks", { sandbox_id: sb }));
    assert.ok(listed.tasks.length >= tasks.length, "list_tasks answered every task");
    assert.equal(waits.filter((w) => w.settled && failure(w)).length, 0, `waits failed: ${waits.filter((w) => w.settled && failure(w)).slice(0, 3).map(failure)}`);
    // Its connection and one descriptor (and, per task, one pidfd the
    // waits on it share).
    assert.ok(perWait <= 2.05, `${perWait.toFixed(2)} descriptors per parked wait (at most its connection and one)`);
    // The tasks end: every wait answers their end, none an error.
    data(await callTool(other.client, "write_file", { sandbox_id: sb, path: gate, content: "" }));
    await Promise.all(waits.map((w) => w.promise));
    const failed = waits.map(failure).filter((f) => f !== null);
    assert.deepEqual(failed.slice(0, 3), [], `${failed.length} of ${WAITS} waits failed`);
    for (const w of waits) assert.equal(data(w.result).state, "succeeded");
    await other.close();
  } finally {
    if (sb) await callTool(server.client, "kill_sandbox", { sandbox_id: sb }).catch(() => {});
    await server.close();
  }
});

test("24 running tasks under RLIMIT_NOFILE 64: 72 waits get an answer or a clean 503, never an I/O error; another client's list_tasks works", { timeout: 360000 }, async () => {
  const server = await limited(64);
  let sb;
  try {
    const { client } = server;
    const other = await server.session();
    sb = data(await callTool(client, "create_sandbox", {})).sandbox_id;
    const gate = `gate-${process.pid}-${Date.now()}`;
    const tasks = await gatedTasks(client, sb, 24, gate);
    const waits = startWaits(client, sb, tasks, 72, 60);
    await sleep(3000);
    // Another client's list_tasks works meanwhile (its connection was
    // opened before the waits).
    const listed = data(await callTool(other.client, "list_tasks", { sandbox_id: sb }));
    assert.equal(listed.tasks.length, tasks.length);
    data(await callTool(other.client, "write_file", { sandbox_id: sb, path: gate, content: "" }));
    await Promise.all(waits.map((w) => w.promise));
    const failed = waits.map(failure).filter((f) => f !== null);
    const bad = failed.filter((f) => !refused(f));
    const served = waits.filter((w) => failure(w) === null);
    console.log(`# 72 waits under 64 descriptors: ${served.length} answered, ${failed.length - bad.length} refused with 503, ${bad.length} failed otherwise`);
    assert.deepEqual(bad.slice(0, 3), [], `${bad.length} of 72 waits failed other than with a 503`);
    assert.ok(served.length > 0, "some waits were served");
    for (const w of served) assert.equal(data(w.result).state, "succeeded");
    // And the server still serves a new call.
    data(await callTool(other.client, "list_tasks", { sandbox_id: sb }));
    await other.close();
  } finally {
    if (sb) await callTool(server.client, "kill_sandbox", { sandbox_id: sb }).catch(() => {});
    await server.close();
  }
});
