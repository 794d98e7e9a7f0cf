// The task supervisor's verbs running on this host, found in /proc: the
// sandboxes of the e2b and k8s fakes and of the container engine are this
// host's processes.
import { readdirSync, readFileSync } from "node:fs";

// How many `wait` verbs run now for the task ids in ids (a Set).
export function waitVerbs(ids) {
  let n = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let argv;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // gone meanwhile
    }
    const at = argv.indexOf("wait");
    if (at >= 0 && argv[at + 1] === "--root" && ids.has(argv[argv.indexOf("--id", at) + 1])) n++;
  }
  return n;
}

// The `watch` verbs running now (docs/supervisor.md) that name any of the
// task ids in ids (a Set): [{ pid, tasks: [task ids named] }].
export function watchVerbs(ids) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let argv;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // gone meanwhile
    }
    const at = argv.indexOf("watch");
    if (at < 0 || argv[at + 1] !== "--root") continue;
    const list = argv[argv.indexOf("--tasks", at) + 1] || "";
    const tasks = list.split(",").map((i) => i.split("/")[0]);
    if (tasks.some((t) => ids.has(t))) found.push({ pid: Number(pid), tasks });
  }
  return found;
}
