// Which supervisor the server runs on the local provider (docs/supervisor.md,
// "Two implementations"): the native one of the build where the provider
// declares TASKBOX_FEATURE_HOST_EXEC, python3 when TASKBOX_SUPERVISOR says so
// or when the native binary is not visible in the sandbox (bwrap with the
// build under /tmp), and either server handles the other's tasks.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { bwrapWorks, startServer, callTool, scratchDir, writeConfig } from "../lib/client.mjs";

const native = join(process.env.TASKBOX_BUILDDIR || ".", "taskbox-supervisor");
const env = { PATH: `/usr/bin:/bin:${process.env.PATH || ""}` };

function data(result) {
  assert.ok(!result.isError, result.content?.[0]?.text);
  return result.structuredContent || JSON.parse(result.content[0].text);
}

// The status.json of TASK anywhere under DIR (the provider's state root).
function statusOf(dir, task) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    let st;
    try {
      st = statSync(path);
    } catch {
      continue;
    }
    if (!st.isDirectory()) continue;
    if (name === task) return JSON.parse(readFileSync(join(path, "status.json"), "utf8"));
    const found = statusOf(path, task);
    if (found) return found;
  }
  return null;
}

// The program a pid runs: the native binary, or python3.
function program(pid) {
  return readlinkSync(`/proc/${pid}/exe`);
}

describe("the supervisor the host chooses", () => {
  let dir;
  let cfg;
  const servers = [];

  async function server(extraEnv = {}, config = cfg) {
    const s = await startServer({ args: ["--config", config], env: { ...env, ...extraEnv } });
    servers.push(s);
    return s;
  }

  before(() => {
    dir = scratchDir("taskbox-sup-choice-");
    cfg = writeConfig(dir, {
      default: "local",
      providers: { local: { plugin: "local", settings: { root: join(dir, "state") } } },
    });
  });

  after(async () => {
    for (const s of servers) await s.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  test("native by default, python3 on request; each cancels the other's tasks", async () => {
    const n = await server();
    const p = await server({ TASKBOX_SUPERVISOR: "python3" });
    const sb = data(await callTool(n.client, "create_sandbox", { timeout: 900 })).sandbox_id;
    const byNative = data(await callTool(n.client, "start_task", { sandbox_id: sb, command: "sleep 30" }));
    const byPython = data(await callTool(p.client, "start_task", { sandbox_id: sb, command: "sleep 30" }));
    const recN = statusOf(dir, byNative.task_id);
    const recP = statusOf(dir, byPython.task_id);
    assert.equal(program(recN.supervisor_pid), native, "the native supervisor runs the task");
    assert.match(program(recP.supervisor_pid), /python3/, "TASKBOX_SUPERVISOR=python3");

    const c1 = data(await callTool(p.client, "cancel_task", { sandbox_id: sb, task_id: byNative.task_id }));
    const c2 = data(await callTool(n.client, "cancel_task", { sandbox_id: sb, task_id: byPython.task_id }));
    assert.equal(c1.state, "cancelled");
    assert.equal(c2.state, "cancelled");
    data(await callTool(p.client, "remove_task", { sandbox_id: sb, task_id: byNative.task_id }));
    data(await callTool(n.client, "remove_task", { sandbox_id: sb, task_id: byPython.task_id }));
    assert.equal(statusOf(dir, byNative.task_id), null);
    assert.equal(statusOf(dir, byPython.task_id), null);
    data(await callTool(n.client, "kill_sandbox", { sandbox_id: sb }));
  });

  test("a native binary the sandbox cannot see falls back to python3", { skip: !bwrapWorks() && "bubblewrap cannot run here" }, async () => {
    const bdir = join(dir, "bwrap");
    mkdirSync(bdir);
    const bcfg = writeConfig(bdir, {
      default: "boxed",
      providers: {
        boxed: { plugin: "local", settings: { root: join(dir, "bstate"), isolation: "bwrap" } },
      },
    });
    // Inside bwrap /tmp is the sandbox's own: a copy of the native binary
    // under /tmp is not visible there.
    const hidden = join(dir, "hidden-supervisor");
    execFileSync("cp", [native, hidden]);
    const s = await server({ TASKBOX_SUPERVISOR: hidden }, bcfg);
    const sb = data(await callTool(s.client, "create_sandbox", { timeout: 900 })).sandbox_id;
    const t = data(await callTool(s.client, "start_task", { sandbox_id: sb, command: "sleep 30" }));
    const rec = statusOf(join(dir, "bstate"), t.task_id);
    assert.ok(rec, "the task has a record");
    if (hidden.startsWith("/tmp/")) assert.match(program(rec.supervisor_pid), /python3/);
    const c = data(await callTool(s.client, "cancel_task", { sandbox_id: sb, task_id: t.task_id }));
    assert.equal(c.state, "cancelled");
    data(await callTool(s.client, "kill_sandbox", { sandbox_id: sb }));
  });
});
