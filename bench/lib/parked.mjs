// The cost of parked waits: N concurrent get_task calls with `wait` on
// running tasks, over HTTP (many connections) or over stdio (one pipe).
// While they wait: the server's RSS, its CPU over a window, and the latency
// of an unrelated plain get_task against the same with nothing waiting;
// then, when the tasks end, how late each wait returns after its task's
// exit.
import { cpuTicks, CLK_TCK, rssBytes } from "./procfs.mjs";
import { HttpSession, connection } from "./httpclient.mjs";
import { quantile } from "./stats.mjs";
import { STAMP_BYTES } from "./wait.mjs";

export const PARK_SLEEP = ["sleep", "2993"]; // the unrelated task's marker
const sleepMs = (ms) => new Promise((r) => setTimeout(r, ms));
const wallMs = () => performance.timeOrigin + performance.now();

// What a timed task runs last: bench/stamp.c (built by bench/run.sh), which
// reads the wall clock, prints it in ns and exits a few system calls later,
// replacing the shell. Until 2026-12 these tasks ended with `date +%s%N`,
// a millisecond or more after the clock was read, charged to taskbox.
function stampCommand() {
  const bin = process.env.BENCH_STAMP_BIN;
  if (!bin) throw new Error("BENCH_STAMP_BIN is not set: run the bench through bench/run.sh");
  return `exec '${bin}'`;
}

// Exit stamp (wall clock ms) of a task that printed its stamp last.
const stampOf = (stdout) => {
  const lines = stdout.trim().split("\n");
  return Number(BigInt(lines[lines.length - 1]) / 1000n) / 1000;
};

// Sequential plain get_task calls on the unrelated running task, each
// given up after limitMs; stops at the first one given up. A call the
// server refuses (busy) is counted, not timed. Returns { samples, givenUp,
// refused, refusal }.
async function plainGets(call, n, limitMs) {
  const samples = [];
  let refused = 0;
  let refusal = null;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    try {
      const v = await call(limitMs);
      if (v.state !== "running") throw new Error(`plain get_task: state ${v.state}`);
    } catch (e) {
      if (e.timeout || e.name === "AbortError" || e.name === "TimeoutError" || /abort|timeout/i.test(e.message))
        return { samples, givenUp: performance.now() - t0, refused, refusal };
      if (!/busy|HTTP 503|HTTP 429/i.test(e.message)) throw e;
      refused++;
      refusal ||= e.message;
      continue;
    }
    samples.push(performance.now() - t0);
  }
  return { samples, givenUp: 0, refused, refusal };
}

