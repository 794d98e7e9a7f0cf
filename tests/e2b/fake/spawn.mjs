// Starts the fake as a child process and hands back its URLs, its key and
// the test switches. opts.latencyMs starts it with that much latency added
// to every request (server.mjs --latency-ms); opts.args adds arguments.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export async function startFake(opts = {}) {
  const args = [...(opts.latencyMs !== undefined ? ["--latency-ms", String(opts.latencyMs)] : []), ...(opts.args || [])];
  const child = spawn(process.execPath, [join(here, "server.mjs"), ...args], {
    stdio: ["pipe", "pipe", "inherit"],
    env: {
      ...process.env,
      ...(opts.env || {}),
      ...(opts.apiKey ? { E2B_FAKE_API_KEY: opts.apiKey } : {}),
    },
  });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`fake exited with ${code}`)));
    lines.once("line", resolve);
  });
  const info = JSON.parse(first);
  const control = async (method, path, body) => {
    const res = await fetch(info.api_url + path, {
      method,
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    return res.json();
  };
  const api = async (method, path, body) => {
    const res = await fetch(info.api_url + path, {
      method,
      headers: { "X-API-Key": info.api_key, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return res.status;
  };
  return {
    pid: child.pid,
    apiUrl: info.api_url,
    sandboxUrl: info.sandbox_url,
    apiKey: info.api_key,
    rateLimit: (count, retryAfter) => control("POST", "/_fake/rate_limit", { count, retry_after: retryAfter }),
    faults: (f) => control("POST", "/_fake/faults", f),
    listPageMax: (max) => control("POST", "/_fake/list_page_max", { max }),
    setLatency: (ms) => control("POST", "/_fake/latency", { ms }),
    latency: () => control("GET", "/_fake/latency"),
    vanish: (id) => control("POST", `/_fake/sandboxes/${id}/vanish`, {}),
    token: (id, change) => control("POST", `/_fake/sandboxes/${id}/token`, change),
    pause: (id) => api("POST", `/sandboxes/${id}/pause`),
    info: async (id) => {
      const res = await fetch(`${info.api_url}/sandboxes/${id}`, { headers: { "X-API-Key": info.api_key } });
      return res.status === 200 ? res.json() : null;
    },
    requests: () => control("GET", "/_fake/requests"),
    clearRequests: () => control("DELETE", "/_fake/requests"),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", resolve);
        child.kill("SIGTERM");
      }),
  };
}
