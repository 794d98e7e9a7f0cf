// Runs the built k8s plugin through the generic plugin test driver
// (tests/e2b/e2b-driver loads the plugin it is given and runs one JSON op
// per line), so that node tests can drive it op by op against the fake
// apiserver. The driver runs behind $TASKBOX_TEST_WRAPPER when that is set;
// another driver of the build (tests/k8s/owner-driver, for describe and
// list) may be named instead.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";

export { RC, b64, unb64 } from "../e2b/plugin-driver.mjs";

export class K8sDriver {
  constructor(env = {}, driver = "tests/e2b/e2b-driver") {
    const build = process.env.TASKBOX_BUILDDIR;
    if (!build) throw new Error("TASKBOX_BUILDDIR is not set: run through `make check`");
    const wrapper = (process.env.TASKBOX_TEST_WRAPPER || "").split(/\s+/).filter(Boolean);
    const argv = [...wrapper, join(build, driver), join(build, "plugins/k8s/.libs/k8s.so")];
    this.child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } });
    this.stderr = "";
    this.child.stderr.on("data", (d) => (this.stderr += d));
    this.waiting = [];
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      const w = this.waiting.shift();
      if (w) w.resolve(JSON.parse(line));
    });
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)));
    this.exited.then((code) => {
      for (const w of this.waiting.splice(0)) w.reject(new Error(`driver exited with ${code}: ${this.stderr}`));
    });
  }

  // One op. A connect first closes the connection the driver holds (it
  // would otherwise drop it unclosed, which valgrind calls a leak).
  async op(cmd) {
    if (cmd.op === "connect") await this.send({ op: "close" });
    return this.send(cmd);
  }

  send(cmd) {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.child.stdin.write(JSON.stringify(cmd) + "\n");
    });
  }

  async close() {
    this.child.stdin.end();
    return this.exited;
  }
}
