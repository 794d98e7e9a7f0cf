// The scenario of bench/waits.mjs on one provider instance in one taskbox
// process: S sandboxes with P quiet tasks each (each blocked reading a FIFO
// of its sandbox, its "gate"), a waiting get_task (`wait: 60`, re-issued
// when it comes back with the task still running) on every one of them, all
// in flight together on one client; the server's threads, RSS and
// descriptors idle and while the waits are quiet, the provider's requests
// and open streams meanwhile, a plain get_task's latency idle and
// meanwhile, then every gate opened at once (from the host, through the
// task's /proc/PID/root) and each wait's answer timed from its gate's
// opening. Every call and every phase is bounded: what did not answer is
// counted, never waited for past its bound.
import { closeSync, constants, openSync, readFileSync, readdirSync, statSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { rssBytes } from "./procfs.mjs";
import { quantile } from "./stats.mjs";
import { sc } from "./taskcalls.mjs";
import { runningVerbs, watchedTasks } from "../../tests/lib/verbs.mjs";

// Each wait's `wait`, the most a call may ask: the quiet window must end
// before the first of them runs out (a wait answered at its time is
// re-issued, and its view and new interest are not the quiet cost).
export const WAIT_S = 60;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.now();

// The server's threads, resident memory and open descriptors (NaN when it
// is gone).
export function procSample(pid) {
  let threads = NaN;
  let fds = NaN;
  try {
    threads = Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/^Threads:\s+(\d+)/m)[1]);
    fds = readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    // gone
  }
  return { threads, rss: rssBytes(pid), fds };
}

// The supervisor verbs running on this host (the sandboxes' processes are
// this host's) that watch any of the task ids in ids (a Set): a `wait`
// verb per wait, or a `watch` verb per sandbox. Each is one open provider
// stream.
export function watchVerbs(ids) {
  return runningVerbs().filter((v) => v.tasks.some((t) => ids.has(t))).length;
}

// Runs fn with a deadline of ms: resolves with its value, or rejects saying
// what did not finish.
async function bounded(what, ms, fn) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([fn(), limit]);
  } finally {
    clearTimeout(timer);
  }
}

// A host process of a sandbox whose argv mentions token (the tasks blocked
// on the gate) and whose root holds the FIFO at gate, or null.
function pidWith(token, gate) {
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, "utf8").includes(token) && statSync(`/proc/${d}/root${gate}`).isFIFO()) return Number(d);
    } catch {
      // gone meanwhile, or not in the sandbox's root
    }
  }
  return null;
}

// Timed plain get_tasks on handle, one after another with a pause, until
// `until` (performance.now()) or n of them, and at least min of them:
// { ms: [...], failures: [...] }.
async function plainGets(tb, handle, { n = Infinity, until = Infinity, min = 0, timeoutMs, pauseMs = 0 }) {
  const ms = [];
  const failures = [];
  for (let i = 0; i < n && (i < min || now() < until); i++) {
    const t0 = now();
    try {
      const v = sc(await tb.call("get_task", handle, { timeout: timeoutMs }));
      if (v.state !== "running") throw new Error(`state ${v.state}`);
      ms.push(now() - t0);
    } catch (e) {
      failures.push(`${((now() - t0) / 1000).toFixed(1)} s: ${e.message.slice(0, 160)}`);
    }
    if (pauseMs) await sleep(pauseMs);
  }
  return { ms, failures };
}

