// Three `taskbox serve --http` replicas behind haproxy (round robin), on
// one provider instance config: MCP 2026-07-28 calls from one client land
// on different replicas and the task contract still holds: a task started
// through one replica is waited on through another and cancelled through
// a third; a Tasks-extension task is read by tasks/get on any replica; a
// replica killed with SIGKILL in the middle of a wait loses nothing (the
// client's retry through the balancer reaches the same task). A legacy
// client keeps its session on one replica (stickiness by Mcp-Session-Id).
// replicaSuite(provider) runs it on a provider of tests/contract/providers.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { Client } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { scratchDir, writeConfig } from "../lib/client.mjs";
import { freePort } from "../lib/haproxy.mjs";
import { startBalancer, startReplica } from "./replicas.mjs";

const MODERN = "2026-07-28";
const TASKS_EXT = "io.modelcontextprotocol/tasks";
const N = 3;

function data(result) {
  assert.ok(!result.isError, `tool error: ${result.content?.[0]?.text}`);
  return result.structuredContent ?? JSON.parse(result.content[0].text);
}

// The tools/call requests each replica has answered, from its /metrics.
async function toolCalls(replica) {
  const text = await replica.metrics();
  const m = /^taskbox_mcp_requests_total\{method="tools\/call"\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

// Calls parked on a replica now (waits in progress), from its /metrics.
async function parked(replica) {
  const m = /^taskbox_calls_parked (\d+)/m.exec(await replica.metrics());
  return m ? Number(m[1]) : 0;
}

async function modernClient(url, token) {
  const client = new Client({ name: "replicas-test", version: "1" }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

// One raw modern request through the balancer (the SDK client has no
// Tasks extension of its own); resolves with [HTTP status, message].
async function raw(url, token, id, method, params, { tasks = false } = {}) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": tasks ? { extensions: { [TASKS_EXT]: {} } } : {},
  };
  const name = params.name ?? params.taskId;
  const r = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(name ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } }),
  });
  const text = await r.text();
  const last = r.headers.get("content-type")?.startsWith("text/event-stream")
    ? text.split("\n").filter((l) => l.startsWith("data: ")).pop().slice(6)
    : text;
  return [r.status, JSON.parse(last)];
}

export function replicaSuite(provider) {
  describe(`${N} replicas behind haproxy on ${provider.name}`, () => {
    test("calls spread over replicas; start, wait, cancel and tasks/get anywhere; SIGKILL mid-wait loses nothing", { timeout: 240000 }, async () => {
      const dir = scratchDir("taskbox-replicas-");
      const p = await provider.setup();
      const cfg = writeConfig(dir, p.config);
      const env = { ...process.env, ...(p.env || {}) };
      const token = randomBytes(24).toString("hex");
      const replicas = [];
      let lb;
      const clients = [];
      try {
        for (let i = 0; i < N; i++) replicas.push(await startReplica(`r${i}`, cfg, env, token));
        lb = await startBalancer(dir, await freePort(), replicas);
        const client = await modernClient(lb.url, token);
        clients.push(client);
        const call = async (name, args, options) => data(await client.callTool({ name, arguments: args }, options));

        const sb = (await call("create_sandbox", { timeout: 900 })).sandbox_id;
        // A wait returns at new output or at the end: wait for the end.
        const waitEnd = async (task_id) => {
          for (;;) {
            const v = await call("get_task", { sandbox_id: sb, task_id, wait: 30 });
            if (v.state !== "running") return v;
          }
        };
        // Start on one, wait on another, cancel through a third.
        const quick = await call("start_task", { sandbox_id: sb, command: "sleep 1; echo quick" });
        const waited = await waitEnd(quick.task_id);
        assert.equal(waited.state, "succeeded");
        assert.equal(waited.stdout, "quick\n");
        const long = await call("start_task", { sandbox_id: sb, command: "sleep 120" });
        const cancelled = await call("cancel_task", { sandbox_id: sb, task_id: long.task_id, wait: 20 });
        assert.equal(cancelled.state, "cancelled");
        const listed = await call("list_tasks", { sandbox_id: sb });
        assert.deepEqual(listed.tasks.map((t) => t.task_id).sort(), [quick.task_id, long.task_id].sort());

        // The Tasks extension: created through one, read through all.
        const [cs, created] = await raw(lb.url, token, 1, "tools/call", {
          name: "run_command", arguments: { sandbox_id: sb, command: "sleep 1; echo ext" },
        }, { tasks: true });
        assert.equal(cs, 200, JSON.stringify(created));
        assert.equal(created.result.resultType, "task");
        let done;
        for (let id = 2; !done; id++) {
          const [gs, got] = await raw(lb.url, token, id, "tasks/get", { taskId: created.result.taskId }, { tasks: true });
          assert.equal(gs, 200, JSON.stringify(got));
          if (got.result.status !== "working") done = got.result;
          else await new Promise((r) => setTimeout(r, got.result.pollIntervalMs));
          assert.ok(id < 200, "the task ends");
        }
        assert.equal(done.status, "completed");
        assert.equal(done.result.structuredContent.stdout, "ext\n");

        // SIGKILL the replica holding a wait; the retry reaches the task.
        const slow = await call("start_task", { sandbox_id: sb, command: "sleep 4; echo survived" });
        const first = client.callTool({ name: "get_task", arguments: { sandbox_id: sb, task_id: slow.task_id, wait: 60 } })
          .then((r) => ({ ok: data(r) }), (e) => ({ error: e }));
        let victim;
        const until = Date.now() + 20000;
        while (!victim && Date.now() < until) {
          for (const r of replicas) if ((await parked(r)) > 0) victim = r;
          if (!victim) await new Promise((r) => setTimeout(r, 50));
        }
        assert.ok(victim, "a replica holds the wait");
        await victim.kill("SIGKILL");
        const outcome = await first;
        assert.ok(outcome.error, "the wait on the killed replica fails for the client");
        const retried = await waitEnd(slow.task_id);
        assert.equal(retried.state, "succeeded");
        assert.equal(retried.stdout, "survived\n");

        // Every live replica answered tools/call requests of this client.
        for (const r of replicas.filter((x) => x !== victim))
          assert.ok((await toolCalls(r)) > 0, `${r.name} answered tools/call`);

        // A legacy session sticks to one replica.
        const v1 = new ClientV1({ name: "replicas-legacy", version: "1" });
        await v1.connect(new TransportV1(new URL(lb.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
        clients.push(v1);
        const own = data(await v1.callTool({ name: "create_sandbox", arguments: { timeout: 900 } })).sandbox_id;
        for (let i = 0; i < 4; i++) {
          const r = data(await v1.callTool({ name: "run_command", arguments: { command: `echo ${i}` } }));
          assert.equal(r.sandbox_id, own, "the session's default sandbox: the same replica's session");
        }
        await call("kill_sandbox", { sandbox_id: sb });
      } finally {
        for (const c of clients) await c.close().catch(() => {});
        if (lb) await lb.stop();
        for (const r of replicas) {
          r.child.kill("SIGTERM");
          const e = await r.exited;
          if (e.signal !== "SIGKILL") assert.equal(e.code, 0, `${r.name} exit after SIGTERM: ${e.signal || e.code}`);
        }
        await provider.teardown();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
