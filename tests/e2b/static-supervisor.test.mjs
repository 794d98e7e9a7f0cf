// An e2b instance configured with "supervisor": "static", against the fake
// (whose sandboxes have python3): the server copies its static native
// supervisor into the sandbox at the first verb, and every verb runs that
// copy: the task's supervisor, the wait verb that wakes a waiting call,
// cancel. A second task and a fresh server use the copy already there. A
// server with "supervisor": "python3" reads and cancels the static one's
// tasks. A copy that cannot run refuses the verb with the reason and the
// remedy; a taskbox without a static supervisor runs python3.
//
// The default ("auto", or no "supervisor"): the static copy where it runs
// in the sandbox; python3 where it does not (here a binary of another
// machine type), with the task working and one info line, no error.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, mkdirSync, openSync, closeSync, readFileSync, readlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { startFake } from "./fake/spawn.mjs";
import { callTool, scratchDir, startServer, writeConfig } from "../lib/client.mjs";

let fake, staticCfg, autoCfg, pythonCfg, defaultCfg;

before(async () => {
  fake = await startFake({ env: { PATH: `/usr/bin:/bin:${process.env.PATH || ""}` } });
  const settings = { api_url: fake.apiUrl, sandbox_url: fake.sandboxUrl };
  staticCfg = writeConfig(scratchDir(), { default: "cloud", providers: { cloud: { plugin: "e2b", supervisor: "static", settings } } });
  autoCfg = writeConfig(scratchDir(), { default: "cloud", providers: { cloud: { plugin: "e2b", supervisor: "auto", settings } } });
  pythonCfg = writeConfig(scratchDir(), { default: "cloud", providers: { cloud: { plugin: "e2b", supervisor: "python3", settings } } });
  defaultCfg = writeConfig(scratchDir(), { default: "cloud", providers: { cloud: { plugin: "e2b", settings } } });
});

after(async () => {
  if (fake) await fake.stop();
});

const server = (cfg, env = {}, opts = {}) => startServer({ args: ["--config", cfg], env: { E2B_API_KEY: fake.apiKey, ...env }, ...opts });

