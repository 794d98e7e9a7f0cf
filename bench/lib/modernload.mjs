// What bench/modern.mjs drives: MCP 2026-07-28 requests (the _meta
// envelope in the body, MCP-Protocol-Version / Mcp-Method / Mcp-Name
// headers, no session) beside legacy ones in a session, as raw POSTs on the
// same kept-alive undici connections as bench/lib/httpclient.mjs; closed
// loops cut into short slices that alternate between the parties compared;
// per-thread CPU time of the server processes from /proc; and haproxy in
// front of replicas (the configuration of tests/http/replicas.mjs).
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { answerOf } from "./httpclient.mjs";
import { SYSTEM_PATH } from "./servers.mjs";
import { HAPROXY, freePort, haproxyConfig } from "../../tests/lib/haproxy.mjs";

export const MODERN_VERSION = "2026-07-28";
export const META = {
  "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
  "io.modelcontextprotocol/clientCapabilities": {},
};
const SERVER_INFO = "io.modelcontextprotocol/serverInfo";
const ACCEPT = "application/json, text/event-stream";

let nextId = 1;

// The params of a modern request: params with the envelope in _meta.
export const enveloped = (params = {}) => ({ ...params, _meta: META });

// What every modern result must carry; throws when it does not.
export function checkModern(method, result) {
  if (result?.resultType !== "complete") throw new Error(`${method}: resultType ${result?.resultType}, not "complete"`);
  if (!result._meta?.[SERVER_INFO]) throw new Error(`${method}: no _meta serverInfo in the result`);
}

// One JSON-RPC request POSTed on conn with these headers, the body made
// from method and the JSON text of params (kept prepared by the caller);
// returns the answer's result. Counts answers, event-stream answers and
// answer bytes in stats. The same code for both eras: only the headers and
// the params text differ.
export async function post(conn, path, headers, method, paramsJson, stats = null) {
  const id = nextId++;
  const body = paramsJson
    ? `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsJson}}`
    : `{"jsonrpc":"2.0","id":${id},"method":"${method}"}`;
  const r = await conn.request({ path, method: "POST", headers, body });
  const text = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`${method}: HTTP ${r.statusCode}: ${text.slice(0, 200)}`);
  const type = r.headers["content-type"] || "";
  if (stats) {
    stats.answers++;
    if (/event-stream/.test(type)) stats.sse++;
    stats.bytes += Buffer.byteLength(text);
    stats.sent += Buffer.byteLength(body);
  }
  const msg = answerOf(text, type, id);
  if (!msg) throw new Error(`${method}: no answer in ${text.slice(0, 200)}`);
  if (msg.error) throw new Error(`${method}: ${msg.error.message}`);
  return msg.result;
}

export const newStats = () => ({ answers: 0, sse: 0, bytes: 0, sent: 0 });

// A prepared legacy request in an open HttpSession (its headers carry
// Mcp-Session-Id and the negotiated MCP-Protocol-Version).
export function legacyRequest(session, method, params = null) {
  return {
    send: (conn, stats) => post(conn, session.path, session.headers, method, params ? JSON.stringify(params) : null, stats),
  };
}

// A prepared modern request to url: the envelope in params._meta, the
// headers the revision asks for (Mcp-Name for tools/call). resultType and
// serverInfo are checked on every answer.
export function modernRequest(url, token, method, params = {}) {
  const path = new URL(url).pathname;
  const headers = { "content-type": "application/json", accept: ACCEPT, "mcp-protocol-version": MODERN_VERSION, "mcp-method": method };
  if (token) headers.authorization = `Bearer ${token}`;
  if (method === "tools/call") headers["mcp-name"] = params.name;
  const paramsJson = JSON.stringify(enveloped(params));
  return {
    headers,
    async send(conn, stats) {
      const result = await post(conn, path, headers, method, paramsJson, stats);
      checkModern(method, result);
      return result;
    },
  };
}

// --- CPU time of server processes ------------------------------------

// The CPU time (ns) of every thread of pid now alive, from
// /proc/PID/task/*/schedstat (nanoseconds, where /proc/PID/stat has 10 ms
// ticks). A thread that exits between two readings takes its time with
// it; taskbox's threads (MHD's, the workers') and haproxy's live as long
// as the process.
export function cpuNs(pid) {
  let dirs;
  try {
    dirs = readdirSync(`/proc/${pid}/task`);
  } catch {
    return NaN;
  }
  let sum = 0;
  for (const t of dirs) {
    try {
      sum += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      /* the thread is gone */
    }
  }
  return sum;
}

const sumCpu = (pids) => pids.map(cpuNs).reduce((a, b) => a + b, 0);

// --- closed loops in alternating slices ------------------------------

