// Replicas behind a real load balancer: several `taskbox serve --http`
// processes (no shared memory) on one provider instance config, behind
// haproxy with round robin. Modern (2026-07-28) requests go to any
// replica; legacy sessions stick to the replica that made them (haproxy
// learns Mcp-Session-Id from the answer to initialize).
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { taskboxCommand } from "../lib/client.mjs";

const URL_LINE = /listening on (http:\/\/\S+)/;

// A free loopback port (the balancer must be told one).
export async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

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

// haproxy in front of replicas, on port: round robin; a replica that does
// not answer /healthz is out within a second; a request whose connection
// to a replica fails goes to another; legacy sessions are sticky.
export async function startBalancer(dir, port, replicas) {
  const cfg = join(dir, "haproxy.cfg");
  writeFileSync(cfg, [
    "global",
    "  log stderr format raw local0 warning",
    "defaults",
    "  mode http",
    "  log global",
    "  timeout connect 2s",
    "  timeout client 120s",
    "  timeout server 120s",
    "  retries 3",
    "  option redispatch",
    // Only a request that never reached a replica is sent again: a
    // start_task whose replica died before answering must not run twice.
    "  retry-on conn-failure",
    "frontend mcp",
    `  bind 127.0.0.1:${port}`,
    "  default_backend taskbox",
    "backend taskbox",
    "  balance roundrobin",
    "  option httpchk GET /healthz",
    "  stick-table type string len 64 size 100k expire 30m",
    "  stick match req.hdr(mcp-session-id)",
    "  stick store-response res.hdr(mcp-session-id)",
    ...replicas.map((r) => `  server ${r.name} 127.0.0.1:${r.port} check inter 300ms fall 1 rise 2`),
    "",
  ].join("\n"));
  // Debian puts it in /usr/sbin, which a user's PATH may lack.
  const haproxy = existsSync("/usr/sbin/haproxy") ? "/usr/sbin/haproxy" : "haproxy";
  const child = spawn(haproxy, ["-db", "-f", cfg], { stdio: ["ignore", "inherit", "pipe"] });
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
