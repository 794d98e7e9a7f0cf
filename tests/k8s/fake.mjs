// Starts tests/k8s/fake_apiserver.py (TLS, client certificates) on a root
// filesystem built once per build tree (tests/k8s/rootfs.sh, under a lock
// so that concurrent tests share it), and hands back its kubeconfig and the
// fault switches. stop() ends it and kills its pods' processes; down() and
// up() stop and restart it on the same port and state (its pods' processes
// live on, as containers outlive an apiserver restart). args are more of
// the fake's options (its modes: --exec-protocols, --sandbox-pod-names),
// kept across down() and up().
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { scratchDir } from "../lib/client.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function paths() {
  const src = process.env.TASKBOX_SRCDIR;
  const build = process.env.TASKBOX_BUILDDIR;
  if (!src || !build) throw new Error("TASKBOX_SRCDIR/TASKBOX_BUILDDIR are not set: run through `make check`");
  return { src, build };
}

// The pods' root filesystem; null when it cannot be built here (skip).
export function rootfs() {
  const { src, build } = paths();
  const dir = join(build, "tests/k8s/rootfs");
  mkdirSync(join(build, "tests/k8s"), { recursive: true });
  try {
    execFileSync("flock", [dir + ".lock", "sh", join(src, "tests/k8s/rootfs.sh"), dir], {
      stdio: ["ignore", "inherit", "inherit"],
    });
  } catch (e) {
    if (e.status === 77) return null;
    throw e;
  }
  return dir;
}

// The fake's script; K8S_FAKE_APISERVER names another (a fix under test).
function fakeScript(src) {
  return process.env.K8S_FAKE_APISERVER || join(src, "tests/k8s/fake_apiserver.py");
}

// The plugin directory of this build, added to the search path.
export function pluginPath() {
  const { build } = paths();
  const mine = join(build, "plugins/k8s/.libs");
  return process.env.TASKBOX_PLUGIN_PATH ? `${mine}:${process.env.TASKBOX_PLUGIN_PATH}` : mine;
}

export async function startFake({ lifetime = 3600, token: firstToken, args: more = [] } = {}) {
  let token = firstToken;
  const { src } = paths();
  const root = rootfs();
  if (!root) return null;
  const dir = scratchDir("taskbox-k8s-fake-");
  const state = join(dir, "state");
  const ready = join(dir, "ready.json");
  let child;
  let info;

  async function launch(port) {
    rmSync(ready, { force: true });
    const args = [fakeScript(src), "--state", state, "--ready-file", ready, "--tls",
      "--rootfs", root, "--lifetime", String(lifetime), ...more];
    if (token) args.push("--token", token);
    if (port) args.push("--port", String(port));
    child = spawn("python3", args, { stdio: ["ignore", "ignore", process.env.K8S_FAKE_VERBOSE ? "inherit" : "ignore"] });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    for (let i = 0; i < 300 && !existsSync(ready); i++) {
      if (child.exitCode !== null) throw new Error(`the fake apiserver exited with ${child.exitCode}`);
      await sleep(50);
    }
    if (!existsSync(ready)) throw new Error("the fake apiserver did not start within 15 s");
    info = JSON.parse(readFileSync(ready, "utf8"));
    child.exited = exited;
  }
  await launch();

  // A request to the fake as the kubeconfig's client certificate.
  function call(method, path, body, contentType = "application/json") {
    return new Promise((resolve, reject) => {
      const req = request(
        info.url + path,
        {
          method,
          ca: readFileSync(info.ca),
          cert: readFileSync(info.client_cert),
          key: readFileSync(info.client_key),
          headers: body ? { "Content-Type": contentType } : {},
        },
        (res) => {
          let text = "";
          res.on("data", (d) => (text += d));
          res.on("end", () => {
            let json = null;
            try {
              json = JSON.parse(text);
            } catch {
              // not JSON
            }
            resolve({ status: res.statusCode, json, text });
          });
        },
      );
      req.on("error", reject);
      if (body) req.write(JSON.stringify(body));
      req.end();
    });
  }

  async function down() {
    if (!child || child.exitCode !== null) return;
    child.kill("SIGTERM");
    await child.exited;
  }

  return {
    dir,
    get url() {
      return info.url;
    },
    get kubeconfig() {
      return info.kubeconfig;
    },
    get info() {
      return info;
    },
    call,
    faults: (f) => call("POST", "/fake/faults", f),
    clearFaults: () => call("DELETE", "/fake/faults"),
    evict: (ns, name) => call("POST", `/fake/evict/${ns}/${name}`),
    log: async () => (await call("GET", "/fake/log")).json,
    clearLog: () => call("DELETE", "/fake/log"),
    pod: async (ns, name) => call("GET", `/api/v1/namespaces/${ns}/pods/${name}`),
    down,
    // Starts it again on its port and state (with another --token when
    // given).
    up: (opts = {}) => {
      if (opts.token !== undefined) token = opts.token;
      return launch(info.port);
    },
    async stop() {
      await down();
      try {
        execFileSync("python3", [fakeScript(src), "--state", state, "--cleanup"], {
          stdio: "ignore",
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
