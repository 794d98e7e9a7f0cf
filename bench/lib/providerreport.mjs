// What the provider benches' reports (bench/lib/remotereport.mjs for
// remote.md, bench/k8s.mjs for k8s.md) write alike: a table row, a median
// (min–max) across runs, a ratio, the machine line of the header and the
// per-run table.
import { fmt, summary } from "./stats.mjs";

export const row = (cells) => `| ${cells.join(" | ")} |`;
export const range = (s) => (s.n ? `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})` : "n/a");
export const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);

// The header's "- Machine:" line: cores, CPU, load and busy share.
export function machineLine(meta) {
  const loads = summary(meta.loadSamples);
  return `- Machine: ${meta.cores} cores (${meta.cpu}), load average ${meta.loadStart.join(" ")} at the start, ${meta.loadEnd.join(" ")} at the end; the 1-minute load sampled every 2 s: median ${fmt(loads.median)}, min ${fmt(loads.min)}, max ${fmt(loads.max)}; the machine was ${fmt(meta.busyPercent)}% busy over the whole run.`;
}

// The lines of the per-run table (measured runs only), with each cell's
// seconds in the run.
export function perRunTable(meta, runs) {
  return [
    "Per run (measured runs only):",
    "",
    row(["run", "seconds", "machine busy %", "load average at its end", ...meta.cells.map((c) => `${c.instance} s`)]),
    row(["---", "---:", "---:", "---", ...meta.cells.map(() => "---:")]),
    ...runs.map((r, i) => row([i + 1, r.machine.seconds.toFixed(1), fmt(r.machine.busyPercent), r.machine.load.join(" "), ...meta.cells.map((c) => fmt(r.cells[c.instance]?.seconds))])),
  ];
}
