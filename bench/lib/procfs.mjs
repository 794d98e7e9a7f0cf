// What the benchmark reads from /proc: resident memory, CPU time, the machine's
// load, and the processes a scenario left behind.
import { readFileSync, readdirSync } from "node:fs";

// Clock ticks per second as the kernel reports CPU time in /proc/PID/stat
// (USER_HZ, 100 on Linux on every architecture this runs on).
export const CLK_TCK = 100;

function readText(path) {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

// VmRSS of pid in bytes, or NaN when it is gone.
export function rssBytes(pid) {
  const text = readText(`/proc/${pid}/status`);
  const m = text && text.match(/^VmRSS:\s+(\d+)\s+kB/m);
  return m ? Number(m[1]) * 1024 : NaN;
}

// The fields of /proc/PID/stat after the command name, indexed so that
// stat(pid)[N] is field N of proc(5) (1-based), or null when it is gone.
export function stat(pid) {
  const text = readText(`/proc/${pid}/stat`);
  if (!text) return null;
  const close = text.lastIndexOf(")");
  const rest = text.slice(close + 2).trim().split(/\s+/);
  return [undefined, pid, text.slice(text.indexOf("(") + 1, close), ...rest];
}

// utime + stime of pid in clock ticks, or NaN when it is gone.
export function cpuTicks(pid) {
  const f = stat(pid);
  return f ? Number(f[14]) + Number(f[15]) : NaN;
}

export function cmdline(pid) {
  const text = readText(`/proc/${pid}/cmdline`);
  return text ? text.split("\0").filter(Boolean) : null;
}

export function allPids() {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

// Pids whose argv equals argv exactly (used to find the benchmark's own
// marker processes, e.g. a `sleep` with a duration no one else uses).
export function pidsWithArgv(argv) {
  const want = argv.join("\0");
  return allPids().filter((p) => {
    const c = cmdline(p);
    return c && c.join("\0") === want;
  });
}

export function parentOf(pid) {
  const f = stat(pid);
  return f ? Number(f[4]) : NaN;
}

export function loadAverage() {
  const text = readText("/proc/loadavg") || "";
  return text.split(/\s+/).slice(0, 3).map(Number);
}

// Total busy and idle ticks of the whole machine (for the load note).
export function machineTicks() {
  const line = (readText("/proc/stat") || "").split("\n")[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = v[3] + (v[4] || 0);
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

export function killQuietly(pid, signal = "SIGKILL") {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}
