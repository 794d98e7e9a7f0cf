// One run of the latency figures: taskbox, DesktopCommander and the physical
// floors measured side by side, interleaved in small blocks so that a change
// in the machine's load during the run hits every party alike.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { SYSTEM_PATH, connectDesktopCommander, connectEcho, connectTaskbox } from "./servers.mjs";
import { rssBytes, pidsWithArgv, killQuietly } from "./procfs.mjs";

// Marker commands: a sleep with a duration nothing else on the machine uses,
// so the run can find (and finally reap) exactly its own processes.
export const TB_SLEEP = ["sleep", "2998"];
export const DC_SLEEP = ["sleep", "2999"];
export const SUP_SLEEP = ["sleep", "2996"];
// Calls per run (the slow peer sets the pace: keep a run short).
export const START_CALLS = 12;
export const READ_CALLS = 40;
const tbRunning = `echo ready; exec ${TB_SLEEP.join(" ")}`;
const dcRunning = `echo ready; exec ${DC_SLEEP.join(" ")}`;

// Per-run record: samples (ms) per figure, plus single values.
export function newRecord() {
  return {
    samples: {},
    values: {},
    sample(name, ms) {
      (this.samples[name] ||= []).push(ms);
    },
    set(name, v) {
      this.values[name] = v;
    },
  };
}

// Runs the parts round-robin, `chunk` calls of each in turn, recording each
// call's latency under the part's name. A part is { name, n, fn(i) }.
export async function interleave(rec, parts, chunk = 5) {
  const at = parts.map(() => 0);
  for (let more = true; more; ) {
    more = false;
    for (let p = 0; p < parts.length; p++) {
      const end = Math.min(parts[p].n, at[p] + chunk);
      for (; at[p] < end; at[p]++) {
        const t0 = performance.now();
        await parts[p].fn(at[p]);
        rec.sample(parts[p].name, performance.now() - t0);
      }
      if (at[p] < parts[p].n) more = true;
    }
  }
}

