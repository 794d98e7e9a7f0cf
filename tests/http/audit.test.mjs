// The audit trail ("audit": {"path": FILE}), seen from its file: a scripted
// HTTP session of the official SDK client, as principal alice, with a
// read-only principal's refusal (403) and an unknown token's (401) beside
// it. Every record is checked field by field: each call that changes
// something has a "request" record before it runs and a "response" record
// with its outcome before its answer; reads leave none; no token, no
// masked value and no written byte reaches the file. SIGHUP after the file
// is renamed (logrotate) starts a new file with nothing lost. With the
// trail on /dev/full every changing call is refused, nothing is created,
// and /healthz says the server is degraded.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLIENT_INFO, callTool, scratchDir, startServer, writeConfig } from "../lib/client.mjs";
import local from "../contract/providers/local.mjs";

const token = () => randomBytes(24).toString("hex");
const TOKENS = { operator: token(), alice: token(), reader: token(), stranger: token() };
const OPERATOR_SECRET = `opsecret-${token()}`;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function data(r, what) {
  assert.ok(!r.isError, `${what}: unexpected tool error: ${r.content?.[0]?.text}`);
  return r.structuredContent ?? JSON.parse(r.content[0].text);
}

function records(path) {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  assert.ok(text === "" || text.endsWith("\n"), "every record ends its line");
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

// The server's own records reach the file before its answers: a short
// wait only covers a record written after this client saw the answer.
async function recordsUntil(path, pred, what) {
  const end = Date.now() + 10000;
  for (;;) {
    const rs = records(path);
    if (pred(rs)) return rs;
    assert.ok(Date.now() < end, `${what}: not in the trail within 10 s:\n${JSON.stringify(rs, null, 1)}`);
    await sleep(50);
  }
}

async function setup(prefix, auditPath) {
  const p = await local.setup();
  const dir = scratchDir(prefix);
  const tokens = join(dir, "tokens");
  writeFileSync(tokens, `${TOKENS.alice} alice\n${TOKENS.reader} reader taskbox:read\n`, { mode: 0o600 });
  const config = {
    ...p.config,
    mask: { values_from_env: ["TB_AUDIT_TEST_SECRET"] },
    http: { token_file: tokens },
    audit: { path: auditPath ?? join(dir, "audit.log") },
  };
  const cfgPath = writeConfig(dir, config);
  const env = { ...p.env, TB_AUDIT_TEST_SECRET: OPERATOR_SECRET };
  const server = await startServer({
    transport: "http",
    client: "v1",
    token: TOKENS.operator,
    args: ["--config", cfgPath],
    env,
  });
  return { server, dir, audit: config.audit.path, root: p.config.providers.local.settings.root };
}

describe("audit trail", () => {
  let server, alice, dir, audit, root;
  const ids = {};

  before(async () => {
    ({ server, dir, audit, root } = await setup("taskbox-audit-"));
    alice = await server.session({ headers: { Authorization: `Bearer ${TOKENS.alice}` } });
  });

  after(async () => {
    if (alice) await alice.close().catch(() => {});
    if (server) await server.close();
    await local.teardown();
  });

  test("a scripted session: one request and one response record per changing call, none for reads", async () => {
    const before = records(audit).length;
    ids.sandbox = data(await callTool(alice.client, "create_sandbox", { timeout: 600 }), "create").sandbox_id;
    const started = data(
      await callTool(alice.client, "start_task", {
        sandbox_id: ids.sandbox,
        command: `sleep 60; echo ${OPERATOR_SECRET}`,
        idempotency_key: "audit-k1",
      }),
      "start_task",
    );
    ids.task = started.task_id;
    data(await callTool(alice.client, "get_task", { sandbox_id: ids.sandbox, task_id: ids.task }), "get_task");
    data(
      await callTool(alice.client, "write_file", { sandbox_id: ids.sandbox, path: "note.txt", content: "hello" }),
      "write_file",
    );
    data(await callTool(alice.client, "cancel_task", { sandbox_id: ids.sandbox, task_id: ids.task }), "cancel_task");
    data(await callTool(alice.client, "kill_sandbox", { sandbox_id: ids.sandbox }), "kill_sandbox");

    const rs = (await recordsUntil(audit, (r) => r.length - before >= 10, "10 records")).slice(before);
    assert.equal(rs.length, 10, JSON.stringify(rs, null, 1));
    const tools = ["create_sandbox", "start_task", "write_file", "cancel_task", "kill_sandbox"];
    for (let i = 0; i < tools.length; i++) {
      const [req, res] = [rs[2 * i], rs[2 * i + 1]];
      for (const [r, stage] of [
        [req, "request"],
        [res, "response"],
      ]) {
        assert.equal(r.stage, stage, JSON.stringify(r));
        assert.match(r.time, TIME);
        assert.match(r.id, /^[0-9a-f]{32}$/);
        assert.equal(r.principal, "alice");
        assert.equal(r.auth, "static");
        assert.equal(r.token_id, "alice");
        assert.deepEqual(r.client, { name: CLIENT_INFO.name, version: CLIENT_INFO.version });
        assert.equal(r.remote, "127.0.0.1");
        assert.equal(r.transport, "http");
        assert.equal(r.era, "legacy");
        assert.equal(r.method, "tools/call");
        assert.equal(r.tool, tools[i]);
      }
      assert.equal(req.id, res.id, "the two records of one call share its id");
      assert.equal(req.outcome, undefined);
      assert.equal(res.outcome, "ok");
      assert.equal(typeof res.duration_ms, "number");
      assert.ok(res.duration_ms >= 0);
      assert.ok(Date.parse(res.time) >= Date.parse(req.time));
    }
    assert.equal(rs[0].sandbox_id, undefined, "create_sandbox's request names no sandbox yet");
    assert.equal(rs[1].sandbox_id, ids.sandbox, "its response names the new one");
    for (const r of rs.slice(2)) assert.equal(r.sandbox_id, ids.sandbox);
    assert.equal(rs[3].task_id, ids.task, "start_task's response names its task");
    assert.equal(rs[2].idempotency_key, "audit-k1");
    assert.equal(rs[2].command, "sleep 60; echo ****", "the command is masked as task output is");
    assert.equal(rs[4].bytes, 5);
    assert.equal(rs[6].task_id, ids.task);
  });

  test("refusals are recorded: 401 for an unknown token, 403 for a scope the principal lacks", async () => {
    const before = records(audit).length;
    const res = await fetch(server.url, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${TOKENS.stranger}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    assert.equal(res.status, 401);
    const reader = await server.session({ headers: { Authorization: `Bearer ${TOKENS.reader}` } });
    try {
      await assert.rejects(
        callTool(reader.client, "start_task", { sandbox_id: "local:x", command: "true" }),
        /Forbidden: tools\/call start_task needs scope taskbox:run/,
      );
    } finally {
      await reader.close().catch(() => {});
    }
    const rs = (await recordsUntil(audit, (r) => r.length - before >= 2, "2 refusals")).slice(before);
    const r401 = rs.find((r) => r.status === 401);
    const r403 = rs.find((r) => r.status === 403);
    assert.ok(r401 && r403, JSON.stringify(rs, null, 1));
    assert.equal(r401.stage, "refused");
    assert.match(r401.time, TIME);
    assert.equal(r401.principal, "");
    assert.equal(r401.remote, "127.0.0.1");
    assert.match(r401.reason, /not one this server accepts/);
    assert.equal(r403.stage, "refused");
    assert.equal(r403.principal, "reader");
    assert.equal(r403.auth, "static");
    assert.equal(r403.method, "tools/call");
    assert.equal(r403.tool, "start_task");
    assert.match(r403.reason, /taskbox:run/);
  });

  test("no token, no masked value and no written byte is in the trail", () => {
    const text = readFileSync(audit, "utf8");
    for (const [what, secret] of [
      ...Object.entries(TOKENS),
      ["the operator's masked value", OPERATOR_SECRET],
    ])
      assert.ok(!text.includes(secret), `${what} is in the audit trail`);
    assert.ok(!text.includes("hello"), "write_file's content is in the audit trail");
  });

  test("SIGHUP after a rename starts a new file, and nothing is lost", async () => {
    const old = records(audit);
    renameSync(audit, `${audit}.1`);
    process.kill(server.pid, "SIGHUP");
    await sleep(200);
    const sb = data(await callTool(alice.client, "create_sandbox", { timeout: 600 }), "create").sandbox_id;
    data(await callTool(alice.client, "kill_sandbox", { sandbox_id: sb }), "kill");
    const fresh = await recordsUntil(audit, (r) => r.length >= 4, "the new file's 4 records");
    assert.deepEqual(
      fresh.map((r) => [r.stage, r.tool]),
      [
        ["request", "create_sandbox"],
        ["response", "create_sandbox"],
        ["request", "kill_sandbox"],
        ["response", "kill_sandbox"],
      ],
    );
    assert.deepEqual(records(`${audit}.1`), old, "the rotated file keeps every earlier record, and gets no later one");
  });
});

describe("audit trail that cannot be written", () => {
  let server, root;

  before(async () => {
    ({ server, root } = await setup("taskbox-audit-full-", "/dev/full"));
  });

  after(async () => {
    if (server) await server.close();
    await local.teardown();
  });

  test("every changing call is refused and creates nothing; /healthz says degraded", async () => {
    const sandboxes = () => (existsSync(root) ? readdirSync(root).filter((n) => !n.startsWith(".")) : []);
    const was = sandboxes();
    const r = await callTool(server.client, "create_sandbox", { timeout: 600 });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(r.content[0].text, /audit: the record of this call could not be written \(No space left on device\)/);
    assert.deepEqual(sandboxes(), was, "a refused create_sandbox left a sandbox");
    const r2 = await callTool(server.client, "run_command", { sandbox_id: "local:none", command: "true" });
    assert.match(r2.content[0].text, /audit: .* the call was refused/);
    const health = await fetch(server.url.replace(/\/mcp$/, "/healthz"));
    assert.equal(health.status, 503);
    assert.match(await health.text(), /degraded: the audit trail cannot be written/);
  });
});
