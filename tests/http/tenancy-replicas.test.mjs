// Whose sandbox across replicas: three `serve --http` replicas (no shared
// memory) on one local state directory behind haproxy, with named static
// tokens for alice and bob and "limits" giving bob two sandboxes.
//   - alice's sandbox, made through the balancer, is hers on every
//     replica: each answers bob about it as about a missing one, and alice
//     and the admin reach it through each
//   - twelve creates of bob's at once, four straight to each replica: his
//     live sandboxes end within max_sandboxes + replicas - 1 (each replica
//     counts and creates one at a time per principal; two others may count
//     before a create lands: docs/configuration.md), and every refusal
//     names the limit; every replica lists the same sandboxes for him
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MODERN_VERSION, envelope, scratchDir, writeConfig } from "../lib/client.mjs";
import { freePort } from "../lib/haproxy.mjs";
import { startBalancer, startReplica } from "./replicas.mjs";
import local from "../contract/providers/local.mjs";
import { ghostOf } from "./tenancy-suite.mjs";

const N = 3;
const MAX = 2;
const token = () => randomBytes(24).toString("base64url");

test(`ownership and quotas hold across ${N} replicas behind haproxy`, { timeout: 300000 }, async () => {
  const TOKENS = { alice: token(), bob: token(), root: token() };
  const dir = scratchDir("taskbox-tenancy-replicas-");
  const p = await local.setup();
  const tokenFile = join(dir, "tokens");
  writeFileSync(tokenFile, `${TOKENS.alice} alice taskbox:run\n${TOKENS.bob} bob taskbox:run\n`, { mode: 0o600 });
  const cfg = writeConfig(dir, { ...p.config, http: { token_file: tokenFile }, limits: { principals: { bob: { max_sandboxes: MAX } } } });
  const env = { ...process.env, ...(p.env || {}) };
  const replicas = [];
  let lb;
  let id = 1;
  // A modern tools/call to url as who: [status, message].
  const call = async (url, who, name, args) => {
    const r = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${TOKENS[who]}`,
        "mcp-protocol-version": MODERN_VERSION,
        "mcp-method": "tools/call",
        "mcp-name": name,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: args, _meta: envelope() } }),
    });
    const text = await r.text();
    const last = r.headers.get("content-type")?.startsWith("text/event-stream")
      ? text.split("\n").filter((l) => l.startsWith("data: ")).pop().slice(6)
      : text;
    return [r.status, JSON.parse(last)];
  };
  const ok = async (url, who, name, args) => {
    const [status, msg] = await call(url, who, name, args);
    assert.equal(status, 200, JSON.stringify(msg));
    assert.notEqual(msg.result.isError, true, `${who} ${name}: ${JSON.stringify(msg)}`);
    return msg.result.structuredContent;
  };
  try {
    for (let i = 0; i < N; i++) replicas.push(await startReplica(`r${i}`, cfg, env, TOKENS.root));
    lb = await startBalancer(dir, await freePort(), replicas);
    const mcp = (r) => `${r.url.replace(/\/$/, "")}`;

    const sb = (await ok(lb.url, "alice", "create_sandbox", { timeout: 900 })).sandbox_id;
    const task = await ok(lb.url, "alice", "start_task", { sandbox_id: sb, command: "echo hers; sleep 120" });
    const ghost = ghostOf(sb);
    for (const r of replicas) {
      for (const name of ["get_task", "cancel_task", "kill_sandbox"]) {
        const args = (s) => (name === "kill_sandbox" ? { sandbox_id: s } : { sandbox_id: s, task_id: task.task_id });
        const [s1, theirs] = await call(mcp(r), "bob", name, args(sb));
        const [s2, none] = await call(mcp(r), "bob", name, args(ghost));
        assert.equal(s1, s2);
        const norm = (m, x) => JSON.parse(JSON.stringify({ ...m, id: 0 }).split(x).join("SANDBOX"));
        assert.deepEqual(norm(theirs, sb), norm(none, ghost), `${r.name} ${name}`);
        assert.equal(theirs.result.isError, true);
      }
      const v = await ok(mcp(r), "alice", "get_task", { sandbox_id: sb, task_id: task.task_id });
      assert.equal(v.state, "running", `${r.name}: alice's task`);
      assert.equal((await ok(mcp(r), "root", "get_task", { sandbox_id: sb, task_id: task.task_id })).state, "running");
    }

    // Twelve creates at once, four to each replica.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(mcp(replicas[i % N]), "bob", "create_sandbox", { timeout: 600 })),
    );
    const made = answers.filter(([, m]) => !m.result.isError).map(([, m]) => m.result.structuredContent.sandbox_id);
    const refused = answers.filter(([, m]) => m.result.isError).map(([, m]) => JSON.parse(m.result.content[0].text).error);
    assert.ok(made.length >= MAX, `at least the limit is made: ${made.length}`);
    assert.ok(made.length <= MAX + N - 1, `within max_sandboxes + replicas - 1: ${made.length} made`);
    for (const e of refused) assert.match(e, /^max_sandboxes: principal bob owns \d+ live sandboxes, its limit is 2/);
    for (const r of replicas) {
      const listed = (await ok(mcp(r), "bob", "list_sandboxes", {})).sandboxes.map((s) => s.sandbox_id).sort();
      assert.deepEqual(listed, [...made].sort(), `${r.name} lists bob's`);
    }
    // At the limit (or past it), every replica refuses the next.
    for (const r of replicas) {
      const [, m] = await call(mcp(r), "bob", "create_sandbox", {});
      assert.equal(m.result.isError, true, `${r.name}: ${JSON.stringify(m)}`);
    }
    for (const s of [sb, ...made]) await ok(lb.url, "root", "kill_sandbox", { sandbox_id: s });
  } finally {
    if (lb) await lb.stop();
    for (const r of replicas) await r.kill("SIGTERM");
    await local.teardown();
    rmSync(dir, { recursive: true, force: true });
  }
});
