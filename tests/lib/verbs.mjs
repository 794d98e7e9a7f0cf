// The task supervisor's verbs running on this host, found in /proc: the
// sandboxes of the e2b and k8s fakes and of the container engine are this
// host's processes.
import { readdirSync, readFileSync } from "node:fs";

// Every `wait` or `watch` verb running now: [{ pid, verb, tasks }], tasks
// being the task ids it names (wait's --id, watch's --tasks).
export function runningVerbs() {
  const found = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let argv;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // gone meanwhile
    }
    const at = argv.findIndex((a, i) => (a === "wait" || a === "watch") && argv[i + 1] === "--root");
    if (at < 0) continue;
    const verb = argv[at];
    const value = argv[argv.indexOf(verb === "wait" ? "--id" : "--tasks", at) + 1] || "";
    found.push({ pid: Number(pid), verb, tasks: verb === "wait" ? [value] : value.split(",").map((i) => i.split("/")[0]) });
  }
  return found;
}

// The `watch` verbs running now (docs/supervisor.md) that name any of the
// task ids in ids (a Set): [{ pid, verb, tasks }].
export function watchVerbs(ids) {
  return runningVerbs().filter((v) => v.verb === "watch" && v.tasks.some((t) => ids.has(t)));
}

// How many of the task ids in ids (a Set) a running verb watches.
export function watchedTasks(ids) {
  const named = new Set(runningVerbs().flatMap((v) => v.tasks.filter((t) => ids.has(t))));
  return named.size;
}