// A party of a comparison: { name, pids (its server processes, whose CPU
// is charged to it), conns (kept-alive connections, at least c), req(w, k)
// (worker w's k-th request; resolves when answered and checked) }.
//
// One cell: for each of `slices` slices, each party in turn (the order
// reversed every other slice, and on odd `flip`) runs `c` closed-loop
// workers for warmMs, then measureMs measured. Returns per party: samples
// (ms, requests begun inside a measured window), rps (those over the
// summed windows), server CPU per request (µs) in total and per pid,
// client CPU (% of one core), errors.
export async function alternate(parties, c, { slices = 4, warmMs = 100, measureMs = 500, flip = 0 } = {}) {
  const acc = new Map(parties.map((p) => [p.name, {
    samples: [], windowMs: 0, serverNs: 0, pidNs: p.pids.map(() => 0), clientUs: 0, errors: 0, firstError: null,
  }]));
  for (let s = 0; s < slices; s++) {
    const order = (s + flip) % 2 ? [...parties].reverse() : parties;
    for (const p of order) {
      const a = acc.get(p.name);
      let stop = false;
      let w0 = Infinity;
      let w1 = Infinity;
      const worker = async (w) => {
        let failed = 0;
        for (let k = w; !stop; k += c) {
          const t0 = performance.now();
          try {
            await p.req(w, k);
          } catch (e) {
            a.errors++;
            a.firstError ||= e.message;
            if (++failed >= 10) return;
            continue;
          }
          if (t0 >= w0 && t0 < w1) a.samples.push(performance.now() - t0);
        }
      };
      const running = Array.from({ length: c }, (_, w) => worker(w));
      await new Promise((r) => setTimeout(r, warmMs));
      const pid0 = p.pids.map(cpuNs);
      const cpu0 = process.cpuUsage();
      w0 = performance.now();
      w1 = w0 + measureMs;
      await new Promise((r) => setTimeout(r, measureMs));
      const pid1 = p.pids.map(cpuNs);
      const cpu = process.cpuUsage(cpu0);
      const t1 = performance.now();
      stop = true;
      await Promise.all(running);
      a.windowMs += t1 - w0;
      pid1.forEach((v, i) => (a.pidNs[i] += v - pid0[i]));
      a.serverNs += pid1.reduce((x, v, i) => x + v - pid0[i], 0);
      a.clientUs += cpu.user + cpu.system;
    }
  }
  const out = {};
  for (const p of parties) {
    const a = acc.get(p.name);
    const n = a.samples.length;
    out[p.name] = {
      samples: a.samples,
      rps: n / (a.windowMs / 1000),
      serverUsPerReq: n ? a.serverNs / 1000 / n : NaN,
      pidUsPerReq: a.pidNs.map((v) => (n ? v / 1000 / n : NaN)),
      clientCpuPct: (100 * a.clientUs) / 1000 / a.windowMs,
      errors: a.errors,
      firstError: a.firstError,
    };
  }
  return out;
}

// Sequential calls (one in flight), the parties taking turns `chunk` calls
// at a time until each has made n. Returns per party: samples (ms) and
// server CPU per call (µs, over its own chunks only).
export async function interleaveCalls(parties, n, chunk = 50, flip = 0) {
  const acc = new Map(parties.map((p) => [p.name, { samples: [], ns: 0, at: 0 }]));
  for (let round = 0; parties.some((p) => acc.get(p.name).at < n); round++) {
    const order = (round + flip) % 2 ? [...parties].reverse() : parties;
    for (const p of order) {
      const a = acc.get(p.name);
      const end = Math.min(n, a.at + chunk);
      const ns0 = sumCpu(p.pids);
      for (; a.at < end; a.at++) {
        const t0 = performance.now();
        await p.call(a.at);
        a.samples.push(performance.now() - t0);
      }
      a.ns += sumCpu(p.pids) - ns0;
    }
  }
  const out = {};
  for (const p of parties) {
    const a = acc.get(p.name);
    out[p.name] = { samples: a.samples, serverUsPerReq: a.ns / 1000 / a.samples.length };
  }
  return out;
}

// --- haproxy -----------------------------------------------------------


export function haproxyVersion() {
  const r = spawnSync(HAPROXY, ["-v"], { encoding: "utf8" });
  return (r.stdout || "").split("\n")[0].trim() || "(unknown)";
}

// haproxy on a free port in front of replicas ({ name, port }), with the
// configuration tests/http/replicas.mjs starts (round robin, /healthz
// checks every 300 ms, retries on connection failure only, legacy
// sessions sticky by Mcp-Session-Id) and the same `haproxy -db -f cfg`.
// Resolves with { url, pid, cfg, stop() } once /healthz answers through it.
export async function startBalancer(dir, name, replicas) {
  const port = await freePort();
  const cfg = join(dir, `haproxy-${name}.cfg`);
  writeFileSync(cfg, haproxyConfig(port, replicas));
  const child = spawn(HAPROXY, ["-db", "-f", cfg], { stdio: ["ignore", "ignore", "pipe"], env: { PATH: SYSTEM_PATH } });
  let err = "";
  child.stderr.on("data", (d) => {
    if (err.length < 65536) err += d.toString();
  });
  const exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
  const until = Date.now() + 30000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}): ${err.slice(-1000)}`);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      await r.arrayBuffer();
      if (r.status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > until) {
      child.kill("SIGKILL");
      throw new Error(`haproxy did not answer /healthz within 30 s: ${err.slice(-1000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name,
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid,
    cfg,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}

// The tools/call requests a taskbox process has answered, from its
// /metrics (to see how the balancer spread them).
export async function toolCalls(origin, token) {
  const r = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  const text = await r.text();
  const m = /^taskbox_mcp_requests_total\{method="tools\/call"\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : NaN;
}
