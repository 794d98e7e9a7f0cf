// Sandboxes of the local provider under "isolation": "bwrap" do not reach
// each other (plugins/local/README.md, "Isolation, honestly"): a command of
// one sandbox sees neither the files nor the FIFOs of another (a FIFO
// takes writes even on a read-only mount, so another sandbox's task
// stdin would be a way to type into its terminal), and the bytes
// write_task sends never sit in a command line, which every process of
// the machine could read through /proc/PID/cmdline.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { bwrapWorks, startServer, callTool, scratchDir, writeConfig } from "../../lib/client.mjs";

const env = { PATH: `/usr/bin:/bin:${process.env.PATH || ""}` };

function data(result) {
  assert.ok(!result.isError, result.content?.[0]?.text);
  return result.structuredContent || JSON.parse(result.content[0].text);
}

// The command lines of every process of the machine, as one text.
function allCmdlines() {
  let text = "";
  for (const pid of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(pid)) continue;
    try {
      text += readFileSync(`/proc/${pid}/cmdline`, "latin1") + "\n";
    } catch {
      // gone meanwhile
    }
  }
  return text;
}

describe("bwrap sandboxes do not reach each other", { skip: !bwrapWorks() && "bubblewrap cannot run here" }, () => {
  let dir;
  let root;
  let s;

  before(async () => {
    dir = scratchDir("taskbox-bwrap-iso-");
    // Not under /tmp, which bubblewrap replaces by the sandbox's own: the
    // default root (~/.local/state/...) is not there either.
    root = mkdtempSync("/var/tmp/taskbox-bwrap-iso-");
    const cfg = writeConfig(dir, {
      default: "boxed",
      providers: { boxed: { plugin: "local", settings: { root, isolation: "bwrap" } } },
    });
    s = await startServer({ args: ["--config", cfg], env });
  });

  after(async () => {
    await s?.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  });

  test("a command of one sandbox cannot write another's task stdin or read its files", { timeout: 60000 }, async () => {
    const a = data(await callTool(s.client, "create_sandbox", { timeout: 300 })).sandbox_id;
    const b = data(await callTool(s.client, "create_sandbox", { timeout: 300 })).sandbox_id;
    // B runs a shell on a terminal: what reaches its stdin runs in B.
    const t = data(await callTool(s.client, "start_task", { sandbox_id: b, command: "sh", tty: true }));
    // Sandbox ids name their instance: "boxed:<the directory's name>".
    const bdir = join(root, b.split(":").pop());
    const fifo = join(bdir, "home/.taskbox/tasks", t.task_id, "stdin");
    const status = join(bdir, "home/.taskbox/tasks", t.task_id, "status.json");
    // Nor through the /proc of B's supervisor (same user, shared pids).
    const sup = JSON.parse(readFileSync(status, "utf8")).supervisor_pid;
    const viaProc = `/proc/${sup}/root${status}`;
    // 1<> opens read-write: it never blocks on a FIFO, reader or not.
    const r = data(await callTool(s.client, "run_command", {
      sandbox_id: a,
      command: `printf 'touch typed-from-a\\n' 1<> '${fifo}' && echo reached-fifo; ` +
        `cat '${status}' >/dev/null 2>&1 && echo read-file; ` +
        `cat '${viaProc}' >/dev/null 2>&1 && echo read-proc; ls '${root}' 2>/dev/null | grep -c . || true`,
    }));
    assert.ok(!r.stdout.includes("reached-fifo"), `A wrote B's task stdin: ${r.stdout} ${r.stderr}`);
    assert.ok(!r.stdout.includes("read-file"), `A read B's status: ${r.stdout}`);
    assert.ok(!r.stdout.includes("read-proc"), `A read B's status through /proc: ${r.stdout}`);
    // A sees its own directory under the root, and nothing else.
    assert.equal(r.stdout.trim().split("\n").pop(), "1", r.stdout);
    // read_file sees what commands see.
    const rf = await callTool(s.client, "read_file", { sandbox_id: a, path: status });
    assert.ok(rf.isError, "read_file of A read B's status");
    // Nothing was typed into B.
    const g = data(await callTool(s.client, "run_command", { sandbox_id: b, command: "ls typed-from-a 2>&1 || true" }));
    assert.match(g.stdout, /No such file/);
    data(await callTool(s.client, "cancel_task", { sandbox_id: b, task_id: t.task_id }));
    data(await callTool(s.client, "kill_sandbox", { sandbox_id: a }));
    data(await callTool(s.client, "kill_sandbox", { sandbox_id: b }));
  });

  test("write_task's data never shows in a command line", { timeout: 60000 }, async () => {
    const sb = data(await callTool(s.client, "create_sandbox", { timeout: 300 })).sandbox_id;
    // A task that never reads: its pipes fill, and writes then wait.
    const t = data(await callTool(s.client, "start_task", { sandbox_id: sb, command: "sleep 120", stdin: "pipe" }));
    // 18 bytes: the base64 of the repeated marker repeats its base64.
    const marker = "CmdlineLeak-4242-Q";
    const chunk = marker.repeat(Math.floor(65536 / marker.length));
    const shown = [marker, Buffer.from(marker).toString("base64")];
    let writing = true;
    let seen = null;
    let polls = 0;
    const poller = (async () => {
      while (writing && !seen) {
        const text = allCmdlines();
        polls++;
        for (const m of shown) if (text.includes(m)) seen = m;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    let blocked = false;
    for (let i = 0; i < 6 && !blocked; i++) {
      const w = data(await callTool(s.client, "write_task", { sandbox_id: sb, task_id: t.task_id, data: chunk }));
      blocked = w.written < chunk.length;
    }
    writing = false;
    await poller;
    assert.ok(blocked, "no write waited: the task's pipes never filled");
    assert.ok(polls > 0);
    assert.equal(seen, null, `write_task's data (${seen}) was in a process's command line`);
    data(await callTool(s.client, "cancel_task", { sandbox_id: sb, task_id: t.task_id }));
    data(await callTool(s.client, "kill_sandbox", { sandbox_id: sb }));
  });
});
