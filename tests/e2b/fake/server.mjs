// A loopback fake of E2B's two planes for the tests: the REST control plane
// and envd behind the sandbox proxy. Commands run for real, each sandbox in
// its own temporary home directory.
//
// Usage: node server.mjs   (E2B_FAKE_API_KEY sets the accepted key)
// Prints one JSON line {"api_url", "sandbox_url", "api_key"} on stdout, then
// serves on 127.0.0.1 until its parent goes away (stdin closes or the parent
// pid changes) or it gets SIGTERM; it then kills every sandbox.
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
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

const fake = {
  apiKey: process.env.E2B_FAKE_API_KEY || "e2b_" + randomBytes(20).toString("hex"),
  sandboxes: new Sandboxes(),
  rateLimit: { count: 0, retryAfter: 1 },
  faults: { delayMs: 0, echoKey: false },
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

function listen(handler) {
  return new Promise((resolve, reject) => {
    const server = createServer(handler);
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
