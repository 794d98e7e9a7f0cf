// The Streamable HTTP transport against the real binary, with node's own
// fetch, http, https and net: sessions and their headers, JSON and SSE
// answers, the caps (body size, in-flight requests, slow connections),
// authentication, Origin and Host checks, idle expiry and its cleanup,
// a client that hangs up mid-call, pipelining, health, metrics and TLS.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { scratchDir, taskboxCommand } from "../lib/client.mjs";
import { serve, TOKEN } from "../lib/http-raw.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const init = (id = 0, protocolVersion = "2025-06-18") => ({
  jsonrpc: "2.0", id, method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "http-test", version: "1" } },
});
const call = (id, name, args = {}, meta) => ({
  jsonrpc: "2.0", id, method: "tools/call",
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

async function post(s, body, { sid, headers = {}, signal } = {}) {
  return fetch(s.url, {
    method: "POST",
    signal,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...s.auth,
      ...(sid ? { "mcp-session-id": sid } : {}),
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

// A new session: its id.
async function open(s, version = "2025-06-18") {
  const r = await post(s, init(0, version));
  assert.equal(r.status, 200);
  const sid = r.headers.get("mcp-session-id");
  assert.match(sid, /^[0-9a-f]{32}$/);
  await r.json();
  const n = await post(s, { jsonrpc: "2.0", method: "notifications/initialized" }, { sid });
  assert.equal(n.status, 202);
  return sid;
}

function sseMessages(text) {
  return text.split("\n\n").filter(Boolean).map((frame) => {
    const lines = frame.split("\n");
    assert.equal(lines[0], "event: message");
    assert.ok(lines[1].startsWith("data: "), frame);
    return JSON.parse(lines[1].slice(6));
  });
}

function data(msg) {
  assert.ok(msg.result, JSON.stringify(msg));
  assert.ok(!msg.result.isError, JSON.stringify(msg.result));
  return msg.result.structuredContent ?? JSON.parse(msg.result.content[0].text);
}

// A raw request through node:http (fetch will not send a foreign Host).
function rawRequest(s, { method = "GET", path = "/mcp", headers = {}, body } = {}) {
  const u = new URL(s.base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers: { ...s.auth, ...headers } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

test("sessions, JSON and SSE answers, headers and DELETE", { timeout: 120000 }, async () => {
  const s = await serve();
  try {
    const sid = await open(s);

    let r = await post(s, { jsonrpc: "2.0", id: 1, method: "ping" });
    assert.equal(r.status, 400);
    let e = await r.json();
    assert.equal(e.id, null);
    assert.match(e.error.message, /Mcp-Session-Id/);

    r = await post(s, { jsonrpc: "2.0", id: 1, method: "ping" }, { sid: "0".repeat(32) });
    assert.equal(r.status, 404);
    assert.match((await r.json()).error.message, /Mcp-Session-Id/);

    // Another version this server serves is accepted (as the spec and
    // the conformance suite have it); one it does not serve is not.
    r = await post(s, { jsonrpc: "2.0", id: 1, method: "ping" }, { sid, headers: { "mcp-protocol-version": "2025-03-26" } });
    assert.equal(r.status, 200);
    assert.deepEqual((await r.json()).result, {});
    r = await post(s, { jsonrpc: "2.0", id: 1, method: "ping" }, { sid, headers: { "mcp-protocol-version": "1999-01-01" } });
    assert.equal(r.status, 400);
    assert.match((await r.json()).error.message, /MCP-Protocol-Version: 1999-01-01 is not a version/);

    r = await post(s, { jsonrpc: "2.0", id: 2, method: "ping" }, { sid, headers: { "mcp-protocol-version": "2025-06-18" } });
    assert.equal(r.status, 200);
    assert.deepEqual((await r.json()).result, {});

    r = await post(s, [{ jsonrpc: "2.0", id: 3, method: "ping" }], { sid });
    assert.equal(r.status, 400);
    assert.equal((await r.json()).error.code, -32600);

    r = await post(s, "{not json", { sid });
    assert.equal(r.status, 400);
    assert.equal((await r.json()).error.code, -32700);

    r = await post(s, { jsonrpc: "2.0", id: 4, method: "ping" }, { sid, headers: { "content-type": "text/plain" } });
    assert.equal(r.status, 415);

    r = await post(s, call(5, "test_simple_text"), { sid });
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type"), /^application\/json/);
    assert.match(data(await r.json()).text, /simple text/);

    r = await post(s, call(6, "test_tool_with_progress", {}, { progressToken: "p6" }), { sid });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "text/event-stream");
    assert.equal(r.headers.get("cache-control"), "no-cache");
    const msgs = sseMessages(await r.text());
    assert.ok(msgs.length >= 2, JSON.stringify(msgs));
    for (const m of msgs.slice(0, -1)) {
      assert.equal(m.method, "notifications/progress");
      assert.equal(m.params.progressToken, "p6");
    }
    assert.equal(msgs.at(-1).id, 6);
    assert.equal(data(msgs.at(-1)).cancelled, false);

    r = await fetch(s.url, { headers: s.auth });
    assert.equal(r.status, 405);
    assert.equal(r.headers.get("allow"), "POST, DELETE");

    r = await fetch(s.url, { method: "DELETE", headers: { ...s.auth, "mcp-session-id": sid } });
    assert.equal(r.status, 204);
    r = await post(s, { jsonrpc: "2.0", id: 7, method: "ping" }, { sid });
    assert.equal(r.status, 404);
    r = await fetch(s.url, { method: "DELETE", headers: { ...s.auth, "mcp-session-id": sid } });
    assert.equal(r.status, 404);
  } finally {
    await s.stop();
  }
});

test("tokens, Origin, Host, health, metrics and the body cap", { timeout: 120000 }, async () => {
  const s = await serve();
  try {
    let r = await fetch(s.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(init()) });
    assert.equal(r.status, 401);
    assert.equal(r.headers.get("www-authenticate"), 'Bearer realm="taskbox"');
    assert.match((await r.json()).error.message, /Authorization/);
    r = await post(s, init(), { headers: { Authorization: "Bearer wrong" } });
    assert.equal(r.status, 401);
    assert.equal(r.headers.get("www-authenticate"), 'Bearer realm="taskbox"');

    r = await post(s, init(), { headers: { Origin: "https://evil.example" } });
    assert.equal(r.status, 403);
    assert.match((await r.json()).error.message, /Origin/);
    r = await post(s, init(), { headers: { Origin: "http://localhost:5173" } });
    assert.equal(r.status, 200);

    let raw = await rawRequest(s, { method: "POST", headers: { Host: "evil.example:80", "content-type": "application/json" }, body: JSON.stringify(init()) });
    assert.equal(raw.status, 403);
    assert.match(JSON.parse(raw.text).error.message, /Host/);
    raw = await rawRequest(s, { method: "POST", headers: { Host: `localhost:${new URL(s.base).port}`, "content-type": "application/json" }, body: JSON.stringify(init()) });
    assert.equal(raw.status, 200);

    r = await fetch(`${s.base}/healthz`);
    assert.equal(r.status, 200);
    assert.equal(await r.text(), "ok");
    r = await fetch(`${s.base}/metrics`);
    assert.equal(r.status, 401);
    r = await fetch(`${s.base}/metrics`, { headers: s.auth });
    assert.equal(r.status, 200);
    const metrics = await r.text();
    assert.match(metrics, /^# TYPE taskbox_http_requests_total counter$/m);
    assert.match(metrics, /^taskbox_http_requests_total\{class="4xx"\} [1-9]/m);
    assert.match(metrics, /^taskbox_http_sessions_open [1-9]/m);
    assert.match(metrics, /^taskbox_http_connections_open \d+$/m);
    assert.match(metrics, /^taskbox_http_requests_in_flight \d+$/m);

    // A Content-Length past the cap: 413 before any body byte is sent.
    const port = Number(new URL(s.base).port);
    const answer = await new Promise((resolve, reject) => {
      const sock = net.connect(port, "127.0.0.1", () => sock.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${16 * 1024 * 1024 + 1}\r\n\r\n`));
      let text = "";
      sock.on("data", (d) => (text += d));
      sock.on("close", () => resolve(text));
      sock.on("error", reject);
    });
    assert.match(answer, /^HTTP\/1\.1 413 /);
  } finally {
    await s.stop();
  }
});

test("a slow client is closed after the idle timeout; others are served", { timeout: 120000 }, async () => {
  const s = await serve({ http: { idle_timeout_s: 1 } });
  try {
    const port = Number(new URL(s.base).port);
    const started = Date.now();
    const closed = new Promise((resolve) => {
      const sock = net.connect(port, "127.0.0.1", () => sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`));
      sock.on("close", () => resolve(Date.now() - started));
      sock.on("error", () => {});
    });
    const sid = await open(s);
    const r = await post(s, { jsonrpc: "2.0", id: 1, method: "ping" }, { sid });
    assert.equal(r.status, 200);
    const ms = await closed;
    assert.ok(ms >= 900 && ms < 15000, `closed after ${ms} ms`);
  } finally {
    await s.stop();
  }
});

test("5,000 pipelined pings on one connection, answered in order", { timeout: 300000 }, async () => {
  const s = await serve();
  try {
    const sid = await open(s);
    const port = Number(new URL(s.base).port);
    const N = 5000;
    let out = "";
    for (let i = 1; i <= N; i++) {
      const body = JSON.stringify({ jsonrpc: "2.0", id: i, method: "ping" });
      out += `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Content-Type: application/json\r\nMcp-Session-Id: ${sid}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    }
    const ids = await new Promise((resolve, reject) => {
      const sock = net.connect(port, "127.0.0.1", () => sock.write(out));
      let buf = Buffer.alloc(0);
      const seen = [];
      sock.on("data", (d) => {
        buf = Buffer.concat([buf, d]);
        for (;;) {
          const end = buf.indexOf("\r\n\r\n");
          if (end < 0) break;
          const head = buf.subarray(0, end).toString();
          const len = Number(/content-length: (\d+)/i.exec(head)?.[1]);
          if (buf.length < end + 4 + len) break;
          assert.match(head, /^HTTP\/1\.1 200 /);
          seen.push(JSON.parse(buf.subarray(end + 4, end + 4 + len).toString()).id);
          buf = buf.subarray(end + 4 + len);
        }
        if (seen.length === N) {
          sock.end();
          resolve(seen);
        }
      });
      sock.on("error", reject);
      sock.on("close", () => resolve(seen));
    });
    assert.equal(ids.length, N);
    ids.forEach((id, i) => assert.equal(id, i + 1));
  } finally {
    await s.stop();
  }
});

test("past the in-flight cap: 503 with Retry-After; a hang-up cancels its call at once", { timeout: 120000 }, async () => {
  const s = await serve({ http: { max_inflight: 2 }, args: ["--log-level", "debug"] });
  try {
    const sid = await open(s);
    const aborts = [new AbortController(), new AbortController()];
    const long = aborts.map((a, i) =>
      post(s, call(10 + i, "test_sleep", { ms: 60000 }), { sid, signal: a.signal }).catch((e) => e));
    await sleep(500);
    const r = await post(s, { jsonrpc: "2.0", id: 20, method: "ping" }, { sid });
    assert.equal(r.status, 503);
    assert.equal(r.headers.get("retry-after"), "1");

    const t0 = Date.now();
    for (const a of aborts) a.abort();
    await Promise.all(long);
    for (const id of [10, 11]) {
      while (!s.log.includes(`call i:${id} cancelled: no answer`)) {
        assert.ok(Date.now() - t0 < 5000, `call ${id} still running 5 s after the hang-up`);
        await sleep(20);
      }
    }
    const p = await post(s, { jsonrpc: "2.0", id: 21, method: "ping" }, { sid });
    assert.equal(p.status, 200);
  } finally {
    await s.stop();
  }
});

test("an idle session ends: its sandboxes are destroyed but one running a task", { timeout: 180000 }, async () => {
  const s = await serve({ http: { session_idle_s: 2 } });
  try {
    const a = await open(s);
    const mk = async (id) => data(await (await post(s, call(id, "create_sandbox", {}), { sid: a })).json()).sandbox_id;
    const plain = await mk(1);
    const kept = await mk(2);
    const task = data(await (await post(s, call(3, "start_task", { sandbox_id: kept, command: "sleep 30" }), { sid: a })).json());

    const t0 = Date.now();
    for (;;) {
      const r = await post(s, { jsonrpc: "2.0", id: 4, method: "ping" }, { sid: a });
      await r.body?.cancel();
      if (r.status === 404) break;
      assert.equal(r.status, 200);
      assert.ok(Date.now() - t0 < 20000, "the session never expired");
      await sleep(2500); // longer than the idle time: this ping finds it gone
    }
    const b = await open(s);
    let gone;
    for (let i = 0; ; i++) {
      const r = await (await post(s, call(10 + i, "run_command", { sandbox_id: plain, command: "true" }), { sid: b })).json();
      if (r.result.isError) { gone = r.result.content[0].text; break; }
      assert.ok(i < 100, "the idle session's sandbox outlived it");
      await sleep(100);
    }
    assert.ok(gone.includes(plain), gone);
    const view = data(await (await post(s, call(200, "get_task", { sandbox_id: kept, task_id: task.task_id }), { sid: b })).json());
    assert.equal(view.state, "running");
    data(await (await post(s, call(201, "cancel_task", { sandbox_id: kept, task_id: task.task_id }), { sid: b })).json());
    data(await (await post(s, call(202, "kill_sandbox", { sandbox_id: kept }), { sid: b })).json());
  } finally {
    await s.stop();
  }
});

test("the tokens reach no sandbox: their variables leave the server's environment", { timeout: 120000 }, async () => {
  const other = randomBytes(24).toString("hex");
  const s = await serve({ http: { token_env: "TB_TEST_OTHER_TOKEN" }, env: { TB_TEST_OTHER_TOKEN: other } });
  try {
    const sid = await open(s);
    // Both sources still authorize.
    const byOther = await post({ ...s, auth: { Authorization: `Bearer ${other}` } }, call(1, "list_tasks"), { sid });
    assert.equal(byOther.status, 200);
    await byOther.text();
    const r = await post(s, call(2, "run_command", {
      command: "env; tr '\\0' '\\n' </proc/self/environ",
    }), { sid });
    assert.equal(r.status, 200);
    const out = data(await r.json());
    assert.equal(out.exit_code, 0, out.stderr);
    assert.match(out.stdout, /^PATH=/m, "the command's environment is there");
    for (const [name, value] of [["TASKBOX_HTTP_TOKEN", TOKEN], ["TB_TEST_OTHER_TOKEN", other]]) {
      assert.doesNotMatch(out.stdout, new RegExp(`^${name}=`, "m"), `${name} reached the command`);
      assert.ok(!out.stdout.includes(value), `${name}'s value reached the command`);
    }
    // The server's own initial environment block holds zeros in their
    // place (not checkable through a wrapper such as valgrind).
    if (taskboxCommand([]).args.length === 0) {
      const block = readFileSync(`/proc/${s.child.pid}/environ`, "latin1");
      assert.ok(!block.includes(TOKEN) && !block.includes(other), "the values are scrubbed");
    }
  } finally {
    await s.stop();
  }
});

test("a non-loopback address without a token is refused at start", { timeout: 60000 }, async () => {
  const env = { ...process.env };
  delete env.TASKBOX_HTTP_TOKEN;
  const { command, args } = taskboxCommand(["serve", "--http", "0.0.0.0:0"]);
  const child = spawn(command, args, { env, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const code = await new Promise((resolve) => child.once("exit", (c) => resolve(c)));
  assert.equal(code, 3, err);
  assert.match(err, /without a token/);
});

test("TLS with a self-signed certificate", { timeout: 120000 }, async () => {
  const dir = scratchDir("taskbox-tls-");
  const cert = join(dir, "cert.pem"), key = join(dir, "key.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], { stdio: "ignore" });
  const s = await serve({ http: { tls: { cert, key } } });
  try {
    assert.match(s.url, /^https:\/\//);
    const u = new URL(s.url);
    const body = JSON.stringify(init());
    const res = await new Promise((resolve, reject) => {
      const req = https.request({
        host: u.hostname, port: u.port, path: u.pathname, method: "POST", ca: [execFileSync("cat", [cert])],
        headers: { ...s.auth, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      }, (r) => {
        let text = "";
        r.on("data", (d) => (text += d));
        r.on("end", () => resolve({ status: r.statusCode, headers: r.headers, text }));
      });
      req.on("error", reject);
      req.end(body);
    });
    assert.equal(res.status, 200);
    assert.match(res.headers["mcp-session-id"], /^[0-9a-f]{32}$/);
    assert.equal(JSON.parse(res.text).result.protocolVersion, "2025-06-18");
  } finally {
    await s.stop();
  }
});

test("/metrics counts requests and errors by method and tool, calls in flight and parked, tasks started and provider calls", { timeout: 120000 }, async () => {
  const s = await serve();
  try {
    const sid = await open(s);
    const sb = data(await (await post(s, call(1, "create_sandbox"), { sid })).json()).sandbox_id;
    const t = data(await (await post(s, call(2, "start_task", { sandbox_id: sb, command: "sleep 30" }), { sid })).json());
    // A tool error, a JSON-RPC error, and a wait that is parked meanwhile.
    const bad = await (await post(s, call(3, "get_task", { sandbox_id: sb, task_id: "0".repeat(32) }), { sid })).json();
    assert.equal(bad.result.isError, true);
    const none = await (await post(s, call(4, "no_such_tool"), { sid })).json();
    assert.ok(none.error, JSON.stringify(none));
    const waiting = post(s, call(5, "get_task", { sandbox_id: sb, task_id: t.task_id, wait: 30 }), { sid });
    let text = "";
    for (let i = 0; i < 100 && !/^taskbox_calls_parked 1$/m.test(text); i++) {
      await sleep(50);
      text = await (await fetch(`${s.base}/metrics`, { headers: s.auth })).text();
    }
    const value = (line) => {
      const m = new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} (\\S+)$`, "m").exec(text);
      assert.ok(m, `no ${line} in:\n${text}`);
      return Number(m[1]);
    };
    assert.equal(value("taskbox_calls_parked"), 1);
    assert.equal(value("taskbox_calls_in_flight"), 1);
    assert.equal(value('taskbox_mcp_requests_total{method="initialize"}'), 1);
    assert.equal(value('taskbox_mcp_requests_total{method="tools/call"}'), 5);
    assert.equal(value('taskbox_mcp_request_errors_total{method="tools/call"}'), 1);
    assert.equal(value('taskbox_tool_calls_total{tool="create_sandbox"}'), 1);
    assert.equal(value('taskbox_tool_calls_total{tool="start_task"}'), 1);
    assert.equal(value('taskbox_tool_errors_total{tool="get_task"}'), 1);
    assert.equal(value("taskbox_tasks_started_total"), 1);
    assert.equal(value('taskbox_provider_calls_total{op="create"}'), 1);
    assert.ok(value('taskbox_provider_calls_total{op="read_file"}') > 0);
    assert.equal(value('taskbox_provider_call_seconds_count{op="create"}'), 1);
    assert.equal(value('taskbox_provider_call_seconds_bucket{op="create",le="+Inf"}'), 1);
    assert.match(text, /^# TYPE taskbox_provider_call_seconds histogram$/m);
    // The wait ends with a cancel; then nothing is parked or in flight.
    await post(s, call(6, "cancel_task", { sandbox_id: sb, task_id: t.task_id }), { sid });
    await (await waiting).text();
    text = await (await fetch(`${s.base}/metrics`, { headers: s.auth })).text();
    assert.equal(value("taskbox_calls_parked"), 0);
    assert.equal(value("taskbox_calls_in_flight"), 0);
  } finally {
    await s.stop();
  }
});