async function call(s, name, args) {
  const r = await callTool(s.client, name, args);
  assert.ok(!r.isError, `${name}: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}

// The task once it has ended, its whole output: a wait answers at the
// first output as well as at the end, so this waits again past what it saw.
async function ended(s, sandbox_id, task_id) {
  let seen = { state: "running", stdout_next_offset: 0, stderr_next_offset: 0 };
  for (let i = 0; i < 10 && seen.state === "running"; i++) {
    const { stdout_next_offset: stdout_offset, stderr_next_offset: stderr_offset } = seen;
    seen = await call(s, "get_task", { sandbox_id, task_id, wait: 30, stdout_offset, stderr_offset });
  }
  return call(s, "get_task", { sandbox_id, task_id });
}

// The program the task's supervisor runs (the fake's sandboxes are
// processes of this machine).
async function supervisorProgram(s, sandbox_id, task_id) {
  const rec = JSON.parse((await call(s, "read_file", { sandbox_id, path: `.taskbox/tasks/${task_id}/status.json` })).content);
  return readlinkSync(`/proc/${rec.supervisor_pid}/exe`);
}

const uploads = (reqs) => reqs.filter((r) => r.plane === "envd" && r.method === "POST" && r.url.startsWith("/files") && r.url.includes("upload"));
const COPY = /\/\.taskbox\/bin\/taskbox-supervisor-[0-9a-f]{16}$/;

test("every verb runs the static supervisor copied into the sandbox once", { timeout: 180000 }, async () => {
  let s = await server(staticCfg);
  const py = await server(pythonCfg);
  try {
    await fake.clearRequests();
    const { sandbox_id } = await call(s, "create_sandbox", {});
    const t1 = await call(s, "start_task", { sandbox_id, command: "echo one; sleep 30" });
    assert.equal(uploads(await fake.requests()).length, 1, "one copy at the first verb");
    assert.match(await supervisorProgram(s, sandbox_id, t1.task_id), COPY);

    // A waiting call is woken by the copy's wait verb: new output, then
    // the end the cancel brings.
    const t2 = await call(s, "start_task", { sandbox_id, command: "read x; echo got $x; sleep 30", stdin: "pipe" });
    assert.match(await supervisorProgram(s, sandbox_id, t2.task_id), COPY);
    const waiting = call(s, "get_task", { sandbox_id, task_id: t2.task_id, wait: 60 });
    await new Promise((r) => setTimeout(r, 500));
    await call(s, "write_task", { sandbox_id, task_id: t2.task_id, data: "it\n" });
    const grown = await waiting;
    assert.equal(grown.state, "running");
    assert.equal(grown.stdout, "got it\n");
    const ending = call(s, "get_task", { sandbox_id, task_id: t2.task_id, wait: 60, stdout_offset: 7 });
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await call(s, "cancel_task", { sandbox_id, task_id: t2.task_id })).state, "cancelled");
    assert.equal((await ending).state, "cancelled");

    // A python3 server reads and cancels the static one's task; a fresh
    // static server finds the copy already there.
    const seen = await call(py, "get_task", { sandbox_id, task_id: t1.task_id });
    assert.equal(seen.state, "running");
    assert.equal(seen.stdout, "one\n");
    assert.equal((await call(py, "cancel_task", { sandbox_id, task_id: t1.task_id })).state, "cancelled");
    await s.close();
    s = await server(staticCfg);
    const t3 = await call(s, "start_task", { sandbox_id, command: "echo three" });
    const done = await ended(s, sandbox_id, t3.task_id);
    assert.equal(done.state, "succeeded");
    assert.equal(done.stdout, "three\n");
    assert.equal(uploads(await fake.requests()).length, 1, "no second copy");
    await call(s, "kill_sandbox", { sandbox_id });
  } finally {
    await s.close();
    await py.close();
  }
});

test("a static supervisor that cannot run in the sandbox refuses the verb, naming why and what to do", { timeout: 120000 }, async () => {
  // Stands in for a binary the sandbox cannot execute: found, copied, and
  // then "not run" (exit 127, nothing on stdout) when the verb runs it.
  const bad = join(scratchDir(), "taskbox-supervisor-static");
  writeFileSync(bad, "#!/bin/sh\necho cannot execute >&2\nexit 127\n");
  chmodSync(bad, 0o755);
  const s = await server(staticCfg, { TASKBOX_SUPERVISOR_STATIC: bad });
  try {
    const { sandbox_id } = await call(s, "create_sandbox", {});
    const r = await callTool(s.client, "start_task", { sandbox_id, command: "echo never" });
    assert.ok(r.isError, JSON.stringify(r.structuredContent));
    const text = r.content[0].text;
    assert.match(text, /is set to run the static supervisor \(its instance's \\?"supervisor\\?": \\?"static\\?"\)/);
    assert.match(text, /does not run there \(exit 127: cannot execute/);
    assert.match(text, /set the instance's \\?"supervisor\\?" to \\?"auto\\?"/);
    // Nothing was started, and the server still serves.
    const ls = await call(s, "run_command", { sandbox_id, command: "ls .taskbox/tasks 2>/dev/null | grep -c '^[0-9a-f]\\{32\\}$' || true" });
    assert.equal(ls.stdout.trim(), "0");
    await call(s, "kill_sandbox", { sandbox_id });
  } finally {
    await s.close();
  }
});

test("a taskbox without a static supervisor runs python3 for a \"static\" instance", { timeout: 120000 }, async () => {
  const s = await server(staticCfg, { TASKBOX_SUPERVISOR_STATIC: join(scratchDir(), "none") });
  try {
    const { sandbox_id } = await call(s, "create_sandbox", {});
    const t = await call(s, "start_task", { sandbox_id, command: "sleep 30" });
    assert.match(await supervisorProgram(s, sandbox_id, t.task_id), /python3/);
    assert.equal((await call(s, "cancel_task", { sandbox_id, task_id: t.task_id })).state, "cancelled");
    await call(s, "kill_sandbox", { sandbox_id });
  } finally {
    await s.close();
  }
});

// The static supervisor the build made (TASKBOX_BUILDDIR), the one the
// server copies by default.
const built = join(process.env.TASKBOX_BUILDDIR || ".", "taskbox-supervisor-static");

test("by default (no \"supervisor\", or \"auto\") every verb runs the static copy; \"python3\" runs python3 and copies nothing", { timeout: 180000 }, async () => {
  const d = await server(defaultCfg);
  const a = await server(autoCfg);
  const py = await server(pythonCfg);
  try {
    await fake.clearRequests();
    const { sandbox_id } = await call(d, "create_sandbox", {});
    const t1 = await call(d, "start_task", { sandbox_id, command: "echo one; sleep 30" });
    assert.match(await supervisorProgram(d, sandbox_id, t1.task_id), COPY);
    assert.equal(uploads(await fake.requests()).length, 1, "one copy at the first verb");
    // The wait verb that wakes a waiting call runs the copy too.
    const waiting = call(d, "get_task", { sandbox_id, task_id: t1.task_id, wait: 60, stdout_offset: 4 });
    await new Promise((r) => setTimeout(r, 500));
    const woken = await call(a, "cancel_task", { sandbox_id, task_id: t1.task_id });
    assert.equal(woken.state, "cancelled");
    assert.equal((await waiting).state, "cancelled");
    const t2 = await call(a, "start_task", { sandbox_id, command: "sleep 30" });
    assert.match(await supervisorProgram(a, sandbox_id, t2.task_id), COPY);
    assert.equal(uploads(await fake.requests()).length, 1, "\"auto\" finds the copy there");

    await fake.clearRequests();
    const other = (await call(py, "create_sandbox", {})).sandbox_id;
    const t3 = await call(py, "start_task", { sandbox_id: other, command: "echo three; sleep 30" });
    assert.match(await supervisorProgram(py, other, t3.task_id), /python3/);
    const grown = await call(py, "get_task", { sandbox_id: other, task_id: t3.task_id, wait: 30 });
    assert.equal(grown.stdout, "three\n");
    assert.equal((await call(py, "cancel_task", { sandbox_id: other, task_id: t3.task_id })).state, "cancelled");
    assert.equal(uploads(await fake.requests()).length, 0, "python3 copies nothing");
    assert.equal((await call(py, "cancel_task", { sandbox_id, task_id: t2.task_id })).state, "cancelled");
    await call(d, "kill_sandbox", { sandbox_id });
    await call(py, "kill_sandbox", { sandbox_id: other });
  } finally {
    await d.close();
    await a.close();
    await py.close();
  }
});

test("by default a static supervisor that cannot run in the sandbox (an ELF of another machine type) gives python3, the task working", { timeout: 180000 }, async () => {
  // The build's binary with its ELF header's e_machine changed (bytes 18
  // and 19): the sandbox's exec refuses it (ENOEXEC).
  const foreign = join(scratchDir(), "taskbox-supervisor-static");
  copyFileSync(built, foreign);
  const head = readFileSync(foreign).subarray(0, 20);
  assert.equal(head.subarray(1, 4).toString(), "ELF");
  const other = head.readUInt16LE(18) === 0xb7 ? 0x3e : 0xb7; // aarch64, else x86-64
  const fd = openSync(foreign, "r+");
  const m = Buffer.alloc(2);
  m.writeUInt16LE(other);
  writeSync(fd, m, 0, 2, 18);
  closeSync(fd);
  chmodSync(foreign, 0o755);
  const s = await server(defaultCfg, { TASKBOX_SUPERVISOR_STATIC: foreign, TASKBOX_LOG: "info" }, { stderr: "pipe" });
  let log = "";
  s.stderr.on("data", (b) => (log += b));
  try {
    await fake.clearRequests();
    const { sandbox_id } = await call(s, "create_sandbox", {});
    const t = await call(s, "start_task", { sandbox_id, command: "echo works; sleep 30" });
    assert.match(await supervisorProgram(s, sandbox_id, t.task_id), /python3/);
    const t2 = await call(s, "start_task", { sandbox_id, command: "echo again" });
    const done = await ended(s, sandbox_id, t2.task_id);
    assert.equal(done.state, "succeeded");
    assert.equal(done.stdout, "again\n");
    assert.equal(uploads(await fake.requests()).length, 1, "copied and probed once per sandbox");
    const lines = log.split("\n").filter((l) => l.includes("the static supervisor does not run there"));
    assert.equal(lines.length, 1, log);
    assert.match(lines[0], /info.*Exec format error|info.*exit 126/);
    assert.doesNotMatch(log, /error|warn/i);
    assert.equal((await call(s, "cancel_task", { sandbox_id, task_id: t.task_id })).state, "cancelled");
    await call(s, "kill_sandbox", { sandbox_id });
  } finally {
    await s.close();
  }
});

test("by default a sandbox of another machine type (uname -m) gets python3 and no copy, the task working", { timeout: 180000 }, async () => {
  // A fake whose sandboxes' uname says riscv64.
  const bin = join(scratchDir(), "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "uname"), "#!/bin/sh\necho riscv64\n");
  chmodSync(join(bin, "uname"), 0o755);
  const riscv = await startFake({ env: { PATH: `${bin}:/usr/bin:/bin:${process.env.PATH || ""}` } });
  const cfg = writeConfig(scratchDir(), { default: "cloud", providers: { cloud: { plugin: "e2b", settings: { api_url: riscv.apiUrl, sandbox_url: riscv.sandboxUrl } } } });
  const s = await startServer({ args: ["--config", cfg], env: { E2B_API_KEY: riscv.apiKey, TASKBOX_LOG: "info" }, stderr: "pipe" });
  let log = "";
  s.stderr.on("data", (b) => (log += b));
  try {
    const { sandbox_id } = await call(s, "create_sandbox", {});
    const t = await call(s, "start_task", { sandbox_id, command: "echo works; sleep 30" });
    assert.match(await supervisorProgram(s, sandbox_id, t.task_id), /python3/);
    const grown = await call(s, "get_task", { sandbox_id, task_id: t.task_id, wait: 30 });
    assert.equal(grown.stdout, "works\n");
    assert.equal((await call(s, "cancel_task", { sandbox_id, task_id: t.task_id })).state, "cancelled");
    assert.equal(uploads(await riscv.requests()).length, 0, "nothing copied");
    const lines = log.split("\n").filter((l) => l.includes("the static supervisor does not run there"));
    assert.equal(lines.length, 1, log);
    assert.match(lines[0], /info.*the sandbox is riscv64, the static supervisor is built for /);
    await call(s, "kill_sandbox", { sandbox_id });
  } finally {
    await s.close();
    await riscv.stop();
  }
});
