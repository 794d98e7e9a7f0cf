// `taskbox serve --http` on a port chosen before it starts, for tests that
// need its URL in its own config (http.public_url) and read everything it
// writes on stderr (a test that greps it for secrets). No client is
// connected: the test brings its own (tests/lib/client.mjs's startServer
// connects one with a static token at once).
import { spawn } from "node:child_process";
import net from "node:net";
import { taskboxCommand, writeConfig } from "./client.mjs";

// A TCP port on 127.0.0.1 that was free a moment ago.
export async function freePort() {
  const srv = net.createServer();
  await new Promise((resolve, reject) => {
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", resolve);
  });
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

const live = new Set();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

// Starts taskbox on 127.0.0.1:port with config (an object, written to
// dir) and env over the test's own (TASKBOX_HTTP_TOKEN is dropped unless
// env sets it). Resolves { url, pid, stderr() (all it wrote so far),
// stop() } once it says it listens; stop() sends SIGTERM and fails unless
// it exits 0 (valgrind's and the sanitizers' findings make it nonzero).
export async function serveHttp({ port, config, dir, env = {}, echo = true }) {
  const cfg = writeConfig(dir, config);
  const { command, args } = taskboxCommand(["serve", "--http", `127.0.0.1:${port}`, "--config", cfg]);
  const fullEnv = { ...process.env };
  delete fullEnv.TASKBOX_HTTP_TOKEN;
  Object.assign(fullEnv, env);
  const child = spawn(command, args, { env: fullEnv, stdio: ["ignore", "pipe", "pipe"] });
  live.add(child);
  child.unref();
  child.stdout.unref();
  child.stderr.unref();
  let text = "";
  const onData = (d) => {
    text += d.toString();
    if (echo) process.stderr.write(d);
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const exited = new Promise((resolve) =>
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  child.once("error", () => {});
  const url = await new Promise((resolve, reject) => {
    const limit = setTimeout(() => reject(new Error(`no "listening on" line within 120 s:\n${text.slice(-2000)}`)), 120000);
    const look = () => {
      const m = /listening on (http:\/\/\S+)/.exec(text);
      if (m) {
        clearTimeout(limit);
        child.stderr.off("data", look);
        resolve(m[1]);
      }
    };
    child.stderr.on("data", look);
    exited.then((e) => {
      clearTimeout(limit);
      reject(new Error(`taskbox serve --http exited (${e.signal || e.code}) before listening:\n${text.slice(-2000)}`));
    });
  }).catch((e) => {
    child.kill("SIGKILL");
    throw e;
  });
  return {
    url,
    pid: child.pid,
    stderr: () => text,
    async stop() {
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 60000);
      const e = await exited;
      clearTimeout(t);
      if (e.code !== 0) throw new Error(`taskbox serve --http: exit ${e.signal || e.code} after SIGTERM`);
    },
  };
}
