// Sessions of the Streamable HTTP transport, seen by real SDK clients: two
// clients at once on one `taskbox serve --http` process (an SDK v1 client
// and an SDK v2 one), each in the session its initialize opened. A
// session's sandboxes, its default sandbox and its end (the client's
// DELETE) are its own: ending one session destroys the sandboxes it created
// and started no task in, and nothing of the other's. The DELETE is
// answered before that cleanup (a worker runs it), so the tests wait for a
// sandbox the session's end must destroy before they look at what it must
// have left.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { callTool, scratchDir, startServer, writeConfig } from "../lib/client.mjs";
import local from "../contract/providers/local.mjs";

function data(r, what) {
  assert.ok(!r.isError, `${what}: unexpected tool error: ${r.content?.[0]?.text}`);
  return r.structuredContent ?? JSON.parse(r.content[0].text);
}

function failure(r, what) {
  assert.equal(r.isError, true, `${what}: expected a tool error, got ${r.content?.[0]?.text}`);
  return r.content.map((c) => c.text || "").join("\n");
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const call = async (s, name, args) => callTool(s.client, name, args);
const ok = async (s, name, args) => data(await call(s, name, args), `${name} ${JSON.stringify(args)}`);

describe("HTTP sessions: two SDK clients on one server", () => {
  let server;
  let cfgPath;
  let env;
  const sessions = [];
  const sandboxes = new Set();

  before(async () => {
    const p = await local.setup();
    cfgPath = writeConfig(scratchDir("taskbox-http-sessions-"), p.config);
    env = p.env;
    server = await startServer({ transport: "http", client: "v1", args: ["--config", cfgPath], env });
  });

  after(async () => {
    for (const s of sessions) await s.close().catch(() => {});
    if (server) {
      for (const id of sandboxes) await call(server, "kill_sandbox", { sandbox_id: id }).catch(() => {});
      await server.close();
    }
    await local.teardown();
  });

  // Another client in a session of its own on the same process.
  async function open(client) {
    const s = await server.session({ client });
    sessions.push(s);
    return s;
  }

  // Waits until sandbox_id is gone, asking through session s.
  async function destroyed(s, sandbox_id, what) {
    const end = Date.now() + 30000;
    for (;;) {
      const r = await call(s, "run_command", { sandbox_id, command: "true" });
      if (r.isError) {
        const text = failure(r, what);
        assert.ok(text.includes(sandbox_id), text);
        sandboxes.delete(sandbox_id);
        return;
      }
      assert.ok(Date.now() < end, `${what}: ${sandbox_id} still usable 30 s after its session's DELETE`);
      await sleep(50);
    }
  }

  async function create(s) {
    const { sandbox_id } = await ok(s, "create_sandbox", { timeout: 600 });
    sandboxes.add(sandbox_id);
    return sandbox_id;
  }

  // The sandbox a call without sandbox_id lands in: the session's default.
  async function defaultOf(s) {
    return (await ok(s, "run_command", { command: "true" })).sandbox_id;
  }

  test("a session's default sandbox is its own", { timeout: 120000 }, async () => {
    const a = await open("v1");
    const b = await open("v2");
    assert.notEqual(a.sessionId, b.sessionId, "each initialize opened a session of its own");
    assert.ok(a.sessionId && b.sessionId);

    // Created at once from both sessions.
    const [a1, b1] = await Promise.all([create(a), create(b)]);
    assert.equal(await defaultOf(a), a1);
    assert.equal(await defaultOf(b), b1);
    // A newer sandbox of one session is that session's default only.
    const a2 = await create(a);
    assert.equal(await defaultOf(a), a2);
    assert.equal(await defaultOf(b), b1);
    const t = await ok(b, "start_task", { command: "echo from-b" });
    assert.equal(t.sandbox_id, b1, "start_task without sandbox_id in b uses b's newest sandbox");

    // A third session has no default, whatever the others have.
    const c = await open("v1");
    const refused = failure(await call(c, "start_task", { command: "true" }), "start_task in a session without sandboxes");
    assert.match(refused, /sandbox_id/);
    // Using another session's sandbox by id works, and does not make it
    // this session's default.
    assert.equal((await ok(c, "run_command", { sandbox_id: a1, command: "echo hi" })).stdout, "hi\n");
    failure(await call(c, "list_tasks", {}), "list_tasks without a default");
    for (const s of [a, b, c]) await s.endSession();
  });

  test("one session's DELETE destroys only its own sandboxes, and not one with a task", { timeout: 120000 }, async () => {
    const a = await open("v1");
    const b = await open("v2");
    const plain = await create(a);
    const kept = await create(a);
    const other = await create(b);
    const t = await ok(a, "start_task", { sandbox_id: kept, command: "sleep 1; echo kept" });
    // a also works in b's sandbox: that does not make it a's.
    assert.equal((await ok(a, "run_command", { sandbox_id: other, command: "echo x > from-a" })).exit_code, 0);
    // b is busy in its own sandbox while a ends its session.
    const busy = call(b, "run_command", { sandbox_id: other, command: "sleep 2; echo busy" });
    const aSession = a.sessionId;

    await a.endSession(); // the SDK client's DELETE

    // The ended session is gone: its id is refused.
    const res = await fetch(server.url, {
      method: "POST",
      headers: {
        ...server.headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": aSession,
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    await res.text();
    assert.equal(res.status, 404, "a request in an ended session gets 404");

    // a's sandbox without a task is destroyed; then, a's end being over,
    // the one with a task lives, and b's sandbox and default are untouched.
    await destroyed(b, plain, "a's plain sandbox");
    assert.equal(data(await busy, "b's call across a's DELETE").stdout, "busy\n");
    assert.equal((await ok(b, "run_command", { sandbox_id: other, command: "cat from-a" })).stdout, "x\n");
    assert.equal(await defaultOf(b), other);
    // Past the output it will write, so the wait answers at the end, not
    // at the write just before it.
    const ended = await ok(b, "get_task", { sandbox_id: kept, task_id: t.task_id, wait: 30, stdout_offset: 5 });
    assert.equal(ended.state, "succeeded");
    const done = await ok(b, "get_task", { sandbox_id: kept, task_id: t.task_id });
    assert.equal(done.stdout, "kept\n");
    assert.equal((await ok(b, "run_command", { sandbox_id: kept, command: "echo still" })).stdout, "still\n");

    // b's DELETE then destroys b's sandbox (no task in it), and not a's
    // retained one, which b only used.
    await b.endSession();
    const c = await open("v1");
    await destroyed(c, other, "b's sandbox after b's DELETE");
    assert.equal((await ok(c, "run_command", { sandbox_id: kept, command: "echo alive" })).stdout, "alive\n");
    await c.endSession();
  });

  test("the server's own first session is unaffected by the others", { timeout: 30000 }, async () => {
    // server (the first client) was opened before, and outlived, every
    // session the tests above ended.
    const { tools } = await server.client.listTools();
    assert.ok(tools.some((x) => x.name === "start_task"));
    assert.match(await defaultOf(server), /^local:/);
    sandboxes.add(await defaultOf(server));
  });
});
