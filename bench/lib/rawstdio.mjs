// A raw MCP client on stdio for the parked-wait figures: newline-delimited
// JSON-RPC on one pipe, any number of requests in flight, each with its own
// time limit (a request past it is given up on; its late answer is dropped).
// With { initialize: false } no initialize is sent: the caller's first
// request decides the era (MCP 2026-07-28 requests carry their own
// envelope, bench/modern.mjs).
import { spawn } from "node:child_process";
import { PROTOCOL_VERSION } from "./httpclient.mjs";

export async function rawStdio(argv, env, { initialize = true } = {}) {
  const child = spawn(argv[0], argv.slice(1), { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => {
    if (stderr.length < 65536) stderr += d.toString();
  });
  const pending = new Map();
  let buf = "";
  let nextId = 1;
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    buf += d;
    for (let i; (i = buf.indexOf("\n")) >= 0; ) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line) continue;
      const m = JSON.parse(line);
      const p = m.id !== undefined && pending.get(m.id);
      if (!p) continue;
      pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.error) p.reject(new Error(`${p.method}: ${m.error.message}`));
      else p.resolve(m.result);
    }
  });
  const gone = new Promise((r) => child.once("exit", r));
  gone.then(() => {
    for (const p of pending.values()) p.reject(new Error(`server exited: ${stderr.slice(-500)}`));
    pending.clear();
  });
  const send = (m) => child.stdin.write(JSON.stringify(m) + "\n");
  const rpc = (method, params, timeoutMs = 60000) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const p = { method, resolve, reject, timer: null };
      p.timer = setTimeout(() => {
        pending.delete(id);
        reject(Object.assign(new Error(`${method}: no answer within ${timeoutMs} ms`), { timeout: true }));
      }, timeoutMs);
      pending.set(id, p);
      send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    });
  if (initialize) {
    await rpc("initialize", { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "taskbox-bench", version: "1.0.0" } }, 10000);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }
  return {
    pid: child.pid,
    stderr: () => stderr,
    rpc,
    async call(name, args, timeoutMs) {
      const r = await rpc("tools/call", { name, arguments: args }, timeoutMs);
      if (r.isError) throw new Error(`${name} failed: ${(r.content || []).map((c) => c.text || "").join(" ")}`);
      return r.structuredContent || JSON.parse(r.content?.[0]?.text || "{}");
    },
    async close() {
      child.stdin.end();
      const t = setTimeout(() => child.kill("SIGKILL"), 10000);
      await gone;
      clearTimeout(t);
    },
  };
}
