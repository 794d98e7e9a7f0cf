// Whose sandbox, on one provider, seen on the wire: one `serve --http` with
// named static tokens for alice, bob (both taskbox:run) and root
// (taskbox:admin), and "limits" giving bob two sandboxes and everyone a
// 7200 s lifetime cap.
//   - bob's answer about alice's sandbox, for every tool that takes a
//     sandbox_id and every MCP task method (the 2025-11-25 utility in a
//     session, the Tasks extension without one), equals his answer about a
//     sandbox that never existed: the same status and the same JSON once
//     the two ids are replaced by one placeholder
//   - alice's task is untouched afterwards (running, its output intact),
//     her sandbox alive; the admin reaches both
//   - list_sandboxes shows each principal exactly its own, the admin any
//     owner's or every owner's; bob may not ask for alice's
//   - bob's third create is refused naming the limit, his count and him,
//     and creates nothing; a timeout past the cap is refused
//   - the audit trail records bob's refusals as not_owner and quota
// Exported as tenancySuite(provider) for one test file per provider.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLIENT_INFO, MODERN_VERSION, envelope, scratchDir, tasksCapabilities } from "../lib/client.mjs";
import { freePort, serveHttp } from "../lib/serve-http.mjs";

const LEGACY = "2025-11-25";
const token = () => randomBytes(24).toString("base64url");

// A sandbox id of the same shape as real's that no provider made: the last
// characters of the native id's name (before a ".", which on k8s starts the
// object's uid) changed within their class.
export function ghostOf(real) {
  const colon = real.indexOf(":");
  const [inst, native] = [real.slice(0, colon), real.slice(colon + 1)];
  const dot = native.indexOf(".") < 0 ? native.length : native.indexOf(".");
  const [name, rest] = [native.slice(0, dot), native.slice(dot)];
  const swap = (c) => (/[0-9]/.test(c) ? String((Number(c) + 5) % 10) : /[a-f]/.test(c) ? "0" : /[a-z]/.test(c) ? (c === "q" ? "z" : "q") : c);
  const tail = name.slice(-6).split("").map(swap).join("");
  return `${inst}:${name.slice(0, -6)}${tail}${rest}`;
}

