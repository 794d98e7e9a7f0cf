// The latency proxy of tests/docker/engine.sh (`engine.sh latency DIR MS`,
// tests/docker/latency-proxy.mjs) in front of a real engine: every request
// through it takes at least the delay, on a fresh connection and on a
// kept-alive one, and the docker provider does its whole round of work
// through it (exec streams, archive uploads and downloads, a background
// task, its cancellation, the container's removal).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { request, Agent } from "node:http";
import { join } from "node:path";
import { callTool, scratchDir, startServer, writeConfig } from "../lib/client.mjs";
import { engine } from "./engine.mjs";

const SLOW_MS = 200; // the delay the raw requests are timed against
const WORK_MS = 50; // the delay the provider works through

let dir;
let skip = null;
let vars = {};


const socketOf = (host) => host.replace(/^unix:\/\//, "");

// One GET on socketPath; resolves with the status, the body and the ms from
// the call to the whole answer.
function get(socketPath, path, agent = false) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request({ socketPath, path, agent }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString(), ms: performance.now() - t0, socket: req.socket }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

before(() => {
  dir = scratchDir("taskbox-latency-engine-");
  if (!engine("start", dir)) {
    skip = "no engine here (engine.sh exit 77)";
    return;
  }
  vars = { ...engine("env", dir) };
  vars.slow = engine("latency", dir, String(SLOW_MS)).DOCKER_HOST;
  vars.work = engine("latency", dir, String(WORK_MS)).DOCKER_HOST;
});

after(() => {
  if (dir) engine("stop", dir);
});

test("engine.sh latency prints a socket of its own, and the same one when asked again", (t) => {
  if (skip) return t.skip(skip);
  assert.match(vars.slow, /^unix:\/\/.*latency-200\.sock$/);
  assert.notEqual(vars.slow, vars.DOCKER_HOST);
  assert.equal(engine("latency", dir, String(SLOW_MS)).DOCKER_HOST, vars.slow);
});

test("every request through the proxy takes at least the delay", async (t) => {
  if (skip) return t.skip(skip);
  const sock = socketOf(vars.slow);
  // A fresh connection per request.
  for (let i = 0; i < 3; i++) {
    const r = await get(sock, "/_ping");
    assert.equal(r.status, 200);
    assert.equal(r.body, "OK");
    assert.ok(r.ms >= SLOW_MS, `a request through the proxy took ${r.ms.toFixed(1)} ms, under ${SLOW_MS}`);
  }
  // Several requests on one kept-alive connection: each one pays.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set();
  try {
    for (let i = 0; i < 3; i++) {
      const r = await get(sock, "/_ping", agent);
      sockets.add(r.socket);
      assert.equal(r.status, 200);
      assert.equal(r.body, "OK");
      assert.ok(r.ms >= SLOW_MS, `request ${i} on a kept-alive connection took ${r.ms.toFixed(1)} ms`);
    }
  } finally {
    agent.destroy();
  }
  assert.equal(sockets.size, 1, "the three requests shared one connection");
});

test("the docker provider creates, runs, reads, cancels and removes through the proxy", { timeout: 180000 }, async (t) => {
  if (skip) return t.skip(skip);
  const scratch = scratchDir("taskbox-latency-cfg-");
  const cfg = writeConfig(scratch, {
    default: "slow",
    providers: { slow: { plugin: "docker", settings: { host: vars.work, image: vars.TASKBOX_DOCKER_IMAGE } } },
  });
  const s = await startServer({
    env: { TASKBOX_CONFIG: cfg, HOME: scratch, XDG_STATE_HOME: join(scratch, "state"), XDG_CONFIG_HOME: join(scratch, "config") },
  });
  const call = async (name, args) => {
    const r = await callTool(s.client, name, args);
    const text = (r.content || []).map((c) => c.text || "").join("");
    assert.ok(!r.isError, `${name}: ${text}`);
    return r.structuredContent || JSON.parse(text);
  };
  let sandbox_id;
  try {
    sandbox_id = (await call("create_sandbox", { timeout: 600 })).sandbox_id;
    const t0 = performance.now();
    const echo = await call("run_command", { sandbox_id, command: "echo through; echo err >&2; exit 4" });
    assert.ok(performance.now() - t0 >= WORK_MS, "run_command went through the proxy");
    assert.equal(echo.stdout, "through\n");
    assert.equal(echo.stderr, "err\n");
    assert.equal(echo.exit_code, 4);

    await call("write_file", { sandbox_id, path: "note.txt", content: "slow but whole\n" });
    assert.equal((await call("read_file", { sandbox_id, path: "note.txt" })).content, "slow but whole\n");

    const task = await call("start_task", { sandbox_id, command: "echo one; sleep 0.3; echo two", timeout: 60 });
    let v = await call("get_task", { sandbox_id, task_id: task.task_id, wait: 30, stdout_offset: 8 });
    for (let i = 0; v.state === "running" && i < 30; i++)
      v = await call("get_task", { sandbox_id, task_id: task.task_id, wait: 30, stdout_offset: 8 });
    assert.equal(v.state, "succeeded");
    assert.equal((await call("get_task", { sandbox_id, task_id: task.task_id })).stdout, "one\ntwo\n");

    const long = await call("start_task", { sandbox_id, command: "sleep 300", timeout: 600 });
    assert.equal((await call("cancel_task", { sandbox_id, task_id: long.task_id })).state, "cancelled");

    await call("kill_sandbox", { sandbox_id });
    sandbox_id = undefined;
  } finally {
    if (sandbox_id) await callTool(s.client, "kill_sandbox", { sandbox_id }).catch(() => {});
    await s.close();
    rmSync(scratch, { recursive: true, force: true });
  }
});