// The scenario on an API { pid, call(name, args, limitMs), waiters(n) } where
// waiters(n) returns n functions, each sending one call on its own path
// (a connection of its own over HTTP, the one pipe on stdio). Returns the
// figures. `log` reports progress.
export async function parkedWaits(api, { n = 1000, tasks = 10, windowMs = 10000, plain = 200, taskSeconds = 24, log = () => {} }) {
  const out = { waits: n, tasks, windowS: windowMs / 1000 };
  const sb = (await api.call("create_sandbox", { timeout: 3600 })).sandbox_id;
  try {
    const other = await api.call("start_task", { sandbox_id: sb, command: `echo ready; exec ${PARK_SLEEP.join(" ")}`, timeout: 3600 });
    const plainArgs = { sandbox_id: sb, task_id: other.task_id, stdout_offset: 0, stderr_offset: 0, limit: 16384 };
    const plainCall = (limitMs) => api.call("get_task", plainArgs, limitMs);
    // Baseline: nothing waiting.
    await plainGets(plainCall, 50, 10000);
    const idle = await plainGets(plainCall, plain, 10000);
    out.plainIdleP50 = quantile(idle.samples, 0.5);
    out.plainIdleP99 = quantile(idle.samples, 0.99);
    out.rssBefore = rssBytes(api.pid);
    // The tasks the waits wait on: each ends after taskSeconds, printing
    // its exit time last.
    const ids = [];
    for (let i = 0; i < tasks; i++) {
      const r = await api.call("start_task", { sandbox_id: sb, command: `sleep ${taskSeconds}; ${stampCommand()}`, timeout: 600 });
      ids.push(r.task_id);
    }
    const started = performance.now();
    const send = await api.waiters(n);
    const returned = new Array(n).fill(NaN);
    let answered = 0;
    let failed = 0;
    let firstError = null;
    const waits = send.map((fn, i) =>
      fn("get_task", { sandbox_id: sb, task_id: ids[i % tasks], stdout_offset: STAMP_BYTES, wait: 30 }, 60000).then(
        (v) => {
          returned[i] = wallMs();
          if (v.state === "succeeded") answered++;
          else {
            failed++;
            firstError ||= `state ${v.state}`;
          }
        },
        (e) => {
          failed++;
          firstError ||= e.message;
        },
      ),
    );
    out.sendS = (performance.now() - started) / 1000;
    // Let them all arrive and park.
    await sleepMs(2000);
    const rss = [rssBytes(api.pid)];
    const c0 = cpuTicks(api.pid);
    const w0 = performance.now();
    while (performance.now() - w0 < windowMs) {
      await sleepMs(500);
      rss.push(rssBytes(api.pid));
    }
    const c1 = cpuTicks(api.pid);
    const secs = (performance.now() - w0) / 1000;
    const early = answered + failed;
    out.earlyError = firstError;
    // The same 50 calls first as before the idle figure: after the
    // window's 10 s of quiet, the first calls find caches and threads
    // cold, waits or none.
    const warm = await plainGets(plainCall, 50, 3000);
    const during = warm.givenUp ? warm : await plainGets(plainCall, plain, 3000);
    rss.push(rssBytes(api.pid));
    // The waits still parked through the window (a refused one returns at
    // once).
    const parked = n - early;
    out.parked = parked;
    out.rssDuring = Math.max(...rss.filter(Number.isFinite));
    out.rssPerWait = (out.rssDuring - out.rssBefore) / parked;
    // CPU ms per second of waiting, per 1,000 parked waits.
    out.cpuMsPerSecPer1000 = ((((c1 - c0) / CLK_TCK) * 1000) / secs) * (1000 / parked);
    out.returnedBeforeTaskEnd = early;
    out.plainDuringP50 = quantile(during.samples, 0.5);
    out.plainDuringP99 = quantile(during.samples, 0.99);
    out.plainDuringCalls = during.samples.length;
    out.plainDuringRefused = during.refused;
    out.plainDuringRefusal = during.refusal;
    out.plainGivenUpAfterMs = during.givenUp;
    out.plainRatio = out.plainDuringP50 / out.plainIdleP50;
    const elapsed = (performance.now() - started) / 1000;
    if (elapsed > taskSeconds - 1) log(`parked waits: the window ran past the tasks' end (${elapsed.toFixed(1)} s of ${taskSeconds})`);
    log(`parked waits: ${n} sent in ${out.sendS.toFixed(2)} s; waiting for the tasks to end`);
    // The CPU the answers cost, the load client's own beside the server's:
    // both are idle until the tasks end, and share the machine's cores
    // while the answers come.
    const client0 = process.cpuUsage();
    const server0 = cpuTicks(api.pid);
    await Promise.all(waits);
    const client1 = process.cpuUsage(client0);
    out.answerClientCpuMs = (client1.user + client1.system) / 1000;
    out.answerServerCpuMs = ((cpuTicks(api.pid) - server0) / CLK_TCK) * 1000;
    out.answered = answered;
    out.failed = failed;
    out.firstError = firstError;
    // How late each wait returned after its task's exit.
    const exits = [];
    for (const id of ids) exits.push(stampOf((await api.call("get_task", { sandbox_id: sb, task_id: id }, 10000)).stdout));
    const late = [];
    returned.forEach((t, i) => Number.isFinite(t) && late.push(t - exits[i % tasks]));
    out.lateP50 = quantile(late, 0.5);
    out.lateP99 = quantile(late, 0.99);
    out.lateMax = quantile(late, 1);
    // From the first task's exit to the last answer.
    out.answerSpanMs = Math.max(...returned.filter(Number.isFinite)) - Math.min(...exits);
    // When each task ended after the first (the floor releases its calls
    // alike).
    out.exitOffsetsMs = exits.map((e) => e - Math.min(...exits));
  } finally {
    await api.call("kill_sandbox", { sandbox_id: sb }, 30000).catch(() => {});
  }
  return out;
}

