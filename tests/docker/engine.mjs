// tests/docker/engine.sh from node: engine("start", dir), engine("env", dir),
// engine("latency", dir, ms), ... Returns the NAME=value lines it printed as
// an object, or null when it exits 77 (no engine here); any other failure
// throws. env adds to the script's environment.
import { spawnSync } from "node:child_process";
import { join } from "node:path";

export function engineWith(env, ...args) {
  const src = process.env.TASKBOX_SRCDIR;
  if (!src) throw new Error("TASKBOX_SRCDIR is not set: run through `make check`");
  const r = spawnSync("sh", [join(src, "tests/docker/engine.sh"), ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  if (r.status === 77) return null;
  if (r.status !== 0) throw new Error(`engine.sh ${args[0]}: exit ${r.status}`);
  return Object.fromEntries(
    r.stdout
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

export const engine = (...args) => engineWith({}, ...args);
