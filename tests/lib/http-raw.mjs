// A taskbox HTTP server for a test, and raw requests to it over node:net
// (bytes node's HTTP clients refuse to send: NULs, repeated or missing Host,
// trickled heads and bodies).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import net from "node:net";
import { scratchDir, spawnListening } from "./client.mjs";

export const TOKEN = randomBytes(24).toString("hex");

// Starts `taskbox serve --http LISTEN --test-tools ARGS` (LISTEN
// 127.0.0.1:0 unless given; null: no --http) on the local provider, with an
// optional config "http" section, token (null: none) and extra environment;
// resolves once it says where it listens.
export async function serve({ http: section, token = TOKEN, args = [], listen = "127.0.0.1:0", env: extraEnv = {} } = {}) {
  const dir = scratchDir("taskbox-http-");
  const config = join(dir, "config.json");
  writeFileSync(config, JSON.stringify({
    default: "local",
    providers: { local: { plugin: "local", settings: {} } },
    ...(section ? { http: section } : {}),
  }));
  const env = { ...process.env, XDG_STATE_HOME: join(dir, "state"), ...extraEnv };
  delete env.TASKBOX_HTTP_TOKEN;
  if (token) env.TASKBOX_HTTP_TOKEN = token;
  const srv = await spawnListening(
    ["serve", "--config", config, "--test-tools", ...(listen ? ["--http", listen] : []), ...args],
    env,
  );
  const { url, child, exited } = srv;
  const port = Number(new URL(url).port);
  return {
    url, port, dir, token, child, exited,
    base: url.replace(/\/mcp$/, ""),
    host: `127.0.0.1:${port}`,
    auth: token ? { Authorization: `Bearer ${token}` } : {},
    get log() { return srv.log(); },
    stop: srv.stop,
  };
}

export const INIT = JSON.stringify({
  jsonrpc: "2.0", id: 0, method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

// Sends bytes (a string in latin1, or a Buffer) on a new connection and
// reads until the server closes it or ms pass. Resolves with the status
// (0: none), the headers (lower-case names), the body and whether it
// closed.
export function raw(port, bytes, ms = 10000) {
  return new Promise((resolve) => {
    const chunks = [];
    const sock = net.connect(port, "127.0.0.1", () =>
      sock.write(typeof bytes === "string" ? Buffer.from(bytes, "latin1") : bytes));
    let done = false;
    const finish = (closed) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...parse(Buffer.concat(chunks).toString("latin1")), closed });
    };
    const timer = setTimeout(() => finish(false), ms);
    sock.on("data", (d) => chunks.push(d));
    sock.on("error", () => {});
    sock.on("close", () => finish(true));
  });
}

// The first answer in text: status, headers and body (by Content-Length).
export function parse(text) {
  const end = text.indexOf("\r\n\r\n");
  if (!text.startsWith("HTTP/1.") || end < 0) return { status: 0, headers: {}, body: "", text };
  const [line, ...fields] = text.slice(0, end).split("\r\n");
  const headers = {};
  for (const f of fields) {
    const i = f.indexOf(":");
    headers[f.slice(0, i).toLowerCase()] = f.slice(i + 1).trim();
  }
  const length = Number(headers["content-length"] ?? text.length);
  return { status: Number(line.split(" ")[1]), headers, body: text.slice(end + 4, end + 4 + length), text };
}

// Asserts a JSON-RPC error answer (id null) with this status.
export function assertRpcError(r, status, pattern) {
  assert.equal(r.status, status, `status ${r.status}: ${r.text.slice(0, 300)}`);
  assert.match(r.headers["content-type"] || "", /^application\/json/);
  const msg = JSON.parse(r.body);
  assert.equal(msg.jsonrpc, "2.0");
  assert.equal(msg.id, null);
  assert.equal(typeof msg.error.code, "number");
  if (pattern) assert.match(msg.error.message, pattern);
  return msg;
}

// A request head (HTTP/1.1, Connection: close) for path with fields.
export function head(method, path, fields) {
  return `${method} ${path} HTTP/1.1\r\n${fields.map((f) => f + "\r\n").join("")}Connection: close\r\n\r\n`;
}