// Runs the scenario. opts: tb (connectTaskbox's), label, create (the
// create_sandbox arguments), sandboxes, perSandbox, quietSeconds,
// clientTimeoutMs (each call's request timeout), wakeTimeoutMs (the wake
// phase's bound), setupTimeoutMs, counter (optional: start(), stop() ->
// { requests, execs?, detail }, open() -> provider connections open now or
// null), log. Returns the figures (see the report, bench/lib/waitsreport.mjs).
export async function waitsScenario(opts) {
  const { tb, label, create, sandboxes: S, perSandbox: P, quietSeconds, clientTimeoutMs, wakeTimeoutMs, setupTimeoutMs, counter, log } = opts;
  const pid = tb.pid;
  const out = { label, sandboxes: S, perSandbox: P, waits: S * P, phases: {}, notes: [] };
  const t0 = now();
  out.fresh = procSample(pid);

  // --- sandboxes, gates, tasks ---------------------------------------------
  const boxes = await bounded(`${label}: setting up ${S} sandboxes`, setupTimeoutMs, () =>
    Promise.all(
      Array.from({ length: S }, async (_, s) => {
        const sandbox_id = sc(await tb.call("create_sandbox", { ...create, timeout: 3600 }, { timeout: clientTimeoutMs * 5 })).sandbox_id;
        const home = sc(await tb.call("run_command", { sandbox_id, command: "pwd" }, { timeout: clientTimeoutMs })).stdout.trim();
        const token = `wgate-${randomBytes(6).toString("hex")}`;
        const gate = `${home}/.${token}`;
        const r = sc(await tb.call("run_command", { sandbox_id, command: `mkfifo ${gate}` }, { timeout: clientTimeoutMs }));
        if (r.exit_code !== 0) throw new Error(`${label}: mkfifo: ${JSON.stringify(r).slice(0, 200)}`);
        return { s, sandbox_id, gate, token, tasks: [] };
      }),
    ),
  );
  out.phases.sandboxesSeconds = (now() - t0) / 1000;
  const plain = sc(await tb.call("start_task", { sandbox_id: boxes[0].sandbox_id, command: "exec sleep 3011", timeout: 3600 }, { timeout: clientTimeoutMs }));
  const plainHandle = { sandbox_id: boxes[0].sandbox_id, task_id: plain.task_id };
  const ts = now();
  // One lane of start_tasks per sandbox, the lanes side by side; a lane
  // stops at the set-up bound, and the scenario goes on with the tasks
  // started by then (said in the results).
  const startUntil = ts + setupTimeoutMs;
  await Promise.all(
    boxes.map(async (b) => {
      for (let i = 0; i < P && now() < startUntil; i++) {
        try {
          const t = sc(await tb.call("start_task", { sandbox_id: b.sandbox_id, command: `read _ < ${b.gate} || true`, timeout: 3600 }, { timeout: clientTimeoutMs }));
          b.tasks.push(t.task_id);
        } catch (e) {
          out.notes.push(`sandbox ${b.s}: start_task ${i + 1} failed, its lane stopped: ${e.message.slice(0, 160)}`);
          return;
        }
      }
    }),
  );
  out.phases.startSeconds = (now() - ts) / 1000;
  const ids = new Set(boxes.flatMap((b) => b.tasks));
  out.waits = ids.size;
  out.asked = S * P;
  if (ids.size < S * P) out.notes.push(`only ${ids.size} of the ${S * P} tasks had started at the set-up bound (${setupTimeoutMs / 1000} s): the waits are on those`);
  log(`${label}: ${S} sandboxes in ${out.phases.sandboxesSeconds.toFixed(1)} s, ${ids.size} of ${S * P} tasks started in ${out.phases.startSeconds.toFixed(1)} s`);

  // --- idle ------------------------------------------------------------------
  await sleep(1000);
  out.idle = procSample(pid);
  out.idleGet = await plainGets(tb, plainHandle, { n: 20, timeoutMs: 30000, pauseMs: 20 });
  out.idle = { ...out.idle, verbs: watchVerbs(ids), open: counter?.open() ?? null };

  // --- the waits -------------------------------------------------------------
  let stop = false;
  const waits = boxes.flatMap((b) => b.tasks.map((task_id) => ({ s: b.s, task_id, calls: 0, reissues: 0, at: null, state: null, error: null })));
  const tw = now();
  const running = waits.map(async (w) => {
    while (!stop) {
      w.calls++;
      try {
        const v = sc(await tb.call("get_task", { sandbox_id: boxes[w.s].sandbox_id, task_id: w.task_id, wait: WAIT_S }, { timeout: clientTimeoutMs }));
        if (v.state === "running") {
          w.reissues++;
          continue;
        }
        w.at = now();
        w.state = v.state;
      } catch (e) {
        w.at = now();
        w.error = e.message.slice(0, 200);
      }
      return;
    }
  });
  const allBack = Promise.all(running);
  // Settle: until running verbs name every waited task (one watch per
  // sandbox), or, where they never will (a verb per wait up to a cap, the
  // rest polling), until the count of verbs holds still for five looks a
  // second apart; at most 40 s, then 2 s more.
  let last = -1;
  for (let i = 0, same = 0, named = 0; i < 40 && same < 5 && named < ids.size; i++) {
    await sleep(1000);
    // One look at /proc a second for both counts: the bench's own cost
    // stays off the machine it measures.
    const verbs = runningVerbs().filter((v) => v.tasks.some((t) => ids.has(t)));
    named = new Set(verbs.flatMap((v) => v.tasks.filter((t) => ids.has(t)))).size;
    same = verbs.length === last ? same + 1 : 0;
    last = verbs.length;
  }
  await sleep(2000);
  out.phases.settleSeconds = (now() - tw) / 1000;
  out.quiet = { ...procSample(pid), verbs: watchVerbs(ids), open: counter?.open() ?? null };
  out.watchedQuiet = watchedTasks(ids);
  out.earlyAnswers = waits.filter((w) => w.at !== null).length;

  // --- the quiet window --------------------------------------------------------
  const samples = [];
  const sampler = setInterval(() => samples.push({ ...procSample(pid), verbs: watchVerbs(ids), open: counter?.open() ?? null }), 1000);
  // The provider's requests are counted over the first half of the window,
  // with nothing but the waits: the plain get_tasks of the second half
  // (several requests each) are the bench's own, not the waits'.
  await counter?.start();
  const tq = now();
  await sleep((quietSeconds * 1000) / 2);
  const quietMs = now() - tq;
  const counted = counter ? await counter.stop() : null;
  out.quietGet = await plainGets(tb, plainHandle, { until: tq + quietSeconds * 1000, min: 5, timeoutMs: 30000, pauseMs: 250 });
  clearInterval(sampler);
  out.quietSamples = samples;
  out.quietWindowSeconds = quietMs / 1000;
  if (now() - tw > WAIT_S * 1000) out.notes.push(`the quiet window ended ${((now() - tw) / 1000).toFixed(1)} s after the waits were sent, past their wait of ${WAIT_S} s: its figures include answers at their time and re-issued waits`);
  if (counted) out.load = { ...counted, perSecond: counted.requests / (quietMs / 1000), execsPerSecond: counted.execs === undefined ? undefined : counted.execs / (quietMs / 1000) };
  out.quietMax = {
    threads: Math.max(...samples.map((x) => x.threads), out.quiet.threads),
    rss: Math.max(...samples.map((x) => x.rss), out.quiet.rss),
    fds: Math.max(...samples.map((x) => x.fds), out.quiet.fds),
    verbs: Math.max(...samples.map((x) => x.verbs), out.quiet.verbs),
    open: counter ? Math.max(...samples.map((x) => x.open ?? 0), out.quiet.open ?? 0) : null,
  };
  out.beforeGates = waits.filter((w) => w.at !== null).length;

  // --- every gate opened at once ------------------------------------------------
  const pids = boxes.map((b) => pidWith(b.token, b.gate));
  const opened = new Array(S);
  for (const b of boxes) {
    const p = pids[b.s];
    if (p) {
      try {
        opened[b.s] = now();
        closeSync(openSync(`/proc/${p}/root${b.gate}`, constants.O_WRONLY | constants.O_NONBLOCK));
        continue;
      } catch (e) {
        out.notes.push(`sandbox ${b.s}: the gate could not be opened from the host (${e.code || e.message}): opened by run_command instead`);
      }
    } else out.notes.push(`sandbox ${b.s}: no host process names its gate: opened by run_command instead`);
    opened[b.s] = now();
    await tb.call("run_command", { sandbox_id: b.sandbox_id, command: `: > ${b.gate}` }, { timeout: clientTimeoutMs }).catch((e) => out.notes.push(`sandbox ${b.s}: opening the gate: ${e.message.slice(0, 160)}`));
  }
  const gatesSpread = Math.max(...opened) - Math.min(...opened);
  await Promise.race([allBack, sleep(wakeTimeoutMs)]);
  stop = true;
  out.phases.wakeSeconds = (now() - Math.min(...opened)) / 1000;
  out.gatesSpreadMs = gatesSpread;

  // --- what came back -------------------------------------------------------------
  const answered = waits.filter((w) => w.state !== null && w.at >= opened[w.s]);
  out.wake = answered.map((w) => w.at - opened[w.s]);
  out.wakeP50 = quantile(out.wake, 0.5);
  out.wakeP99 = quantile(out.wake, 0.99);
  out.wakeMax = out.wake.length ? Math.max(...out.wake) : NaN;
  out.answered = answered.length;
  out.states = {};
  for (const w of answered) out.states[w.state] = (out.states[w.state] || 0) + 1;
  out.answeredEarly = waits.filter((w) => w.state !== null && w.at < opened[w.s]).length;
  out.errors = waits.filter((w) => w.error !== null);
  out.errorCount = out.errors.length;
  out.errorSamples = [...new Set(out.errors.map((w) => w.error.replace(/[0-9a-f]{32}/g, "ID")))].slice(0, 5);
  delete out.errors;
  out.noAnswer = waits.filter((w) => w.at === null).length;
  out.calls = waits.reduce((a, w) => a + w.calls, 0);
  out.reissues = waits.reduce((a, w) => a + w.reissues, 0);
  out.after = procSample(pid);
  log(
    `${label}: quiet ${out.quietMax.threads} threads (idle ${out.idle.threads}), ${(out.quietMax.rss / 1048576).toFixed(1)} MiB, ${out.quietMax.fds} fds, ` +
      `${out.quietMax.verbs} verbs; ${counted ? `${out.load.perSecond.toFixed(1)} provider requests/s; ` : ""}` +
      `get_task ${quantile(out.quietGet.ms, 0.5).toFixed(1)} ms (idle ${quantile(out.idleGet.ms, 0.5).toFixed(1)}); ` +
      `wake p50 ${out.wakeP50.toFixed(0)} p99 ${out.wakeP99.toFixed(0)} ms; ${out.answered} answered, ${out.noAnswer} no answer, ${out.errorCount} errors`,
  );
  out.boxes = boxes.map((b) => b.sandbox_id);
  return out;
}
