// The remote providers' stand-ins for bench/remote.mjs: a real Docker-API
// engine (podman, tests/docker/engine.sh) reached directly and through its
// latency proxy, and the E2B fake (tests/e2b/fake) started with and without
// added latency; plus the raw one-request baselines on each.
import { spawnSync } from "node:child_process";
import { request, Agent } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFake } from "../../tests/e2b/fake/spawn.mjs";
import { SYSTEM_PATH } from "./servers.mjs";

const top = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ENGINE_SH = join(top, "tests/docker/engine.sh");

// Runs engine.sh VERB DIR [ARGS]; returns its KEY=VALUE lines as an object,
// or null when it exits 77 (no engine can run here).
export function engineSh(verb, dir, ...args) {
  const r = spawnSync("sh", [ENGINE_SH, verb, dir, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (r.status === 77) return null;
  if (r.status !== 0) throw new Error(`engine.sh ${verb}: exit ${r.status}: ${(r.stderr || "").trim().split("\n").slice(-3).join(" ")}`);
  return Object.fromEntries(
    r.stdout
      .trim()
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}

// Starts the engine in dir and one latency proxy per nonzero latency.
// Returns { image, hosts: { [ms]: "unix://..." } } or null (no engine).
export function startEngine(dir, latencies) {
  if (!engineSh("start", dir)) return null;
  const env = engineSh("env", dir);
  const hosts = {};
  for (const ms of latencies) hosts[ms] = ms === 0 ? env.DOCKER_HOST : engineSh("latency", dir, String(ms)).DOCKER_HOST;
  return { image: env.TASKBOX_DOCKER_IMAGE, hosts };
}

export function stopEngine(dir) {
  engineSh("stop", dir);
}

// One E2B fake per latency, all accepting one key. Returns
// { apiKey, fakes: { [ms]: fake } }.
export async function startFakes(latencies) {
  const fakes = {};
  let apiKey;
  for (const ms of latencies) {
    // envd hands commands its own PATH: the system's, as for taskbox.
    fakes[ms] = await startFake({ latencyMs: ms, apiKey, env: { PATH: SYSTEM_PATH } });
    apiKey = fakes[ms].apiKey;
  }
  return { apiKey, fakes };
}

// A GET client on one kept-alive connection (a unix socket or a TCP
// origin): get(path, headers) resolves with { status, bytes }.
export function rawClient({ socketPath, origin }) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const base = origin ? new URL(origin) : null;
  const get = (path, headers = {}) =>
    new Promise((resolve, reject) => {
      const opts = socketPath
        ? { socketPath, path, agent, headers }
        : { host: base.hostname, port: base.port, path, agent, headers };
      const req = request(opts, (res) => {
        let bytes = 0;
        let head = "";
        res.on("data", (c) => {
          if (bytes < 300) head += c.subarray(0, 300 - bytes).toString("latin1");
          bytes += c.length;
        });
        res.on("end", () => resolve({ status: res.statusCode, bytes, head }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
  return { get, close: () => agent.destroy() };
}

// The baseline of a docker sandbox: one GET /containers/{id}/archive of a
// small file, on the engine socket taskbox uses for that cell.
export function dockerBaseline(host, containerId, file) {
  const c = rawClient({ socketPath: host.replace(/^unix:\/\//, "") });
  const path = `/containers/${containerId}/archive?path=${encodeURIComponent(file)}`;
  return {
    what: "GET /containers/{id}/archive?path=<status.json>",
    async call() {
      const r = await c.get(path);
      if (r.status !== 200 || r.bytes < 512) throw new Error(`archive GET ${path}: HTTP ${r.status}, ${r.bytes} bytes: ${r.head.slice(0, 200)}`);
    },
    close: c.close,
  };
}

// The baseline of an e2b sandbox: one GET /files of a small file from the
// fake's envd, with the sandbox's access token (read once from the control
// plane).
export async function e2bBaseline(fake, sandboxId, file) {
  const res = await fetch(`${fake.apiUrl}/sandboxes/${sandboxId}`, { headers: { "X-API-Key": fake.apiKey } });
  if (res.status !== 200) throw new Error(`GET /sandboxes/${sandboxId}: HTTP ${res.status}`);
  const token = (await res.json()).envdAccessToken;
  const c = rawClient({ origin: fake.sandboxUrl });
  const path = `/files?path=${encodeURIComponent(file)}`;
  const headers = { "X-Access-Token": token, "E2b-Sandbox-Id": sandboxId, "E2b-Sandbox-Port": "49983" };
  return {
    what: "GET /files?path=<status.json> (envd)",
    async call() {
      const r = await c.get(path, headers);
      if (r.status !== 200 || r.bytes < 2) throw new Error(`GET ${path}: HTTP ${r.status}, ${r.bytes} bytes: ${r.head.slice(0, 200)}`);
    },
    close: c.close,
  };
}
