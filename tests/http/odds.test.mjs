// Requests no well-behaved client sends, over raw sockets: a chunked body
// past the cap, NULs and other control bytes in header values, a missing
// or repeated Host, a DELETE with a body. Each gets a JSON-RPC error (or,
// for the DELETE, its usual answer), never a closed connection or a
// request served as if the bytes were not there.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { serve, raw, parse, head, assertRpcError, INIT, TOKEN } from "../lib/http-raw.mjs";

let s;
before(async () => { s = await serve(); });
after(async () => { await s.stop(); });

const json = ["Content-Type: application/json", "Accept: application/json, text/event-stream"];
const post = (fields, body = INIT) =>
  head("POST", "/mcp", [...fields, ...json, `Content-Length: ${Buffer.byteLength(body)}`]) + body;

test("a well-formed initialize is served (the baseline of the cases below)", async () => {
  const r = await raw(s.port, post([`Host: ${s.host}`, `Authorization: Bearer ${TOKEN}`]));
  assert.equal(r.status, 200, r.text);
});

test("a chunked body past 16 MiB: 413 with a JSON-RPC error", { timeout: 120000 }, async () => {
  const r = await new Promise((resolve) => {
    const chunks = [];
    const sock = net.connect(s.port, "127.0.0.1");
    const piece = Buffer.alloc(1 << 20, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < 17) {
        sent++;
        if (!sock.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]))) {
          sock.once("drain", pump);
          return;
        }
      }
      sock.write("0\r\n\r\n");
    };
    sock.on("connect", () => {
      sock.write(head("POST", "/mcp", [`Host: ${s.host}`, `Authorization: Bearer ${TOKEN}`, ...json,
        "Transfer-Encoding: chunked"]));
      pump();
    });
    sock.on("data", (d) => chunks.push(d));
    sock.on("error", () => {});
    sock.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
  });
  assertRpcError(parse(r), 413, /Payload Too Large/);
});

test("a NUL in Authorization: 400, not the token before it", async () => {
  const r = await raw(s.port, post([`Host: ${s.host}`, `Authorization: Bearer ${TOKEN}\0junk`]));
  assertRpcError(r, 400, /header Authorization: a control character \(NUL\)/);
});

test("a NUL in Host: 400, not the host before it", async () => {
  const r = await raw(s.port, post([`Host: localhost\0.evil.com`, `Authorization: Bearer ${TOKEN}`]));
  assertRpcError(r, 400, /header Host: a control character \(NUL\)/);
});

test("a NUL in the last field's value: 400", async () => {
  const body = INIT;
  const r = await raw(s.port, head("POST", "/mcp", [`Host: ${s.host}`, `Authorization: Bearer ${TOKEN}`, ...json,
    `Content-Length: ${body.length}`, "Connection: close", "X-Last: a\0b"]).replace("Connection: close\r\n\r\n", "\r\n") + body);
  assertRpcError(r, 400, /header X-Last: a control character \(NUL\)/);
});

test("another control byte in a value: 400", async () => {
  const r = await raw(s.port, post([`Host: ${s.host}`, `Authorization: Bearer ${TOKEN}`, "X-Note: a\x01b"]));
  assertRpcError(r, 400, /header X-Note: a control character/);
});

test("a space before a field's colon: 400", async () => {
  const r = await raw(s.port, post([`Host: ${s.host}`, `Authorization: Bearer ${TOKEN}`, "X-Note : a"]));
  assertRpcError(r, 400, /field name/);
});

test("no Host (HTTP/1.1): 400", async () => {
  const r = await raw(s.port, post([`Authorization: Bearer ${TOKEN}`]));
  assertRpcError(r, 400, /header Host: required/);
});

test("no Host (HTTP/1.0): 400; a health probe without one is answered", async () => {
  const r = await raw(s.port, post([`Authorization: Bearer ${TOKEN}`]).replace("HTTP/1.1", "HTTP/1.0"));
  assertRpcError(r, 400, /header Host: required/);
  const h = await raw(s.port, "GET /healthz HTTP/1.0\r\n\r\n");
  assert.equal(h.status, 200, h.text);
});

test("two Host fields: 400", async () => {
  const r = await raw(s.port, post([`Host: ${s.host}`, "Host: evil.example", `Authorization: Bearer ${TOKEN}`]));
  assertRpcError(r, 400, /header Host: given more than once/);
});

test("a DELETE with a body is answered", async () => {
  const body = "{}";
  const r = await raw(s.port, head("DELETE", "/mcp", [`Host: ${s.host}`, `Authorization: Bearer ${TOKEN}`,
    "Mcp-Session-Id: 00000000000000000000000000000000", `Content-Length: ${body.length}`]) + body);
  assertRpcError(r, 404, /Session not found/);
});
