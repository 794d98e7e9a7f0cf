// Large answers that their clients do not read: 16 raw sockets ask for
// 1 MiB read_file pages of control bytes (each answer is about 13.6 MB of
// JSON escapes) and never read a byte, then go. The answers not yet taken
// stay within the configured budget ($.http.answer_budget_mib): the
// server's RSS at the peak stays under a bound derived from it, the memory
// goes back once the clients are gone, a normal client is answered all
// along, and a large read-only answer past the budget is a tool error
// naming it (docs/answer-budget.md).
//
// The server runs without TASKBOX_TEST_WRAPPER: valgrind's RSS says
// nothing about the server's. Under ASan (its shadow memory and its
// quarantine of freed blocks) the RSS bounds are not asserted either;
// everything else is.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import net from "node:net";
import { callTool, scratchDir, startServer, writeConfig } from "../lib/client.mjs";

const BUDGET_MIB = 16;
const CLIENTS = 16;
const PAGE = 1048576;
// A read by the normal client: its answer (about 3.4 MB) does not fit
// beside one unread page in the budget.
const PART = 262144;
const MIB = 1048576;
// Beyond the budget: the idle server, each worker's page before its answer
// is built (the bytes read and their JSON string), the answer being built.
const PEAK_SLACK_MIB = 96;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function data(result) {
  assert.ok(!result.isError, `tool error: ${result.content?.[0]?.text}`);
  return result.structuredContent ?? JSON.parse(result.content[0].text);
}

// The server's resident memory, in bytes.
function rss(pid) {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m[1]) * 1024;
}

// Whether the server runs under ASan (its runtime is mapped).
function sanitized(pid) {
  return /libasan|libclang_rt\.asan/.test(readFileSync(`/proc/${pid}/maps`, "utf8"));
}

async function metric(server, name) {
  const r = await fetch(new URL("/metrics", server.url), { headers: server.headers });
  assert.equal(r.status, 200);
  const m = new RegExp(`^${name} (\\d+)$`, "m").exec(await r.text());
  assert.ok(m, `${name} in /metrics`);
  return Number(m[1]);
}

// A raw POST of a read_file call in the server's session, on a socket that
// is never read.
function unreadCall(server, id, args) {
  const { port } = new URL(server.url);
  const body = JSON.stringify({
    jsonrpc: "2.0", id, method: "tools/call", params: { name: "read_file", arguments: args },
  });
  const sock = net.connect(Number(port), "127.0.0.1", () =>
    sock.write(
      `POST ${new URL(server.url).pathname} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
        `Authorization: Bearer ${server.token}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${server.sessionId}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    ),
  );
  sock.pause(); // nothing read past node's first small buffer
  sock.on("error", () => {});
  return sock;
}

test("16 unread 1 MiB read_file answers stay within the answer budget and their memory goes back", { timeout: 180000 }, async () => {
  const dir = scratchDir("taskbox-answers-");
  const config = writeConfig(dir, {
    default: "local",
    providers: { local: { plugin: "local", settings: {} } },
    http: { answer_budget_mib: BUDGET_MIB },
  });
  const server = await startServer({
    transport: "http",
    client: "v1",
    wrapper: [], // never valgrind: its RSS is not the server's
    args: ["--config", config],
    env: { XDG_STATE_HOME: join(dir, "state") },
  });
  const socks = [];
  let sb;
  let sampling = false;
  try {
    const { client } = server;
    const asan = sanitized(server.pid);
    sb = data(await callTool(client, "create_sandbox", {})).sandbox_id;
    // 1 MiB of control bytes: each becomes \u00XX, then \\u00XX in the
    // text block that repeats structuredContent.
    const bytes = Buffer.alloc(PAGE, 0).map((_, i) => 1 + (i % 7));
    data(await callTool(client, "write_file", { sandbox_id: sb, path: "ctl.bin", content: bytes.toString("base64"), encoding: "base64" }));
    await sleep(500);
    const idle = rss(server.pid);

    let peak = idle;
    sampling = true;
    const sampler = (async () => {
      while (sampling) {
        try {
          peak = Math.max(peak, rss(server.pid));
        } catch {
          break; // the server is gone: the test says why
        }
        await sleep(20);
      }
    })();
    for (let i = 0; i < CLIENTS; i++)
      socks.push(unreadCall(server, 1000 + i, { sandbox_id: sb, path: "ctl.bin", length: PAGE }));

    // A normal client is answered all along, and a large answer past the
    // budget is refused with a tool error that names the budget.
    // At least 3 s of it, and until the first unread answer is written
    // (slower under ASan).
    let refused = null;
    const start = Date.now();
    while (Date.now() - start < 3000 || (!refused && Date.now() - start < 60000)) {
      const t0 = Date.now();
      data(await callTool(client, "read_file", { sandbox_id: sb, path: "ctl.bin", length: 64 }, { timeout: 15000 }));
      assert.ok(Date.now() - t0 < 10000, "a small read_file answered within 10 s");
      const big = await callTool(client, "read_file", { sandbox_id: sb, path: "ctl.bin", length: PART }, { timeout: 30000 });
      if (big.isError) refused = big.content[0].text;
      await sleep(200);
    }
    const unsent = await metric(server, "taskbox_http_answer_bytes_unsent");
    assert.ok(unsent > 0, "the unread answers are counted as unsent");
    assert.ok(refused, "a large answer past the budget is refused while the budget is full");
    assert.match(refused, /answer_budget_mib/);

    for (const s of socks) s.destroy();
    socks.length = 0;
    await sleep(5000);
    sampling = false;
    await sampler;
    const after = rss(server.pid);
    // Nothing unsent once the calls of the clients gone have ended (an
    // answer being built when its client left counts until then).
    let left;
    for (let i = 0; i < 600 && (left = await metric(server, "taskbox_http_answer_bytes_unsent")) !== 0; i++) await sleep(100);
    assert.equal(left, 0, "nothing unsent once the clients are gone");
    // Served again once the budget has room.
    assert.equal(data(await callTool(client, "read_file", { sandbox_id: sb, path: "ctl.bin", length: PART })).content.length, PART);

    const mb = (n) => (n / MIB).toFixed(1);
    console.log(`# RSS idle ${mb(idle)} MiB, peak ${mb(peak)} MiB, 5 s after ${mb(after)} MiB (budget ${BUDGET_MIB} MiB${asan ? ", ASan: not asserted" : ""})`);
    if (!asan) {
      assert.ok(peak < (BUDGET_MIB + PEAK_SLACK_MIB) * MIB,
        `peak RSS ${mb(peak)} MiB, over the budget ${BUDGET_MIB} MiB + ${PEAK_SLACK_MIB} MiB`);
      assert.ok(after < 2 * idle + 16 * MIB,
        `RSS ${mb(after)} MiB 5 s after the clients left, over 2 x idle (${mb(idle)} MiB) + 16 MiB`);
    }
  } finally {
    sampling = false;
    for (const s of socks) s.destroy();
    if (sb) await callTool(server.client, "kill_sandbox", { sandbox_id: sb }).catch(() => {});
    await server.close();
  }
});