export function tenancySuite(provider) {
  describe(`whose sandbox: ${provider.name}`, { timeout: 600000 }, () => {
    const TOKENS = { alice: token(), bob: token(), root: token() };
    let server, dir, url, auditPath, setup;
    let aliceSb, aliceTask;
    let nextId = 100;
    const made = new Set();

    before(async () => {
      setup = await provider.setup();
      dir = setup.dir || scratchDir("taskbox-tenancy-");
      auditPath = join(dir, "audit.log");
      const tokenFile = join(dir, "tokens");
      writeFileSync(
        tokenFile,
        [`${TOKENS.alice} alice taskbox:run`, `${TOKENS.bob} bob taskbox:run`, `${TOKENS.root} root taskbox:admin`].join("\n") + "\n",
        { mode: 0o600 },
      );
      const port = await freePort();
      server = await serveHttp({
        port,
        dir,
        config: {
          ...setup.config,
          http: { token_file: tokenFile },
          limits: { max_sandbox_timeout_s: 7200, principals: { bob: { max_sandboxes: 2 } } },
          audit: { path: auditPath },
        },
        env: setup.env,
        echo: false,
      });
      url = server.url;
    });

    after(async () => {
      try {
        for (const sandbox_id of made) await call("root", "kill_sandbox", { sandbox_id }).catch(() => {});
        if (server) await server.stop();
      } finally {
        await provider.teardown();
        if (dir && !setup?.dir) rmSync(dir, { recursive: true, force: true });
      }
    });

    async function post(who, body, headers = {}) {
      const r = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${TOKENS[who]}`,
          ...headers,
        },
        body: JSON.stringify(body),
      });
      const text = await r.text();
      let last;
      if ((r.headers.get("content-type") || "").startsWith("text/event-stream")) {
        const frames = text.split("\n\n").filter((f) => f.includes("data: "));
        last = frames.length ? JSON.parse(frames.at(-1).split("\n").find((l) => l.startsWith("data: ")).slice(6)) : undefined;
      } else if (text) last = JSON.parse(text);
      return { status: r.status, headers: r.headers, text, last };
    }

    // A request of MCP 2026-07-28 (no session); caps: the client's
    // capabilities in the envelope.
    function modern(who, method, params = {}, caps = {}, id = nextId++) {
      const named = method === "tools/call" ? params.name : params.taskId;
      const name = named ? { "mcp-name": named } : {};
      return post(
        who,
        { jsonrpc: "2.0", id, method, params: { ...params, _meta: envelope(caps) } },
        { "mcp-protocol-version": MODERN_VERSION, "mcp-method": method, ...name },
      );
    }

    // A tool's structured result, which must not be an error.
    async function call(who, name, args) {
      const r = await modern(who, "tools/call", { name, arguments: args });
      assert.equal(r.status, 200, `${who} ${name}: ${r.status} ${r.text}`);
      assert.ok(r.last?.result, `${who} ${name}: ${r.text}`);
      assert.notEqual(r.last.result.isError, true, `${who} ${name}: ${r.text}`);
      return r.last.result.structuredContent;
    }

    async function create(who, args = {}) {
      const out = await call(who, "create_sandbox", { timeout: 900, ...args });
      made.add(out.sandbox_id);
      return out.sandbox_id;
    }

    // A legacy session opened by who: (method, params, id) => answer.
    async function legacy(who) {
      const r = await post(who, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: LEGACY, capabilities: { tasks: {} }, clientInfo: CLIENT_INFO },
      });
      assert.equal(r.status, 200, r.text);
      const session = r.headers.get("mcp-session-id");
      const h = { "mcp-session-id": session, "mcp-protocol-version": LEGACY };
      assert.equal((await post(who, { jsonrpc: "2.0", method: "notifications/initialized" }, h)).status, 202);
      const send = (method, params, id = nextId++) => post(who, { jsonrpc: "2.0", id, method, params }, h);
      send.end = () => fetch(url, { method: "DELETE", headers: { authorization: `Bearer ${TOKENS[who]}`, ...h } });
      return send;
    }

    // A tool error's message.
    function errorOf(r) {
      assert.equal(r.last?.result?.isError, true, r.text);
      return JSON.parse(r.last.result.content[0].text).error;
    }

    // status + body with both ids (and the JSON-RPC id) made one.
    function normal(r, ...ids) {
      let text = r.text;
      for (const id of ids) text = text.split(id).join("SANDBOX");
      const body = text ? JSON.parse(text.startsWith("event:") || text.startsWith("data:") ? JSON.stringify(r.last) : text) : null;
      if (body && typeof body === "object" && "id" in body) body.id = "ID";
      return { status: r.status, body };
    }

    test("bob's answers about alice's sandbox are his answers about one that never existed; alice's task is untouched", async () => {
      aliceSb = await create("alice");
      const started = await call("alice", "start_task", { sandbox_id: aliceSb, command: "echo alice-was-here; sleep 300" });
      aliceTask = started.task_id;
      // Its output is written before bob tries anything.
      for (let i = 0; i < 100; i++) {
        const v = await call("alice", "get_task", { sandbox_id: aliceSb, task_id: aliceTask });
        if (v.stdout.includes("alice-was-here")) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const ghost = ghostOf(aliceSb);
      const tid = aliceTask;
      const tools = [
        ["get_task", (sb) => ({ sandbox_id: sb, task_id: tid })],
        ["get_task", (sb) => ({ sandbox_id: sb, task_id: tid, wait: 1 })],
        ["cancel_task", (sb) => ({ sandbox_id: sb, task_id: tid })],
        ["remove_task", (sb) => ({ sandbox_id: sb, task_id: tid })],
        ["write_task", (sb) => ({ sandbox_id: sb, task_id: tid, data: "x\n" })],
        ["resize_task", (sb) => ({ sandbox_id: sb, task_id: tid, rows: 40, cols: 100 })],
        ["list_tasks", (sb) => ({ sandbox_id: sb })],
        ["start_task", (sb) => ({ sandbox_id: sb, command: "touch bob-was-here" })],
        ["run_command", (sb) => ({ sandbox_id: sb, command: "touch bob-was-here" })],
        ["read_file", (sb) => ({ sandbox_id: sb, path: "bob.txt" })],
        ["write_file", (sb) => ({ sandbox_id: sb, path: "bob.txt", content: "bob" })],
        ["kill_sandbox", (sb) => ({ sandbox_id: sb })],
      ];
      const table = [];
      for (const [name, args] of tools) {
        const id = nextId++;
        const theirs = await modern("bob", "tools/call", { name, arguments: args(aliceSb) }, {}, id);
        const none = await modern("bob", "tools/call", { name, arguments: args(ghost) }, {}, id);
        assert.deepEqual(normal(theirs, aliceSb, ghost), normal(none, aliceSb, ghost), `${name}: bob about alice's vs about a missing sandbox`);
        assert.equal(theirs.last?.result?.isError, true, `${name} is refused: ${theirs.text}`);
        table.push([name, theirs.text.split(aliceSb).join("SANDBOX"), none.text.split(ghost).join("SANDBOX")]);
      }
      // The Tasks extension (no session).
      for (const method of ["tasks/get", "tasks/cancel"]) {
        const id = nextId++;
        const theirs = await modern("bob", method, { taskId: `${aliceSb}/${tid}` }, tasksCapabilities, id);
        const none = await modern("bob", method, { taskId: `${ghost}/${tid}` }, tasksCapabilities, id);
        assert.deepEqual(normal(theirs, aliceSb, ghost), normal(none, aliceSb, ghost), `${method} (extension)`);
        assert.equal(theirs.status, 200, `${method}: answered, not refused at the edge: ${theirs.text}`);
        assert.match(theirs.last?.error?.message || "", /does not exist/, `${method} is refused as missing: ${theirs.text}`);
        table.push([`${method} (2026-07-28)`, theirs.text.split(aliceSb).join("SANDBOX"), none.text.split(ghost).join("SANDBOX")]);
      }
      // A task made through the Tasks extension's path.
      {
        const id = nextId++;
        const made = (sb) => modern("bob", "tools/call", { name: "start_task", arguments: { sandbox_id: sb, command: "touch bob-was-here" } }, tasksCapabilities, id);
        const theirs = await made(aliceSb);
        const none = await made(ghost);
        assert.deepEqual(normal(theirs, aliceSb, ghost), normal(none, aliceSb, ghost), "start_task as a task (extension)");
        assert.ok(theirs.last?.error || theirs.last?.result?.isError, `refused: ${theirs.text}`);
        table.push(["tools/call start_task as a task (2026-07-28)", theirs.text.split(aliceSb).join("SANDBOX"), none.text.split(ghost).join("SANDBOX")]);
      }
      // The 2025-11-25 tasks utility, in bob's own session.
      const bob = await legacy("bob");
      for (const method of ["tasks/get", "tasks/cancel", "tasks/result"]) {
        const id = nextId++;
        const theirs = await bob(method, { taskId: `${aliceSb}/${tid}` }, id);
        const none = await bob(method, { taskId: `${ghost}/${tid}` }, id);
        assert.deepEqual(normal(theirs, aliceSb, ghost), normal(none, aliceSb, ghost), `${method} (2025-11-25)`);
        assert.ok(theirs.last?.error, `${method} is refused: ${theirs.text}`);
        table.push([`${method} (2025-11-25)`, theirs.text.split(aliceSb).join("SANDBOX"), none.text.split(ghost).join("SANDBOX")]);
      }
      // Alice reads her task through the tasks utility in a session of
      // hers: tasks/list then holds it there (a task seen through its
      // handle), and still not in bob's.
      const alice = await legacy("alice");
      assert.equal((await alice("tasks/get", { taskId: `${aliceSb}/${tid}` })).last?.result?.status, "working");
      const hers = await alice("tasks/list", {});
      assert.ok(hers.text.includes(aliceTask), `alice's tasks/list: ${hers.text}`);
      await alice.end();
      const listed = await bob("tasks/list", {});
      assert.equal(listed.status, 200, listed.text);
      assert.ok(!listed.text.includes(aliceTask), `bob's tasks/list: ${listed.text}`);
      await bob.end();
      if (process.env.TASKBOX_TENANCY_TABLE)
        writeFileSync(`${process.env.TASKBOX_TENANCY_TABLE}.${provider.name.replace(/\W+/g, "-")}.json`, JSON.stringify(table, null, 1));

      // Alice's task and sandbox are as she left them.
      const view = await call("alice", "get_task", { sandbox_id: aliceSb, task_id: aliceTask });
      assert.equal(view.state, "running", JSON.stringify(view));
      assert.equal(view.stdout, "alice-was-here\n");
      const files = await call("alice", "run_command", { sandbox_id: aliceSb, command: "ls" });
      assert.ok(!files.stdout.includes("bob"), `nothing of bob's in alice's sandbox: ${files.stdout}`);
      // The admin reaches it.
      const adminView = await call("root", "get_task", { sandbox_id: aliceSb, task_id: aliceTask });
      assert.equal(adminView.state, "running");
      assert.equal(adminView.stdout, "alice-was-here\n");
    });

    test("list_sandboxes shows each principal its own; the admin any owner's", async () => {
      const bobSb = await create("bob");
      const mine = (out) => out.sandboxes.map((s) => s.sandbox_id).sort();
      const a = await call("alice", "list_sandboxes", {});
      assert.deepEqual(mine(a), [aliceSb], JSON.stringify(a));
      assert.deepEqual(a.unlisted, []);
      const s = a.sandboxes[0];
      assert.equal(s.owner, "alice");
      assert.equal(s.provider, aliceSb.slice(0, aliceSb.indexOf(":")));
      assert.ok(Math.abs(Date.parse(s.created_at) - Date.now()) < 600000, `created_at ${s.created_at}`);
      if (s.expires_at !== null) assert.ok(Date.parse(s.expires_at) > Date.now(), `expires_at ${s.expires_at}`);
      assert.deepEqual(mine(await call("bob", "list_sandboxes", {})), [bobSb]);
      const refused = await modern("bob", "tools/call", { name: "list_sandboxes", arguments: { owner: "alice" } });
      assert.equal(refused.last.result.isError, true);
      assert.match(errorOf(refused), /^owner: .*taskbox:admin/);
      assert.deepEqual(mine(await call("root", "list_sandboxes", { owner: "alice" })), [aliceSb]);
      const every = mine(await call("root", "list_sandboxes", { owner: "*" }));
      assert.ok(every.includes(aliceSb) && every.includes(bobSb), JSON.stringify(every));
      // Paging: one per page, in order, then null.
      const p1 = await call("root", "list_sandboxes", { owner: "*", limit: 1 });
      assert.equal(p1.sandboxes.length, 1);
      assert.ok(p1.next_cursor);
      const p2 = await call("root", "list_sandboxes", { owner: "*", limit: 1, cursor: p1.next_cursor });
      assert.ok(p2.sandboxes[0].sandbox_id > p1.sandboxes[0].sandbox_id);
      const bad = await modern("root", "tools/call", { name: "list_sandboxes", arguments: { cursor: "bm9wZQ==" } });
      assert.match(errorOf(bad), /^cursor: /);
    });

    test("bob's third sandbox is refused naming the limit, and a lifetime past the cap; nothing is created", async () => {
      await create("bob");
      const before = (await call("bob", "list_sandboxes", {})).sandboxes.length;
      assert.equal(before, 2);
      const third = await modern("bob", "tools/call", { name: "create_sandbox", arguments: { timeout: 900 } });
      assert.equal(third.last.result.isError, true, third.text);
      const msg = errorOf(third);
      assert.match(msg, /max_sandboxes/);
      assert.match(msg, /\bbob\b/);
      assert.match(msg, /\b2\b/);
      const long = await modern("alice", "tools/call", { name: "create_sandbox", arguments: { timeout: 7201 } });
      assert.equal(long.last.result.isError, true, long.text);
      assert.match(errorOf(long), /^timeout: .*max_sandbox_timeout_s.*7200/);
      assert.equal((await call("bob", "list_sandboxes", {})).sandboxes.length, 2);
      assert.deepEqual((await call("alice", "list_sandboxes", {})).sandboxes.map((s) => s.sandbox_id), [aliceSb]);
      // Without a timeout, the default lifetime is lowered to the cap
      // where it is higher; here 3600 is within it.
      const ok = await call("alice", "create_sandbox", {});
      made.add(ok.sandbox_id);
      assert.equal(ok.timeout, 3600);
    });

    test("the audit trail records bob's refusals as not_owner and quota, and holds no token", async () => {
      const text = readFileSync(auditPath, "utf8");
      for (const t of Object.values(TOKENS)) assert.ok(!text.includes(t), "no token in the audit trail");
      const records = text.trim().split("\n").map((l) => JSON.parse(l));
      const bobs = records.filter((r) => r.principal === "bob" && r.stage === "response");
      const notOwner = bobs.filter((r) => r.outcome === "not_owner");
      for (const tool of ["get_task", "cancel_task", "kill_sandbox", "write_task", "start_task", "read_file"])
        assert.ok(notOwner.some((r) => r.tool === tool && r.sandbox_id === aliceSb), `a not_owner record of bob's ${tool}`);
      assert.ok(notOwner.some((r) => r.method === "tasks/cancel"), "a not_owner record of bob's tasks/cancel");
      assert.ok(bobs.some((r) => r.tool === "create_sandbox" && r.outcome === "quota"), "a quota record of bob's third create");
      // A missing sandbox is no one's: its answer is a plain tool error.
      assert.ok(bobs.some((r) => r.sandbox_id === ghostOf(aliceSb) && r.outcome === "tool_error"));
    });
  });
}
