// The frame the provider benches (bench/remote.mjs, bench/k8s.mjs) share
// around their cells, each a provider instance in one taskbox process: the
// binary copied and stamped, the machine watched while they run, the
// warm-up and measured runs with the cells taking turns, the clean-up, and
// main's exit.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { loadAverage, machineTicks } from "./procfs.mjs";
import { newRecord } from "./rounds.mjs";
import { quantile } from "./stats.mjs";

// The source tree (the one holding bench/).
const top = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

// A time as ISO 8601 to the second.
export const isoSeconds = (d) => d.toISOString().replace(/\.\d+Z$/, "Z");

// The comma-separated list v, or d when v is unset or empty.
export const list = (v, d) => (v || d).split(",").map((x) => x.trim()).filter(Boolean);

// A file's sha256 and modification time (a plugin's stamp in the results).
export const fileStamp = (f) => ({
  sha256: createHash("sha256").update(readFileSync(f)).digest("hex"),
  mtime: isoSeconds(statSync(f).mtime),
});

// Copies the taskbox binary srcBin into scratch, so that a rebuild meanwhile
// cannot change what is measured: { bin (the copy), stamp (the results'
// meta fields naming it: its version, srcBin relative to the source tree,
// the copy's sha256 and the original's mtime) }.
export function copyTaskbox(srcBin, scratch) {
  const bin = join(scratch, "taskbox");
  copyFileSync(srcBin, bin);
  const sha256 = createHash("sha256").update(readFileSync(bin)).digest("hex");
  const binMtime = isoSeconds(statSync(srcBin).mtime);
  const version = execFileSync(bin, ["--version"], { encoding: "utf8" }).trim().replace(/^taskbox\s*/, "");
  return {
    bin,
    stamp: { taskboxVersion: version, taskboxBin: relative(top, srcBin), taskboxSha256: sha256, taskboxMtime: binMtime },
  };
}

// The supervisors a provider bench measures, from env var `name` (default
// auto,static: each instance's default, and "supervisor": "static"). For
// static, copies the build's taskbox-supervisor-static beside the bench's
// copy of taskbox in scratch (an installed taskbox finds it so) and notes
// its stamp in stamp.staticSupervisor; where the build has none, leaves
// static out and says so in notes.
export function benchSupervisors(name, srcBin, scratch, stamp, notes) {
  const supervisors = list(process.env[name], "python3,static");
  for (const x of supervisors) if (!["python3", "static", "auto"].includes(x)) throw new Error(`${name}: ${x}: python3, static or auto`);
  if (!supervisors.includes("static")) return supervisors;
  const staticSrc = join(dirname(srcBin), "taskbox-supervisor-static");
  if (!existsSync(staticSrc)) {
    notes.push(`no ${relative(top, staticSrc)}: the static supervisor not measured`);
    return supervisors.filter((x) => x !== "static");
  }
  copyFileSync(staticSrc, join(scratch, "taskbox-supervisor-static"));
  stamp.staticSupervisor = fileStamp(staticSrc);
  return supervisors;
}

// Watches the machine from now: its busy ticks, and its 1-minute load
// average every 2 s until stop(). elapsed() is the seconds since the start;
// meta(setupSeconds) the results' machine and timing fields, in the order
// their meta keeps them.
export function watchMachine() {
  const t0 = performance.now();
  const ticks0 = machineTicks();
  const loadStart = loadAverage();
  const loadSamples = [];
  const sampler = setInterval(() => loadSamples.push(loadAverage()[0]), 2000);
  const elapsed = () => (performance.now() - t0) / 1000;
  return {
    elapsed,
    stop: () => clearInterval(sampler),
    meta(setupSeconds) {
      const ticks1 = machineTicks();
      return {
        node: process.versions.node,
        cores: cpus().length,
        cpu: cpus()[0]?.model?.trim() || "unknown CPU",
        loadStart,
        loadEnd: loadAverage(),
        loadSamples,
        busyPercent: (100 * (ticks1.busy - ticks0.busy)) / (ticks1.total - ticks0.total),
        setupSeconds,
        seconds: elapsed(),
      };
    },
  };
}

// The warm-up run (light) and then `runs` measured runs. In each the cells
// take turns, the order rotated each run; measure(cell, rec, light) makes
// one cell's calls into a new record, and the run keeps per cell the
// samples of each op in ops, the record's values and the cell's seconds,
// and the machine's busy share, load and seconds. Each run is logged, its
// cells described by describe(cell, p50) where p50(cell, op) is that op's
// p50 in the run. Returns the measured runs.
export async function cellRuns({ runs, cells, ops, measure, describe, log }) {
  const out = [];
  for (let i = 0; i <= runs; i++) {
    const light = i === 0;
    const tr = performance.now();
    const m0 = machineTicks();
    const run = { cells: {} };
    // The cells take turns, the order rotated each run.
    const order = cells.map((_, k) => cells[(k + i) % cells.length]);
    for (const cell of order) {
      const rec = newRecord();
      const cs = performance.now();
      await measure(cell, rec, light);
      run.cells[cell.instance] = {
        ...Object.fromEntries(ops.map((op) => [op, rec.samples[op] || []])),
        ...rec.values,
        seconds: (performance.now() - cs) / 1000,
      };
    }
    const m1 = machineTicks();
    run.machine = { busyPercent: (100 * (m1.busy - m0.busy)) / (m1.total - m0.total), load: loadAverage(), seconds: (performance.now() - tr) / 1000 };
    if (!light) out.push(run);
    const p50 = (c, op) => quantile(run.cells[c.instance][op], 0.5);
    log(`${light ? "warm-up" : `run ${i}/${runs}`} (${run.machine.seconds.toFixed(1)} s): ` + cells.map((c) => describe(c, p50)).join("; "));
  }
  return out;
}

// Kills each cell's sandbox (logging what fails) and closes taskbox.
export async function closeCells(tb, cells, log) {
  if (!tb) return;
  for (const c of cells) if (c.sandbox_id) await tb.call("kill_sandbox", { sandbox_id: c.sandbox_id }).catch((e) => log(`kill_sandbox ${c.instance}: ${e.message}`));
  await tb.close().catch(() => {});
}

// Removes the scratch directory, logging a failure.
export function removeScratch(scratch, log) {
  try {
    rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
  } catch (e) {
    log(`could not remove the scratch directory: ${e.message}`);
  }
}

// Thrown where a bench cannot run here: it says why and exits 0.
export class Skip extends Error {}
export function skip(why) {
  throw new Skip(why);
}

// Runs main and exits: 0 when it resolves or skips (saying why, and that no
// `name` results were written), 1 with its error otherwise.
export function runMain(main, log, name) {
  main().then(
    () => process.exit(0),
    (e) => {
      if (e instanceof Skip) {
        log(`skipped: ${e.message} (no ${name} results written)`);
        process.exit(0);
      }
      log(`failed: ${e.stack || e}`);
      process.exit(1);
    },
  );
}
