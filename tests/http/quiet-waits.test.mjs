// Parked waits on the local provider cost nothing while their task is
// quiet: the server reads none of the task's files for them (the
// supervisor's pidfd and a watch on the task's directory wake them), then
// the task's output wakes every wait for new output and its end every wait
// for the end; a task writing below a far offset wakes its wait at most
// once a pause. The read count comes from /metrics, hence HTTP.
import { test } from "node:test";
import assert from "node:assert/strict";
import { callTool, startServer } from "../lib/client.mjs";

const WAITS = 20;
const QUIET_MS = 3000;

function data(result) {
  assert.ok(!result.isError, `tool error: ${result.content?.[0]?.text}`);
  return result.structuredContent ?? JSON.parse(result.content[0].text);
}

// Files the server has read through the provider, from its /metrics.
async function reads(server) {
  const r = await fetch(new URL("/metrics", server.url), { headers: server.headers });
  assert.equal(r.status, 200);
  const text = await r.text();
  let n = 0;
  for (const op of ["read_file", "read_files"]) {
    const m = new RegExp(`^taskbox_provider_calls_total\\{op="${op}"\\} (\\d+)$`, "m").exec(text);
    n += m ? Number(m[1]) : 0;
  }
  return n;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("quiet tasks: parked waits read nothing, and output and the end wake them", { timeout: 120000 }, async () => {
  const server = await startServer({ transport: "http" });
  let sb;
  try {
    const { client } = server;
    sb = data(await callTool(client, "create_sandbox", {})).sandbox_id;
    const gate = `gate-${process.pid}-${Date.now()}`;
    const tasks = [];
    for (let i = 0; i < 2; i++)
      tasks.push(data(await callTool(client, "start_task", {
        sandbox_id: sb,
        command: `until [ -e ${gate} ]; do sleep 0.05; done; echo out; sleep 300`,
      })).task_id);
    // Waits for output past the offsets.
    const wait = (task_id, offset) =>
      callTool(client, "get_task", { sandbox_id: sb, task_id, wait: 60, stdout_offset: offset, stderr_offset: 0 },
        { timeout: 90000 });
    const waits = Array.from({ length: WAITS }, (_, i) => wait(tasks[i % 2], 0));
    await sleep(1500); // all parked
    const before = await reads(server);
    await sleep(QUIET_MS);
    const during = (await reads(server)) - before;
    // Without pidfds (valgrind has no pidfd_open) a wait looks at its task
    // between pauses instead.
    if (!process.env.TASKBOX_TEST_WRAPPER)
      assert.ok(during < WAITS, `${during} reads in ${QUIET_MS} ms for ${WAITS} waits on quiet tasks`);
    data(await callTool(client, "write_file", { sandbox_id: sb, path: gate, content: "" }));
    for (const r of await Promise.all(waits)) {
      const v = data(r);
      assert.equal(v.state, "running");
      assert.equal(v.stdout, "out\n");
    }
    // Past the output, the waits end with the task.
    const more = Array.from({ length: WAITS }, (_, i) => wait(tasks[i % 2], 4));
    await sleep(1000);
    for (const task_id of tasks)
      assert.equal(data(await callTool(client, "cancel_task", { sandbox_id: sb, task_id })).state, "cancelled");
    for (const r of await Promise.all(more)) assert.equal(data(r).state, "cancelled");
  } finally {
    if (sb) await callTool(server.client, "kill_sandbox", { sandbox_id: sb }).catch(() => {});
    await server.close();
  }
});

test("a task that writes below a far offset wakes its wait at most once a pause, not at every write", { timeout: 120000 }, async () => {
  const server = await startServer({ transport: "http" });
  let sb;
  try {
    const { client } = server;
    sb = data(await callTool(client, "create_sandbox", {})).sandbox_id;
    const t = data(await callTool(client, "start_task", {
      sandbox_id: sb,
      command: "while :; do echo x; sleep 0.001; done",
    }));
    // Its output never reaches the offset within the wait: every write
    // notifies the wait, which then looks at most once per pause.
    const waiting = callTool(client, "get_task",
      { sandbox_id: sb, task_id: t.task_id, wait: 8, stdout_offset: 1048576, stderr_offset: 0 }, { timeout: 90000 });
    await sleep(1500);
    const before = await reads(server);
    await sleep(QUIET_MS);
    const during = (await reads(server)) - before;
    const v = data(await waiting);
    assert.equal(v.state, "running");
    assert.ok(v.stdout_size > 0, "the task wrote");
    if (!process.env.TASKBOX_TEST_WRAPPER)
      assert.ok(during < 600, `${during} reads in ${QUIET_MS} ms for one wait on a task writing every millisecond`);
  } finally {
    if (sb) await callTool(server.client, "kill_sandbox", { sandbox_id: sb }).catch(() => {});
    await server.close();
  }
});
