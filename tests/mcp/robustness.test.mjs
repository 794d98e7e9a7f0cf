// 10,000 mixed malformed and valid messages into one server process: it
// stays up, answers every valid request correctly and exactly once, answers
// every malformed one with the right error, and never answers a
// notification.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnRaw, initialize } from "./raw.mjs";

const TOTAL = 10000;
const CHUNK = 200; // messages written before waiting for their answers

// A small deterministic PRNG, so a failure can be replayed.
function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = prng(Number(process.env.TASKBOX_ROBUST_SEED || 12345));
const pick = (a) => a[Math.floor(rand() * a.length)];
const word = () => pick(["ab", "x_y", "abc", "zz", "q"]);

const call = (id, name, args) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

// Each maker returns { line (string or Buffer), id?, check?(msg), nullError? }.
const makers = [
  (id) => ({ line: JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }), id,
    check: (m) => assert.deepEqual(m.result, {}) }),
  (id) => {
    const args = { name: word(), count: 1 + Math.floor(rand() * 10), tags: [word()] };
    return { line: JSON.stringify(call(id, "test_echo", args)), id,
      check: (m) => {
        assert.equal(m.result.isError, false);
        assert.deepEqual(m.result.structuredContent.echo, args);
      } };
  },
  (id) => {
    const [args, rule] = pick([
      [{}, /field 'name': missing/],
      [{ name: "ab", bogus: 1 }, /field 'bogus': unknown field/],
      [{ name: 3 }, /field 'name': wrong type/],
      [{ name: "ab", count: 99 }, /field 'count': out of range/],
      [{ name: "a".repeat(5000) }, /field 'name': too long/],
      [{ name: "A-B" }, /field 'name': bad pattern/],
    ]);
    return { line: JSON.stringify(call(id, "test_echo", args)), id,
      check: (m) => {
        assert.equal(m.result.isError, true);
        assert.match(JSON.parse(m.result.content[0].text).error, rule);
      } };
  },
  (id) => ({ line: JSON.stringify(call(id, "nope_tool", {})), id,
    check: (m) => assert.equal(m.error.code, -32602) }),
  (id) => ({ line: JSON.stringify({ jsonrpc: "2.0", id, method: "bogus/method" }), id,
    check: (m) => assert.equal(m.error.code, -32601) }),
  (id) => ({ line: JSON.stringify({ id, method: "ping" }), id,
    check: (m) => assert.equal(m.error.code, -32600) }),
  (id) => ({ line: JSON.stringify({ jsonrpc: "1.0", id, method: "ping" }), id,
    check: (m) => assert.equal(m.error.code, -32600) }),
  (id) => ({ line: JSON.stringify({ jsonrpc: "2.0", id, method: "ping", params: [1] }), id,
    check: (m) => assert.equal(m.error.code, -32602) }),
  () => ({ line: `{"jsonrpc":"2.0","id":1,"method":"ping"`.slice(0, 5 + Math.floor(rand() * 30)),
    nullError: -32700 }),
  () => ({ line: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), nullError: -32700 }),
  () => ({ line: JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }]), nullError: -32600 }),
  () => ({ line: pick(["42", '"str"', "null", "true"]), nullError: -32600 }),
  () => ({ line: JSON.stringify({ jsonrpc: "2.0", id: pick([true, 1.5, {}, [], null]), method: "ping" }),
    nullError: -32600 }),
  () => ({ line: JSON.stringify({ jsonrpc: "2.0", method: pick(["notifications/x", "ping", "tools/call"]) }) }),
  () => ({ line: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled",
    params: { requestId: "never-sent" } }) }),
  () => ({ line: JSON.stringify({ jsonrpc: "2.0", id: "reply", result: {} }) }),
  () => ({ line: pick(["", "   ", "\t"]) }),
];

