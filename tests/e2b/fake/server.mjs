// A loopback fake of E2B's two planes for the tests: the REST control plane
// and envd behind the sandbox proxy. Commands run for real, each sandbox in
// its own temporary home directory.
//
// Usage: node server.mjs [--latency-ms N]
//   E2B_FAKE_API_KEY sets the accepted key.
//   --latency-ms N (or TASKBOX_E2B_FAKE_LATENCY_MS=N; the flag wins) adds N
//   ms of latency to every request either plane serves: a request is taken
//   up N ms after it arrives, so the first byte of every answer (a Connect
//   stream's first envelope included) leaves at least N ms after the
//   request came in; the later chunks of a stream are not held back. The
//   test switches under /_fake/ are not delayed; POST /_fake/latency
//   {"ms": N} changes the latency of a running fake.
// Prints one JSON line {"api_url", "sandbox_url", "api_key"} on stdout, then
// serves on 127.0.0.1 until its parent goes away (stdin closes or the parent
// pid changes) or it gets SIGTERM; it then kills every sandbox.
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Sandboxes } from "./sandboxes.mjs";
import { makeApiHandler } from "./api.mjs";
import { makeEnvdHandler } from "./envd.mjs";

const LOGGED_HEADERS = [
  "content-type",
  "transfer-encoding",
  "content-length",
  "e2b-sandbox-id",
  "e2b-sandbox-port",
  "connect-protocol-version",
  "connect-timeout-ms",
  "keepalive-ping-interval",
  "range",
  "user-agent",
];

function latencyOption() {
  const args = process.argv.slice(2);
  let value = process.env.TASKBOX_E2B_FAKE_LATENCY_MS || "0";
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--latency-ms" && i + 1 < args.length) value = args[++i];
    else if (args[i].startsWith("--latency-ms=")) value = args[i].slice("--latency-ms=".length);
    else {
      process.stderr.write(`e2b fake: unknown argument ${args[i]}\n`);
      process.exit(2);
    }
  }
  const ms = Number(value);
  if (!Number.isFinite(ms) || ms < 0) {
    process.stderr.write(`e2b fake: the latency must be a number of ms >= 0, not ${value}\n`);
    process.exit(2);
  }
  return ms;
}

const fake = {
  latencyMs: latencyOption(),
  apiKey: process.env.E2B_FAKE_API_KEY || "e2b_" + randomBytes(20).toString("hex"),
  sandboxes: new Sandboxes(),
  rateLimit: { count: 0, retryAfter: 1 },
  faults: { delayMs: 0, echoKey: false, ignoreMetadataQuery: false, startDelayMs: 0 },
  listPageMax: 0,
  unknownTemplates: new Set(["no-such-template"]),
  requests: [],
  log(plane, req) {
    const headers = {};
    for (const h of LOGGED_HEADERS) if (req.headers[h] !== undefined) headers[h] = req.headers[h];
    headers["has-x-api-key"] = req.headers["x-api-key"] !== undefined;
    headers["has-x-access-token"] = req.headers["x-access-token"] !== undefined;
    if (this.requests.length < 10000)
      this.requests.push({ plane, method: req.method, url: req.url, headers, at: Date.now() });
  },
};

// The handler, taken up latencyMs after each request arrives (the test
// switches under /_fake/ at once). The time is checked against the clock,
// not left to the timer alone (a timer may fire up to a millisecond early).
function withLatency(handler) {
  return (req, res) => {
    const ms = fake.latencyMs;
    if (!(ms > 0) || req.url.startsWith("/_fake/")) return handler(req, res);
    const due = performance.now() + ms;
    const later = () => {
      const left = due - performance.now();
      if (left > 0) setTimeout(later, Math.max(1, Math.ceil(left)));
      else handler(req, res);
    };
    setTimeout(later, Math.ceil(ms));
  };
}

function listen(handler) {
  return new Promise((resolve, reject) => {
    const server = createServer(withLatency(handler));
    server.keepAliveTimeout = 5000;
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

const api = await listen(makeApiHandler(fake));
const envd = await listen(makeEnvdHandler(fake));

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  fake.sandboxes.killAll();
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.stdin.resume();
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop();
}, 500).unref();

process.stdout.write(
  JSON.stringify({
    api_url: `http://127.0.0.1:${api.address().port}`,
    sandbox_url: `http://127.0.0.1:${envd.address().port}`,
    api_key: fake.apiKey,
  }) + "\n",
);
