// A waiting call on a provider whose sandboxes' processes the server cannot
// see (e2b, against the fake): the supervisor's wait verb runs in the
// sandbox and its answer wakes the call, instead of the call reading the
// task's files again and again; an instance watches up to its "watches"
// waits at once (64 unless configured), the server no more than its
// open-file limit allows, the others look between pauses as before; a
// server that stops with watches in flight ends them.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { startFake } from "./fake/spawn.mjs";
import { callTool, scratchDir, startServer, writeConfig } from "../lib/client.mjs";
import { initialize, spawnRaw } from "../mcp/raw.mjs";
import { watchVerbs } from "../lib/verbs.mjs";

let fake, cfgPath, fewPath;

before(async () => {
  fake = await startFake({ env: { PATH: `/usr/bin:/bin:${process.env.PATH || ""}` } });
  const settings = { api_url: fake.apiUrl, sandbox_url: fake.sandboxUrl };
  cfgPath = writeConfig(scratchDir(), { default: "cloud", providers: { cloud: { plugin: "e2b", settings } } });
  fewPath = writeConfig(scratchDir(), { default: "cloud", providers: { cloud: { plugin: "e2b", settings, watches: 3 } } });
});

after(async () => {
  if (fake) await fake.stop();
});

const server = (config = cfgPath) => startServer({ args: ["--config", config], env: { E2B_API_KEY: fake.apiKey } });

async function call(s, name, args) {
  const r = await callTool(s.client, name, args);
  assert.ok(!r.isError, `${name}: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}

const fileGets = (reqs) => reqs.filter((r) => r.plane === "envd" && r.url.startsWith("/files?")).length;
const processStarts = (reqs) => reqs.filter((r) => r.plane === "envd" && r.url === "/process.Process/Start").length;

test("a waiting get_task is woken by the supervisor's watch verb, whose answer is the view: no read of the task's files", { timeout: 120000 }, async () => {
  const s = await server();
  try {
    const { sandbox_id } = await call(s, "create_sandbox", {});
    const gate = `gate-${process.pid}`;
    const t = await call(s, "start_task", {
      sandbox_id,
      command: `echo ready; until [ -e ${gate}.1 ]; do sleep 0.05; done; echo done; until [ -e ${gate}.2 ]; do sleep 0.05; done; exit 3`,
    });
    const ready = await call(s, "get_task", { sandbox_id, task_id: t.task_id, wait: 30 });
    assert.equal(ready.stdout, "ready\n");
    const taskReads = (reqs) => reqs.filter((r) => r.plane === "envd" && r.url.startsWith("/files?") && r.url.includes(t.task_id));
    await fake.clearRequests();
    // Nothing happens for 3 s, then the task writes.
    const waiting = call(s, "get_task", { sandbox_id, task_id: t.task_id, wait: 60, stdout_offset: 6 });
    await new Promise((r) => setTimeout(r, 3000));
    const quiet = await fake.requests();
    await fake.clearRequests();
    await call(s, "write_file", { sandbox_id, path: `${gate}.1`, content: "" });
    const grown = await waiting;
    assert.equal(grown.state, "running");
    assert.equal(grown.stdout, "done\n");
    assert.equal(grown.stdout_next_offset, 11);
    assert.equal(grown.stdout_size, 11);
    // One view when the wait began, then only the watch's exec: a wait
    // that looked between pauses (20 ms apart on this fake) would have
    // read the task's files dozens of times in 3 s.
    assert.ok(processStarts(quiet) >= 1, `the watch's exec: ${JSON.stringify(quiet.map((r) => r.url))}`);
    assert.ok(fileGets(quiet) <= 8, `${fileGets(quiet)} file reads while nothing happened`);
    // The watch's answer carried the record and the page: the task's
    // files were not read after it.
    assert.deepEqual(taskReads(await fake.requests()).map((r) => r.url), []);
    // The same for the task's end.
    const ending = call(s, "get_task", { sandbox_id, task_id: t.task_id, wait: 60, stdout_offset: 11 });
    await new Promise((r) => setTimeout(r, 500));
    await fake.clearRequests();
    await call(s, "write_file", { sandbox_id, path: `${gate}.2`, content: "" });
    const end = await ending;
    assert.equal(end.state, "failed");
    assert.equal(end.exit_code, 3);
    assert.equal(end.stdout, "");
    assert.equal(end.stdout_next_offset, 11);
    assert.deepEqual(taskReads(await fake.requests()).map((r) => r.url), []);
    // What a plain get_task reads is what the answer said.
    assert.deepEqual(await call(s, "get_task", { sandbox_id, task_id: t.task_id, stdout_offset: 11 }), end);
    await call(s, "kill_sandbox", { sandbox_id });
  } finally {
    await s.close();
  }
});

// Waits until f() is truthy, or fails after ms.
async function until(f, ms, what) {
  const end = Date.now() + ms;
  while (!f()) {
    assert.ok(Date.now() < end, what());
    await new Promise((r) => setTimeout(r, 200));
  }
}