test("10,000 mixed messages: the server stays up and answers correctly", async () => {
  const raw = spawnRaw(["--test-tools", "--workers", "4"]);
  raw.send(initialize(0, "2025-11-25"));
  await raw.waitFor((m) => m.id === 0);
  raw.send({ jsonrpc: "2.0", method: "notifications/initialized" });

  const expected = new Map();
  let nullErrors = [];
  for (let start = 0; start < TOTAL; start += CHUNK) {
    const ids = [];
    const parts = [];
    for (let i = start; i < Math.min(TOTAL, start + CHUNK); i++) {
      const id = i % 2 ? i + 1 : `s${i}`;
      const m = pick(makers)(id);
      if (m.id !== undefined) {
        expected.set(m.id, m.check);
        ids.push(m.id);
      }
      if (m.nullError) nullErrors.push(m.nullError);
      parts.push(Buffer.isBuffer(m.line) ? m.line : Buffer.from(m.line), Buffer.from("\n"));
    }
    raw.child.stdin.write(Buffer.concat(parts));
    // A ping closes the chunk: answered once everything before it was read.
    const fence = `fence${start}`;
    raw.send({ jsonrpc: "2.0", id: fence, method: "ping" });
    await raw.waitFor((m) => m.id === fence);
    for (const id of ids) await raw.waitFor((m) => m.id === id);
  }
  const { code, signal } = await raw.close();
  assert.equal(signal, null);
  assert.equal(code, 0, "clean exit at end of input");
  assert.equal(raw.trailing, "", "output ends with a complete line");

  const seen = new Map();
  const nullSeen = [];
  for (const m of raw.messages) {
    assert.equal(m.jsonrpc, "2.0");
    if (m.method) {
      assert.fail(`unexpected notification ${m.method}`);
    } else if (m.id === null) {
      nullSeen.push(m.error.code);
    } else if (typeof m.id === "string" && m.id.startsWith("fence")) {
      assert.deepEqual(m.result, {});
    } else if (m.id !== 0) {
      assert.ok(expected.has(m.id), `answer to an unknown id ${m.id}`);
      assert.ok(!seen.has(m.id), `id ${m.id} answered twice`);
      seen.set(m.id, m);
    }
  }
  assert.equal(seen.size, expected.size, "every request answered");
  for (const [id, check] of expected) check(seen.get(id));
  assert.deepEqual(nullSeen.sort(), nullErrors.sort(), "null-id errors");
  assert.ok(expected.size > TOTAL / 3);
});

// Backpressure: 5,000 requests written at once, faster than 2 workers can
// answer them (each tools/call holds its worker a while). The server stops
// reading while its calls fill the queue; every request is answered, none
// with "server busy".
test("5,000 pipelined calls: all answered, none refused busy", { timeout: 300000 }, async () => {
  const raw = spawnRaw(["--test-tools", "--workers", "2"]);
  raw.send(initialize(0, "2025-11-25"));
  await raw.waitFor((m) => m.id === 0);
  raw.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const N = 5000;
  const lines = [];
  for (let id = 1; id <= N; id++)
    lines.push(JSON.stringify(id % 50 === 0
      ? call(id, "test_sleep", { ms: 20 })
      : call(id, "test_echo", { name: `n${id}` })));
  raw.child.stdin.write(lines.join("\n") + "\n");
  await raw.waitFor((m) => m.id === N, 240000);
  for (let id = 1; id <= N; id++) await raw.waitFor((m) => m.id === id, 240000);
  const answers = raw.messages.filter((m) => typeof m.id === "number" && m.id > 0);
  assert.equal(answers.length, N, "each request answered once");
  const errors = answers.filter((m) => m.error);
  assert.deepEqual(errors.map((m) => m.error.message), [], "no request refused");
  const { code } = await raw.close();
  assert.equal(code, 0);
});

// One message may hold at most 16,384 JSON values: a line of empty objects
// under the length cap is refused before it is parsed, and the server goes
// on serving.
test("a message of too many JSON values is refused, and the server serves on", { timeout: 120000 }, async () => {
  const raw = spawnRaw([]);
  raw.send(initialize(0, "2025-11-25"));
  await raw.waitFor((m) => m.id === 0);
  const many = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":[${"{},".repeat(4 * 1024 * 1024)}{}]}}`;
  raw.send(many);
  const refused = await raw.waitFor((m) => m.error && m.id === null, 60000);
  assert.equal(refused.error.code, -32600);
  assert.match(refused.error.message, /more than 16384 JSON values/);
  const fine = `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":[${"{},".repeat(8000)}{}]}}`;
  raw.send(fine);
  const pong = await raw.waitFor((m) => m.id === 2);
  assert.deepEqual(pong.result, {});
  const { code } = await raw.close();
  assert.equal(code, 0);
});
