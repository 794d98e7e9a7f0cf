// The docker provider on an image without python3 (engine.sh's
// taskbox-test:nopython: the test image minus python3), against a real
// engine: the first verb finds python3 missing, the server copies its
// static supervisor into the container (.taskbox/bin, named by its content)
// and runs every verb with it. A task is started, written to, read and
// waited on, then read and cancelled from a second server process, which
// uses the same copy; a server with no static supervisor to copy says so.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { callTool, scratchDir, startServer, writeConfig } from "../lib/client.mjs";
import { engine } from "./engine.mjs";

let dir;
let skip = null;
let vars = {};
let cfg;
let home;

before(() => {
  dir = scratchDir("taskbox-nopython-engine-");
  if (!engine("start", dir)) {
    skip = "no engine here (engine.sh exit 77)";
    return;
  }
  vars = engine("env", dir);
  home = scratchDir("taskbox-nopython-cfg-");
  cfg = writeConfig(home, {
    default: "box",
    providers: { box: { plugin: "docker", settings: { host: vars.DOCKER_HOST, image: vars.TASKBOX_DOCKER_IMAGE_NOPYTHON } } },
  });
});

after(() => {
  if (dir) engine("stop", dir);
});

async function server(env = {}) {
  const s = await startServer({
    env: { TASKBOX_CONFIG: cfg, HOME: home, XDG_STATE_HOME: join(home, "state"), XDG_CONFIG_HOME: join(home, "config"), ...env },
  });
  const call = async (name, args) => {
    const r = await callTool(s.client, name, args);
    const text = (r.content || []).map((c) => c.text || "").join("");
    assert.ok(!r.isError, `${name}: ${text}`);
    return r.structuredContent || JSON.parse(text);
  };
  const refused = async (name, args) => {
    const r = await callTool(s.client, name, args);
    assert.equal(r.isError, true, `${name} was expected to fail`);
    return (r.content || []).map((c) => c.text || "").join("");
  };
  return { s, call, refused };
}

test("tasks run in a container without python3 through the copied static supervisor", { timeout: 300000 }, async (t) => {
  if (skip) return t.skip(skip);
  const a = await server();
  const { sandbox_id } = await a.call("create_sandbox", { timeout: 600 });
  try {
    const py = await a.call("run_command", { sandbox_id, command: "command -v python3 || echo none" });
    assert.equal(py.stdout.trim(), "none", "the image has no python3");

    const task = await a.call("start_task", { sandbox_id, command: "echo start; read line; echo \"got $line\"; sleep 60", stdin: "pipe" });
    assert.equal(task.state, "running", JSON.stringify(task));
    const bin = await a.call("run_command", { sandbox_id, command: "ls -l .taskbox/bin" });
    const copies = bin.stdout.split("\n").filter((x) => /taskbox-supervisor-/.test(x));
    assert.equal(copies.length, 1, bin.stdout);
    assert.match(copies[0], /^-rwx------ .* taskbox-supervisor-[0-9a-f]{16}$/);

    const w = await a.call("write_task", { sandbox_id, task_id: task.task_id, data: "hello\n" });
    assert.equal(w.written, 6);
    let v = await a.call("get_task", { sandbox_id, task_id: task.task_id, wait: 20, stdout_offset: 0 });
    for (let i = 0; !/got hello/.test(v.stdout) && i < 20; i++)
      v = await a.call("get_task", { sandbox_id, task_id: task.task_id, wait: 5, stdout_offset: 0 });
    assert.equal(v.stdout, "start\ngot hello\n");
    assert.equal(v.state, "running");
    await a.s.close();

    // A fresh process: its first verb tries python3, then uses the copy.
    const b = await server();
    const c = await b.call("cancel_task", { sandbox_id, task_id: task.task_id });
    assert.equal(c.state, "cancelled", JSON.stringify(c));
    assert.equal(c.ended_by, "cancel");
    const again = (await b.call("run_command", { sandbox_id, command: "ls -l .taskbox/bin" })).stdout;
    assert.deepEqual(again.split("\n").filter((x) => /taskbox-supervisor-/.test(x)), copies, "no second copy");
    const list = await b.call("list_tasks", { sandbox_id });
    assert.equal(list.tasks.length, 1);
    await b.call("remove_task", { sandbox_id, task_id: task.task_id });
    await b.s.close();

    // A server without a static supervisor to copy refuses by saying so.
    const none = await server({ TASKBOX_SUPERVISOR_STATIC: join(home, "no-such-supervisor") });
    await none.call("run_command", { sandbox_id, command: "rm -rf .taskbox/bin" });
    const text = await none.refused("start_task", { sandbox_id, command: "true" });
    assert.match(text, /has no python3, and this taskbox has no static supervisor/);
    assert.match(text, new RegExp(sandbox_id.replace(/[.:]/g, "\\$&")));
    await none.call("kill_sandbox", { sandbox_id });
    await none.s.close();
  } catch (e) {
    const k = await server().catch(() => null);
    if (k) {
      await callTool(k.s.client, "kill_sandbox", { sandbox_id }).catch(() => {});
      await k.s.close();
    }
    throw e;
  }
});
