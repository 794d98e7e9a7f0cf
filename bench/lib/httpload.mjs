// HTTP load: closed-loop workers, one kept-alive connection each, sending
// raw JSON-RPC POSTs back to back for a fixed window after a warm-up. Gives
// each cell's latency distribution, requests per second, the server's CPU
// per request and the client's own CPU.
import { cpuTicks, CLK_TCK } from "./procfs.mjs";
import { HttpSession, connection } from "./httpclient.mjs";

export const CONCURRENCY = [1, 16, 64];

// A server to load: its connections and sessions, set up once. `sessions`
// of them are opened, one per connection up to that count; connection i
// carries session i (or session 0 when shared).
export async function target(server, token, conns = 64) {
  const origin = new URL(server.url).origin;
  const t = { server, pid: server.pid, conns: [], sessions: [] };
  for (let i = 0; i < conns; i++) t.conns.push(connection(origin));
  for (let i = 0; i < conns; i++) {
    const s = new HttpSession(server.url, token);
    await s.open(t.conns[i]);
    t.sessions.push(s);
  }
  return t;
}

export async function closeTarget(t) {
  await Promise.allSettled(t.sessions.map((s, i) => s.close(t.conns[i])));
  await Promise.allSettled(t.conns.map((c) => c.close()));
}

// The request of an op for worker w's k-th call: ops are "ping",
// "get_task (running)" and "get_task (finished)"; `tasks` gives the
// arguments (JSON text) of the running tasks and of the finished one.
function requester(op, tasks) {
  if (op === "ping") return (s, c) => s.rpc(c, "ping");
  const expect = op === "get_task (running)" ? "running" : "succeeded";
  const args = op === "get_task (running)" ? tasks.running : [tasks.finished];
  const bodies = args.map((a) => `{"name":"get_task","arguments":${a}}`);
  return async (s, c, k) => {
    const r = await s.rpc(c, "tools/call", bodies[k % bodies.length]);
    const state = r.structuredContent?.state ?? (r.isError ? "error" : JSON.parse(r.content?.[0]?.text || "{}").state);
    if (state !== expect) throw new Error(`get_task: state ${state}, not ${expect}: ${JSON.stringify(r).slice(0, 300)}`);
  };
}

// One cell: `c` workers for warmMs, then measureMs measured. Returns
// { samples (ms, of calls begun in the window), rps, serverUsPerReq,
// clientCpuPct, errors, firstError }.
export async function cell(t, op, c, { shared = false, warmMs = 300, measureMs = 1000, tasks } = {}) {
  const req = requester(op, tasks);
  const samples = [];
  let errors = 0;
  let firstError = null;
  let stop = false;
  let w0 = Infinity;
  let w1 = Infinity;
  const worker = async (w) => {
    const conn = t.conns[w];
    const sess = t.sessions[shared ? 0 : w];
    let failed = 0;
    for (let k = w; !stop; k += c) {
      const t0 = performance.now();
      try {
        await req(sess, conn, k);
      } catch (e) {
        errors++;
        firstError ||= e.message;
        if (++failed >= 10) return;
        continue;
      }
      if (t0 >= w0 && t0 < w1) samples.push(performance.now() - t0);
    }
  };
  const t0 = performance.now();
  const running = Array.from({ length: c }, (_, w) => worker(w));
  await new Promise((r) => setTimeout(r, warmMs));
  const cpu0 = process.cpuUsage();
  const srv0 = cpuTicks(t.pid);
  w0 = performance.now();
  w1 = w0 + measureMs;
  await new Promise((r) => setTimeout(r, measureMs));
  const srv1 = cpuTicks(t.pid);
  const cpu = process.cpuUsage(cpu0);
  const secs = (performance.now() - w0) / 1000;
  stop = true;
  await Promise.all(running);
  const n = samples.length;
  return {
    samples,
    rps: n / ((w1 - w0) / 1000),
    serverUsPerReq: n ? ((srv1 - srv0) / CLK_TCK / n) * 1e6 : NaN,
    serverCpuPct: (100 * (srv1 - srv0)) / CLK_TCK / secs,
    clientCpuPct: (100 * (cpu.user + cpu.system)) / 1e6 / secs,
    errors,
    firstError,
    wallMs: performance.now() - t0,
  };
}
