// Replicas behind a real load balancer: several `taskbox serve --http`
// processes (no shared memory) on one provider instance config, behind
// haproxy with round robin. Modern (2026-07-28) requests go to any
// replica; legacy sessions stick to the replica that made them (haproxy
// learns Mcp-Session-Id from the answer to initialize).
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { taskboxCommand } from "../lib/client.mjs";
import { HAPROXY, haproxyConfig } from "../lib/haproxy.mjs";

const URL_LINE = /listening on (http:\/\/\S+)/;

// Resolves with the first match of re in the child's stderr.
function waitLine(child, re, what) {
  let seen = "";
  return new Promise((resolve, reject) => {
    const limit = setTimeout(() => reject(new Error(`${what}: not ready within 120 s:\n${seen.slice(-2000)}`)), 120000);
    child.stderr.on("data", (d) => {
      process.stderr.write(d);
      if (seen === null) return;
      seen += d;
      const m = re.exec(seen);
      if (m) {
        seen = null;
        clearTimeout(limit);
        resolve(m);
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(limit);
      if (seen !== null) reject(new Error(`${what} exited (${signal || code}):\n${seen.slice(-2000)}`));
    });
  });
}

// One replica: `taskbox serve --http 127.0.0.1:0 --config cfgPath`.
export async function startReplica(name, cfgPath, env, token) {
  const { command, args } = taskboxCommand(["serve", "--http", "127.0.0.1:0", "--config", cfgPath]);
  const child = spawn(command, args, { env: { ...env, TASKBOX_HTTP_TOKEN: token }, stdio: ["ignore", "inherit", "pipe"] });
  const exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
  const [, url] = await waitLine(child, URL_LINE, `replica ${name}`);
  const u = new URL(url);
  return {
    name, url, port: Number(u.port), child, exited,
    async metrics() {
      const r = await fetch(`${u.origin}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
      return r.text();
    },
    kill(signal = "SIGKILL") {
      child.kill(signal);
      return exited;
    },
  };
}

// haproxy in front of replicas, on port, configured as
// tests/lib/haproxy.mjs says.
export async function startBalancer(dir, port, replicas) {
  const cfg = join(dir, "haproxy.cfg");
  writeFileSync(cfg, haproxyConfig(port, replicas));
  const child = spawn(HAPROXY, ["-db", "-f", cfg], { stdio: ["ignore", "inherit", "pipe"] });
  const exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
  child.stderr.on("data", (d) => process.stderr.write(d));
  // Ready once it answers through to a replica.
  const url = `http://127.0.0.1:${port}/mcp`;
  const until = Date.now() + 30000;
  for (;;) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error("haproxy did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url, child, exited,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
