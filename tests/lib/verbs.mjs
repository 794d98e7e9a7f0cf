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