// Spawns argv with node's child_process (no shell of node's own) and
// resolves when it has exited; rejects on a nonzero exit.
export function spawnAndWait(argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: "ignore", env: { PATH: SYSTEM_PATH } });
    child.on("error", reject);
    child.on("exit", (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${argv.join(" ")}: exit ${code ?? signal}`)),
    );
  });
}

const dcPid = (result) => {
  const m = (result.content?.[0]?.text || "").match(/PID (-?\d+)/);
  if (!m) throw new Error(`desktop-commander: no PID in ${JSON.stringify(result.content)}`);
  return Number(m[1]);
};

const sleepMs = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls fn every `every` ms until it returns a truthy value or `limit` ms
// pass; returns the value or throws naming what was awaited.
export async function waitFor(what, fn, every = 5, limit = 60000) {
  const t0 = performance.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (performance.now() - t0 > limit) throw new Error(`timed out waiting for ${what}`);
    await sleepMs(every);
  }
}

const sc = (r) => r.structuredContent || JSON.parse(r.content?.[0]?.text || "{}");

// Connect time (spawn + initialize) and idle RSS of each server, `n` fresh
// connections of taskbox and the echo loop, one of DesktopCommander (it
// takes seconds).
export async function connects(ctx, rec, n = 5) {
  for (let i = 0; i < n; i++) {
    const e = await connectEcho(ctx.echoBin);
    rec.sample("echo connect", e.connectMs);
    await e.close();
    if (ctx.taskboxBin) {
      const t = await connectTaskbox(ctx.taskboxBin, ctx.tbState);
      rec.sample("taskbox connect", t.connectMs);
      await t.client.ping();
      rec.sample("taskbox idle RSS", rssBytes(t.pid));
      await t.close();
    }
  }
  const d = await connectDesktopCommander(ctx.dcHome);
  rec.sample("DC connect", d.connectMs);
  await d.client.ping();
  await sleepMs(200); // let its start-up timers settle before reading RSS
  rec.sample("DC idle RSS", rssBytes(d.pid));
  await d.close();
}

// ping round trips through the same client, interleaved.
export async function pings(ctx, rec, n = 200) {
  const parts = [
    { name: "echo ping", n, fn: () => ctx.echo.client.ping() },
    { name: "DC ping", n, fn: () => ctx.dc.client.ping() },
  ];
  if (ctx.tb) parts.splice(1, 0, { name: "taskbox ping", n, fn: () => ctx.tb.client.ping() });
  await interleave(rec, parts, 20);
}

// Spawns and starts: `sh -c true`, start_task and start_process, `n` each,
// interleaved. Returns the handles of what is left running.
export async function starts(ctx, rec, sandboxId, n = START_CALLS) {
  const tbHandles = [];
  const dcPids = [];
  const parts = [
    { name: "sh -c true spawn", n, fn: () => spawnAndWait(["/bin/sh", "-c", "true"]) },
    {
      name: "DC start_process",
      n,
      fn: async () => {
        const r = await ctx.dc.call("start_process", { command: dcRunning, timeout_ms: 1 });
        dcPids.push(dcPid(r));
      },
    },
  ];
  if (sandboxId)
    parts.splice(1, 0, {
      name: "taskbox start_task",
      n,
      fn: async () => {
        const r = sc(await ctx.tb.call("start_task", { sandbox_id: sandboxId, command: tbRunning, timeout: 3600 }));
        if (r.state !== "running" || !r.task_id) throw new Error(`start_task: ${JSON.stringify(r)}`);
        tbHandles.push(r.task_id);
      },
    });
  if (ctx.supervisorSource) {
    // Diagnostics of start_task's cost: the interpreter alone, and the
    // supervisor's own `start` verb run directly (no server, no provider).
    const m = Math.max(4, n >> 1);
    parts.push({ name: "python3 -I -S -c pass spawn", n: m, fn: () => spawnAndWait(["python3", "-I", "-S", "-c", "pass"]) });
    parts.push({
      name: "supervisor start verb, run directly",
      n: m,
      fn: () => {
        const id = randomBytes(16).toString("hex");
        const root = join(ctx.supervisorRoot, `run-${ctx.runIndex}`, ".taskbox", "tasks");
        return spawnAndWait(["python3", "-I", "-c", ctx.supervisorSource, "start", "--root", root,
          "--id", id, "--timeout", "3600", "--command", `exec ${SUP_SLEEP.join(" ")}`]);
      },
    });
  }
  await interleave(rec, parts, 4);
  return { tbHandles, dcPids };
}

// get_task on running tasks against read_process_output on running
// processes, `n` each, cycling over the handles.
export async function readsRunning(ctx, rec, sandboxId, handles, n = READ_CALLS) {
  const parts = [
    {
      name: "DC read_process_output (running)",
      n,
      fn: (i) =>
        ctx.dc.call("read_process_output", { pid: handles.dcPids[i % handles.dcPids.length], timeout_ms: 0 }),
    },
  ];
  if (handles.tbHandles.length)
    parts.unshift({ name: "taskbox ping beside get_task (running)", n, fn: () => ctx.tb.client.ping() }, {
      name: "taskbox get_task (running)",
      n,
      fn: async (i) => {
        const task_id = handles.tbHandles[i % handles.tbHandles.length];
        const r = sc(await ctx.tb.call("get_task", { sandbox_id: sandboxId, task_id, stdout_offset: 0, stderr_offset: 0, limit: 16384 }));
        if (r.state !== "running") throw new Error(`get_task (running): state ${r.state}`);
      },
    });
  await interleave(rec, parts, 10);
}

// The same on a finished task / process that printed one line.
export async function readsFinished(ctx, rec, sandboxId, n = READ_CALLS) {
  const parts = [];
  if (sandboxId) {
    const r = sc(await ctx.tb.call("start_task", { sandbox_id: sandboxId, command: "echo done", timeout: 60 }));
    const task_id = r.task_id;
    const args = { sandbox_id: sandboxId, task_id, stdout_offset: 0, stderr_offset: 0, limit: 16384 };
    await waitFor("a finished task", async () => sc(await ctx.tb.call("get_task", args)).state === "succeeded");
    parts.push({ name: "taskbox ping beside get_task (finished)", n, fn: () => ctx.tb.client.ping() }, {
      name: "taskbox get_task (finished)",
      n,
      fn: async () => {
        const v = sc(await ctx.tb.call("get_task", args));
        if (v.state !== "succeeded" || !v.stdout.includes("done")) throw new Error(`get_task (finished): ${JSON.stringify(v)}`);
      },
    });
  }
  const pid = dcPid(await ctx.dc.call("start_process", { command: "echo done", timeout_ms: 1 }));
  const read = () => ctx.dc.call("read_process_output", { pid, timeout_ms: 0, offset: 0 });
  await waitFor("a finished process", async () => /Process completed/.test((await read()).content[0].text));
  parts.push({ name: "DC read_process_output (finished)", n, fn: read });
  await interleave(rec, parts, 10);
}

// cancel_task against force_terminate on what starts() left running.
export async function cancels(ctx, rec, sandboxId, handles) {
  const parts = [
    {
      name: "DC force_terminate",
      n: handles.dcPids.length,
      fn: (i) => ctx.dc.call("force_terminate", { pid: handles.dcPids[i] }),
    },
  ];
  if (handles.tbHandles.length)
    parts.unshift({
      name: "taskbox cancel_task",
      n: handles.tbHandles.length,
      fn: async (i) => {
        const r = sc(await ctx.tb.call("cancel_task", { sandbox_id: sandboxId, task_id: handles.tbHandles[i] }));
        if (r.state !== "cancelled") throw new Error(`cancel_task: state ${r.state}`);
      },
    });
  await interleave(rec, parts, 5);
}

// Reaps the run's own marker processes that outlived their owner and
// returns how many there were.
export async function reapLeftovers(argv) {
  await sleepMs(100);
  const left = pidsWithArgv(argv);
  left.forEach((p) => killQuietly(p));
  return left.length;
}

// One whole latency run. Returns the record.
export async function latencyRound(ctx) {
  const rec = newRecord();
  const k = ctx.light ? 0.25 : 1; // the warm-up run is a lighter copy
  const n = (x) => Math.max(2, Math.round(x * k));
  await connects(ctx, rec, n(5));
  await pings(ctx, rec, n(200));
  let sandboxId = null;
  if (ctx.tbTasks) sandboxId = sc(await ctx.tb.call("create_sandbox", { timeout: 3600 })).sandbox_id;
  const handles = await starts(ctx, rec, sandboxId, n(START_CALLS));
  await readsRunning(ctx, rec, sandboxId, handles, n(READ_CALLS));
  await readsFinished(ctx, rec, sandboxId, n(READ_CALLS));
  await cancels(ctx, rec, sandboxId, handles);
  rec.set("DC processes left alive by force_terminate", await reapLeftovers(DC_SLEEP));
  if (ctx.supervisorSource) await reapLeftovers(SUP_SLEEP);
  if (sandboxId) {
    rec.set("taskbox processes left alive by cancel_task", await reapLeftovers(TB_SLEEP));
    await ctx.tb.call("kill_sandbox", { sandbox_id: sandboxId });
  }
  return rec;
}
