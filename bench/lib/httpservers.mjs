// The HTTP servers the HTTP figures drive: taskbox (`serve --http`), the
// SDK peer (bench/peer/server.mjs), the trivial fixed-body server that
// gives the client's ceiling (bench/peer/fixed.mjs) and the holding one
// that gives its floor for the parked waits' burst (bench/peer/held.mjs). Each listens on a free
// loopback port and says where on stderr.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SYSTEM_PATH, taskboxEnv } from "./servers.mjs";

const peerDir = join(dirname(fileURLToPath(import.meta.url)), "..", "peer");
const LISTENING = /listening on (http:\/\/\S+)/;

// Spawns argv and resolves with { pid, url, stop(), stderr() } once a stderr
// line names the URL it listens on.
export function listen(name, argv, env, limitMs = 15000) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    let done = false;
    const timer = setTimeout(() => finish(new Error(`${name}: no "listening on" line within ${limitMs} ms`)), limitMs);
    const finish = (e, url) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (e) {
        child.kill("SIGKILL");
        reject(new Error(`${e.message}\n${err.slice(-2000)}`));
        return;
      }
      resolve({
        name,
        pid: child.pid,
        url,
        stderr: () => err,
        stop: () =>
          new Promise((r) => {
            if (child.exitCode !== null || child.signalCode !== null) return r();
            child.once("exit", () => r());
            child.kill("SIGTERM");
            setTimeout(() => child.kill("SIGKILL"), 5000).unref();
          }),
      });
    };
    child.stderr.on("data", (d) => {
      if (err.length < 65536) err += d.toString();
      const m = err.match(LISTENING);
      if (m) finish(null, m[1]);
    });
    child.on("error", (e) => finish(e));
    child.on("exit", (code, sig) => finish(new Error(`${name} exited (${code ?? sig}) before listening`)));
  });
}

// taskbox over HTTP (see taskboxEnv).
export function listenTaskbox(bin, stateDir, token, extraArgs = []) {
  const env = taskboxEnv(stateDir, token ? { TASKBOX_HTTP_TOKEN: token } : {});
  return listen("taskbox", [bin, "serve", "--http", "127.0.0.1:0", ...extraArgs], env);
}

export function listenPeer(root, token) {
  const env = { PATH: SYSTEM_PATH, NODE_ENV: "production", ...(token ? { PEER_HTTP_TOKEN: token } : {}) };
  return listen("peer", [process.execPath, join(peerDir, "server.mjs"), "--root", root], env);
}

export function listenFixed() {
  return listen("fixed", [process.execPath, join(peerDir, "fixed.mjs")], { PATH: SYSTEM_PATH });
}

export function listenHeld() {
  return listen("held", [process.execPath, join(peerDir, "held.mjs")], { PATH: SYSTEM_PATH });
}