// n tasks in each of `boxes` new sandboxes that end at a gate, each with a
// waiting get_task; checks the verbs watching them (check(sets), an array
// of each sandbox's task ids as a Set, which waits for them to settle),
// then opens the gates: every wait answers with its own task's end, the
// view a plain get_task gives.
async function manyWaits(s, boxes, n, check) {
  const made = [];
  for (let b = 0; b < boxes; b++) {
    const { sandbox_id } = await call(s, "create_sandbox", {});
    const gate = `many-${process.pid}-${n}`;
    const tasks = [];
    // Each task looks for the gate twice a second: many tasks looking 20
    // times a second starved a 2-core machine enough that the verbs' own
    // starts fell behind.
    for (let i = 0; i < n; i++)
      tasks.push(await call(s, "start_task", { sandbox_id, command: `until [ -e ${gate} ]; do sleep 0.5; done; exit ${i + 1}` }));
    made.push({ sandbox_id, gate, tasks });
  }
  const waits = made.map((m) => m.tasks.map((t) => call(s, "get_task", { sandbox_id: m.sandbox_id, task_id: t.task_id, wait: 60 })));
  await check(made.map((m) => new Set(m.tasks.map((t) => t.task_id))));
  for (const m of made) await call(s, "write_file", { sandbox_id: m.sandbox_id, path: m.gate, content: "" });
  for (let b = 0; b < boxes; b++) {
    const ends = await Promise.all(waits[b]);
    ends.forEach((v, i) => {
      assert.equal(v.state, "failed", JSON.stringify(v));
      assert.equal(v.exit_code, i + 1);
    });
    for (let i = 0; i < n; i++)
      assert.deepEqual(await call(s, "get_task", { sandbox_id: made[b].sandbox_id, task_id: made[b].tasks[i].task_id }), ends[i]);
    await call(s, "kill_sandbox", { sandbox_id: made[b].sandbox_id });
  }
}

// How many sandboxes of sets (each a Set of its task ids) have a watch
// verb that names all their tasks, and how many watch verbs run for them.
function watched(sets) {
  let boxes = 0, verbs = 0;
  for (const ids of sets) {
    const v = watchVerbs(ids);
    verbs += v.length;
    if (v.some((x) => [...ids].every((id) => x.tasks.includes(id)))) boxes++;
  }
  return { boxes, verbs };
}

test("40 waits at once on one sandbox share one watch verb that names all their tasks", { timeout: 180000 }, async () => {
  const s = await server();
  try {
    await manyWaits(s, 1, 40, (sets) =>
      until(() => JSON.stringify(watched(sets)) === '{"boxes":1,"verbs":1}', 30000, () => JSON.stringify(watched(sets))),
    );
  } finally {
    await s.close();
  }
});

test("more sandboxes than \"watches\": 3 watched, the others' waits look between pauses; every wait answers at its task's end", { timeout: 180000 }, async () => {
  const s = await server(fewPath);
  try {
    await manyWaits(s, 4, 3, async (sets) => {
      await until(() => watched(sets).boxes === 3, 30000, () => `${JSON.stringify(watched(sets))}: not 3 sandboxes watched`);
      // No more than 3 while the others look.
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(watched(sets).verbs, 3);
      }
    });
  } finally {
    await s.close();
  }
});

test("under RLIMIT_NOFILE 104 at most 5 sandboxes are watched at once, whatever \"watches\" allows; every wait answers", { timeout: 180000 }, async () => {
  // Without the test wrapper: valgrind needs descriptors of its own.
  const s = await startServer({
    args: ["--config", cfgPath],
    env: { E2B_API_KEY: fake.apiKey },
    wrapper: ["sh", "-c", 'ulimit -n 104 && exec "$0" "$@"'],
  });
  try {
    const fds = () => readdirSync(`/proc/${s.pid}/fd`).length;
    // One wait per sandbox: the limit also bounds parked waits (11 here).
    await manyWaits(s, 6, 1, async (sets) => {
      await until(() => watched(sets).boxes === 5, 30000, () => `${JSON.stringify(watched(sets))}: not 5 sandboxes watched`);
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(watched(sets).verbs, 5);
      }
      console.log(`# descriptors with 5 watches: ${fds()}`);
    });
  } finally {
    await s.close();
  }
});

test("a server that stops while watches are in flight ends them and exits", { timeout: 120000 }, async () => {
  const s = await server();
  const { sandbox_id } = await call(s, "create_sandbox", {});
  const t = await call(s, "start_task", { sandbox_id, command: "sleep 300" });
  await s.close();
  // Three waits in flight on a raw pipe, then its end.
  const raw = spawnRaw(["--config", cfgPath], { env: { E2B_API_KEY: fake.apiKey } });
  raw.send(initialize(1, "2025-06-18"));
  await raw.waitFor((m) => m.id === 1);
  raw.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  for (const id of [2, 3, 4])
    raw.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "get_task", arguments: { sandbox_id, task_id: t.task_id, wait: 60 } } });
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual(await raw.close(), { code: 0, signal: null });
  // A new process finds the task as it was, and cancels it.
  const again = await server();
  try {
    const view = await call(again, "get_task", { sandbox_id, task_id: t.task_id });
    assert.equal(view.state, "running");
    const c = await call(again, "cancel_task", { sandbox_id, task_id: t.task_id, wait: 10 });
    assert.equal(c.state, "cancelled");
    await call(again, "kill_sandbox", { sandbox_id });
  } finally {
    await again.close();
  }
});
