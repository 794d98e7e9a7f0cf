// Slow clients against the connections' deadlines: heads and bodies
// trickled a byte at a time are cut a bounded time after their request
// began, whatever their pace, and clients that have not authenticated
// cannot take every connection, so a normal client keeps being answered.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { serve, raw, head, INIT, TOKEN } from "../lib/http-raw.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Opens a socket that sends text one byte every ms (after first, sent at
// once) until the server closes it. closed resolves with the milliseconds
// it stayed open.
function trickle(port, first, text, ms = 1000) {
  const started = Date.now();
  const sock = net.connect(port, "127.0.0.1");
  let i = 0, timer;
  const closed = new Promise((resolve) => {
    sock.on("close", () => { clearInterval(timer); resolve(Date.now() - started); });
  });
  sock.on("error", () => {});
  sock.on("connect", () => {
    sock.write(first);
    timer = setInterval(() => { if (!sock.destroyed) sock.write(text[i++ % text.length]); }, ms);
  });
  return { closed, sock, isOpen: () => !sock.destroyed && !sock.readableEnded };
}

// Initialize requests, each on a new connection, four a second for ms:
// how many were answered 200.
async function normalClient(s, ms) {
  const end = Date.now() + ms;
  let answered = 0;
  while (Date.now() < end) {
    const r = await raw(s.port, head("POST", "/mcp", [`Host: ${s.host}`, `Authorization: Bearer ${TOKEN}`,
      "Content-Type: application/json", "Accept: application/json, text/event-stream",
      `Content-Length: ${INIT.length}`]) + INIT, Math.max(100, end - Date.now()));
    if (r.status === 200) answered++;
    await sleep(250);
  }
  return answered;
}

// One server for the token tests: max_connections 8 (so 2 unauthenticated
// at most), short deadlines.
let s;
before(async () => {
  s = await serve({ http: { max_connections: 8, idle_timeout_s: 30, header_timeout_s: 3, body_timeout_s: 2 } });
});
after(async () => { await s.stop(); });

const headPrefix = (s) => `POST /mcp HTTP/1.1\r\nHost: ${s.host}\r\n`;
const filler = "X-Slow: " + "a".repeat(200);

test("a head trickled a byte a second is cut after header_timeout_s (no token asked: the deadline alone)", { timeout: 60000 }, async () => {
  const s = await serve({ token: null, http: { header_timeout_s: 2, idle_timeout_s: 30 } });
  try {
    const t = trickle(s.port, headPrefix(s), filler);
    const ms = await Promise.race([t.closed, sleep(10000).then(() => null)]);
    t.sock.destroy();
    console.log(`head trickle: open ${ms === null ? "over 10000" : ms} ms`);
    assert.ok(ms !== null, "still open after 10 s");
    assert.ok(ms >= 1500 && ms < 6000, `closed after ${ms} ms`);
  } finally {
    await s.stop();
  }
});

test("a body trickled a byte a second after a valid head is cut after body_timeout_s", { timeout: 60000 }, async () => {
  const t = trickle(s.port, head("POST", "/mcp", [`Host: ${s.host}`, `Authorization: Bearer ${TOKEN}`,
    "Content-Type: application/json", "Content-Length: 1000"]), " ");
  const ms = await Promise.race([t.closed, sleep(10000).then(() => null)]);
  t.sock.destroy();
  console.log(`body trickle: open ${ms === null ? "over 10000" : ms} ms`);
  assert.ok(ms !== null, "still open after 10 s");
  assert.ok(ms >= 1500 && ms < 6000, `closed after ${ms} ms`);
});

test("an authenticated connection may wait idle between requests past header_timeout_s", { timeout: 60000 }, async () => {
  const sock = net.connect(s.port, "127.0.0.1");
  let text = "";
  sock.on("data", (d) => (text += d));
  await new Promise((r) => sock.on("connect", r));
  const req = head("POST", "/mcp", [`Host: ${s.host}`, `Authorization: Bearer ${TOKEN}`,
    "Content-Type: application/json", "Accept: application/json, text/event-stream",
    `Content-Length: ${INIT.length}`]).replace("Connection: close\r\n", "") + INIT;
  sock.write(req);
  await sleep(3000);
  assert.ok(!sock.destroyed && !sock.readableEnded, "closed while idle");
  sock.write(req);
  await sleep(1000);
  sock.destroy();
  assert.equal((text.match(/HTTP\/1\.1 200/g) || []).length, 2, text.slice(0, 300));
});

test("slowloris with few sockets: 8 trickling heads and max_connections 8 leave a normal client served", { timeout: 60000 }, async () => {
  const socks = [];
  try {
    for (let i = 0; i < 8; i++) socks.push(trickle(s.port, "P", headPrefix(s).slice(1) + filler));
    await sleep(1000);
    const answered = await normalClient(s, 8000);
    const open = socks.filter((t) => t.isOpen()).length;
    console.log(`few sockets: ${answered} answers in 8 s; ${open} of 8 trickling sockets open after 9 s`);
    assert.ok(answered >= 3, `${answered} answers in 8 s`);
    assert.equal(open, 0, `${open} trickling sockets still open after 9 s`);
  } finally {
    for (const t of socks) t.sock.destroy();
  }
});

test("slowloris with many sockets: 300 trickling heads against max_connections 256 are bounded, a normal client is served", { timeout: 90000 }, async () => {
  const s = await serve({ http: { max_connections: 256, idle_timeout_s: 30, header_timeout_s: 3 } });
  const socks = [];
  try {
    for (let i = 0; i < 300; i++) socks.push(trickle(s.port, "P", headPrefix(s).slice(1) + filler));
    await sleep(1000);
    const answered = await normalClient(s, 8000);
    const open = socks.filter((t) => t.isOpen()).length;
    const times = await Promise.all(socks.map((t) => Promise.race([t.closed, sleep(100).then(() => null)])));
    const longest = Math.max(...times.map((t) => t ?? Infinity));
    console.log(`many sockets: ${answered} answers in 8 s; ${open} of 300 open after 9 s; longest open ${longest} ms`);
    assert.ok(answered >= 3, `${answered} answers in 8 s`);
    assert.equal(open, 0, `${open} trickling sockets still open after 9 s`);
  } finally {
    for (const t of socks) t.sock.destroy();
    await s.stop();
  }
});
