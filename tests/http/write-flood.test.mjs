// A write_task flood beside a plain get_task: 24 clients loop 64 KiB writes
// at a task that never reads its stdin. Every other client's get_task is
// answered (within a bound far past its normal time: a correctness bound,
// not a speed one), and every write gets a clear answer: bytes written, or
// an error that says a write to that task is in progress or the server's
// writes are all busy; never a write left queued until "not confirmed".
import { test } from "node:test";
import assert from "node:assert/strict";
import { callTool, startServer } from "../lib/client.mjs";

const CLIENTS = 24;
const FLOOD_MS = 6000;
const GET_BOUND_MS = 10000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function data(result) {
  assert.ok(!result.isError, `tool error: ${result.content?.[0]?.text}`);
  return result.structuredContent ?? JSON.parse(result.content[0].text);
}

// The refusals a write may get while others to its task are in progress.
const CLEAR = /already has a write in progress|writes are in progress/;

test(`${CLIENTS} clients flooding write_task at a task that does not read: get_task is answered, every write gets a clear answer`, { timeout: 180000 }, async () => {
  const server = await startServer({ transport: "http" });
  const sessions = [];
  let sb;
  try {
    const { client } = server;
    sb = data(await callTool(client, "create_sandbox", {})).sandbox_id;
    const task_id = data(await callTool(client, "start_task", { sandbox_id: sb, command: "sleep 120", stdin: "pipe" })).task_id;
    for (let i = 0; i < CLIENTS; i++) sessions.push(await server.session());
    const chunk = "x".repeat(65536);
    const outcomes = [];
    let flooding = true;
    const loops = sessions.map(async (s) => {
      while (flooding) {
        try {
          const r = await callTool(s.client, "write_task", { sandbox_id: sb, task_id, data: chunk }, { timeout: 120000 });
          outcomes.push(r.isError ? { error: r.content[0].text } : { written: data(r).written });
        } catch (e) {
          outcomes.push({ thrown: String(e.message ?? e) });
        }
      }
    });
    // The plain client: get_task every 200 ms during the flood.
    const latencies = [];
    const floodEnd = Date.now() + FLOOD_MS;
    await sleep(500);
    while (Date.now() < floodEnd) {
      const t0 = performance.now();
      const v = data(await callTool(client, "get_task", { sandbox_id: sb, task_id }, { timeout: GET_BOUND_MS }));
      latencies.push(performance.now() - t0);
      assert.equal(v.state, "running");
      await sleep(200);
    }
    flooding = false;
    await Promise.all(loops);
    latencies.sort((a, b) => a - b);
    const written = outcomes.filter((o) => "written" in o);
    const refused = outcomes.filter((o) => o.error && CLEAR.test(o.error));
    console.log(
      `# get_task during the flood: ${latencies.length} calls, median ${latencies[latencies.length >> 1].toFixed(1)} ms, ` +
        `max ${latencies[latencies.length - 1].toFixed(1)} ms; writes: ${outcomes.length} answered, ` +
        `${written.length} wrote (${written.reduce((n, o) => n + o.written, 0)} bytes), ${refused.length} refused as busy`,
    );
    const unclear = outcomes.filter((o) => !("written" in o) && !(o.error && CLEAR.test(o.error)));
    assert.deepEqual(unclear.slice(0, 3), [], `${unclear.length} writes got no clear answer`);
    assert.ok(written.length > 0, "some writes went through");
  } finally {
    for (const s of sessions) await s.close().catch(() => {});
    if (sb) await callTool(server.client, "kill_sandbox", { sandbox_id: sb }).catch(() => {});
    await server.close();
  }
});
