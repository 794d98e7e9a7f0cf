// Runs the built e2b plugin through tests/e2b/e2b-driver (one JSON op per
// line) so that node tests can drive it against the fake. The driver runs
// behind $TASKBOX_TEST_WRAPPER when that is set (e.g. valgrind).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";

export function pluginPaths() {
  const build = process.env.TASKBOX_BUILDDIR;
  if (!build) throw new Error("TASKBOX_BUILDDIR is not set: run through `make check`");
  return {
    driver: join(build, "tests/e2b/e2b-driver"),
    plugin: join(build, "plugins/e2b/.libs/e2b.so"),
  };
}

export class Driver {
  constructor(env = {}) {
    const { driver, plugin } = pluginPaths();
    const wrapper = (process.env.TASKBOX_TEST_WRAPPER || "").split(/\s+/).filter(Boolean);
    const argv = [...wrapper, driver, plugin];
    this.child = spawn(argv[0], argv.slice(1), {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    this.stderr = "";
    this.stdout = "";
    this.child.stderr.on("data", (d) => (this.stderr += d));
    this.lines = createInterface({ input: this.child.stdout });
    this.waiting = [];
    this.lines.on("line", (line) => {
      this.stdout += line + "\n";
      const w = this.waiting.shift();
      if (w) w.resolve(JSON.parse(line));
    });
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)));
    this.exited.then((code) => {
      for (const w of this.waiting.splice(0)) w.reject(new Error(`driver exited with ${code}: ${this.stderr}`));
    });
  }

  op(cmd) {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.child.stdin.write(JSON.stringify(cmd) + "\n");
    });
  }

  // Resolves once the driver's stderr matches re (a log line travels on
  // its own pipe, so it may arrive after the op's answer); rejects after ms.
  async stderrMatching(re, ms = 10000) {
    const until = Date.now() + ms;
    while (!re.test(this.stderr)) {
      if (Date.now() > until) throw new Error(`no log line matching ${re} in ${ms} ms: ${this.stderr}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.stderr;
  }

  async close() {
    this.child.stdin.end();
    return this.exited;
  }
}

export const RC = {
  OK: 0, INVALID: 1, NOMEM: 2, NOT_FOUND: 3, GONE: 4, UNAVAILABLE: 5, PERMISSION: 6,
  AUTH: 7, RATE_LIMITED: 8, TIMEOUT: 9, PROTOCOL: 10, UNSUPPORTED: 11, IO: 12,
  INTERNAL: 13, CANCELLED: 14,
};

export const b64 = (s) => Buffer.from(s).toString("base64");
export const unb64 = (s) => Buffer.from(s || "", "base64");