// The load client's floor for the burst over HTTP: n calls sent as the
// parked waits are (httpApi: a connection each, in 10 sessions), cycled
// over as many task ids as offsetsMs has, to bench/peer/held.mjs, which
// holds them all; then each task's calls are released at its offset (the
// times the parked waits' tasks ended, after the first). A call's lateness
// is its return minus the moment before its release was sent. Returns {
// lateP50, lateP99, lateMax, answerSpanMs, answerClientCpuMs, failed }.
export async function heldFloor(server, n, offsetsMs) {
  const api = await httpApi(server, null);
  const origin = new URL(server.url).origin;
  const tasks = offsetsMs.length;
  try {
    const send = await api.waiters(n);
    const returned = new Array(n).fill(NaN);
    let failed = 0;
    let firstError = null;
    const calls = send.map((fn, i) =>
      fn("get_task", { sandbox_id: "held", task_id: `t${i % tasks}`, stdout_offset: STAMP_BYTES, wait: 30 }, 60000).then(
        (v) => {
          returned[i] = wallMs();
          if (v.state !== "succeeded") throw new Error(`state ${v.state}`);
        },
        (e) => {
          failed++;
          firstError ||= e.message;
        },
      ),
    );
    const deadline = performance.now() + 60000;
    let nHeld = 0;
    while ((nHeld = Number(await (await fetch(`${origin}/held`)).text())) < n) {
      if (performance.now() > deadline || failed) throw new Error(`held ${nHeld} of ${n}${firstError ? `: ${firstError}` : ""}`);
      await sleepMs(100);
    }
    await sleepMs(500);
    const client0 = process.cpuUsage();
    const t0 = performance.now();
    const released = new Array(tasks).fill(NaN);
    const order = offsetsMs.map((ms, k) => [ms, k]).sort((a, b) => a[0] - b[0]);
    for (const [ms, k] of order) {
      const wait = t0 + ms - performance.now();
      if (wait > 0) await sleepMs(wait);
      released[k] = wallMs();
      const r = await fetch(`${origin}/release?task_id=t${k}`, { method: "POST" });
      await r.text();
    }
    await Promise.all(calls);
    const client1 = process.cpuUsage(client0);
    const late = [];
    returned.forEach((t, i) => Number.isFinite(t) && late.push(t - released[i % tasks]));
    return {
      lateP50: quantile(late, 0.5),
      lateP99: quantile(late, 0.99),
      lateMax: quantile(late, 1),
      answerSpanMs: Math.max(...returned.filter(Number.isFinite)) - Math.min(...released),
      answerClientCpuMs: (client1.user + client1.system) / 1000,
      failed,
      firstError,
    };
  } finally {
    await api.close().catch(() => {});
  }
}

// One wait at a time (nothing else in flight), as bench/lib/wait.mjs does on
// stdio: `n` tasks `sleep 0.2; exec STAMP`, each followed at once by a
// get_task waiting for its end. Returns the lateness samples (ms).
export async function singleWaits(api, n = 20) {
  const sb = (await api.call("create_sandbox", { timeout: 3600 })).sandbox_id;
  const late = [];
  try {
    for (let i = 0; i < n; i++) {
      const r = await api.call("start_task", { sandbox_id: sb, command: `sleep 0.2; ${stampCommand()}`, timeout: 60 });
      const handle = { sandbox_id: sb, task_id: r.task_id };
      const v = await api.call("get_task", { ...handle, stdout_offset: STAMP_BYTES, wait: 30 }, 60000);
      const back = wallMs();
      if (v.state !== "succeeded") throw new Error(`waiting get_task: state ${v.state}`);
      late.push(back - stampOf((await api.call("get_task", handle)).stdout));
    }
  } finally {
    await api.call("kill_sandbox", { sandbox_id: sb }, 30000).catch(() => {});
  }
  return late;
}

// The API over HTTP: plain calls on one connection and session of their
// own; each waiter on a connection of its own, spread over `sessions`
// sessions.
export async function httpApi(server, token, sessions = 10) {
  const origin = new URL(server.url).origin;
  const conn = connection(origin);
  const main = new HttpSession(server.url, token);
  await main.open(conn);
  const opened = [conn];
  const limited = (s, c) => (name, args, limitMs) =>
    s.call(c, name, args, limitMs ? { signal: AbortSignal.timeout(limitMs) } : {});
  return {
    pid: server.pid,
    call: limited(main, conn),
    async waiters(n) {
      const ss = [];
      for (let i = 0; i < sessions; i++) {
        const s = new HttpSession(server.url, token);
        const c = connection(origin);
        opened.push(c);
        await s.open(c);
        ss.push({ s, c, used: false });
      }
      return Array.from({ length: n }, (_, i) => {
        const { s } = ss[i % sessions];
        // the session's own opening connection carries its first waiter
        let c = ss[i % sessions].c;
        if (ss[i % sessions].used) {
          c = connection(origin);
          opened.push(c);
        }
        ss[i % sessions].used = true;
        return limited(s, c);
      });
    },
    async close() {
      await main.close(conn);
      await Promise.allSettled(opened.map((c) => c.close()));
    },
  };
}

// The API over stdio: everything on the one pipe.
export function stdioApi(client) {
  const call = (name, args, limitMs) => client.call(name, args, limitMs || 60000);
  return { pid: client.pid, call, waiters: async (n) => Array.from({ length: n }, () => call) };
}

export { sleepMs };
