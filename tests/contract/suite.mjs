// The provider contract suite: the reconnectable-task contract driven
// through the official MCP SDK client against the real binary, for any
// provider. A provider module (providers/NAME.mjs) exports
//   { name, async setup({ sandboxEnv }) -> { config, env }, async teardown(),
//     hostPids, renewsOnConnect }
// where config is the taskbox config object naming that provider as the
// default instance, sandboxEnv are variables its sandboxes must see, and
// hostPids is true when the provider declares TASKBOX_FEATURE_HOST_PIDS;
// renewsOnConnect when connecting to a sandbox extends its life.
// Everything the suite does inside a sandbox goes through the tools, so it
// holds for every provider.
//
// contractSuite(provider, { transport, client, limitElsewhere,
// interactiveElsewhere }) runs it
// over a transport ("stdio" or "http") with a client ("v1", "v2",
// "v2-modern" or "v2-auto"); startServer's defaults (tests/lib/client.mjs)
// when not given. Each server() is a process of its own on either transport.
// Where a test ends a session, it does so the way the transport's client
// does: on stdio by closing stdin (the process exits), over HTTP by the
// client's DELETE, the process staying up, so that the DELETE alone can have
// destroyed anything (endSession below).
//
// interactiveElsewhere: true runs only the smoke test of the interactive
// tests (interactive.mjs), which another run of the provider runs whole.
//
// limitElsewhere: true skips the per-sandbox task limit (128 real task
// starts, several minutes on a container engine), which the supervisor in
// the sandbox enforces whatever the transport or the client: a provider's
// other runs, over another transport or era, leave it to its primary one.
//
// The era (eraOf in tests/lib/client.mjs) changes what the session-bound
// tests mean. Legacy clients (v1, v2) have a session: a default sandbox, and
// sandboxes without tasks destroyed at its end. Modern clients (MCP
// 2026-07-28) have none: every tool needs sandbox_id, and a client going
// away destroys nothing (a sandbox lives until its timeout or
// kill_sandbox). Every other rule holds the same in both eras.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readlinkSync } from "node:fs";
import { callTool, clientOf, eraOf, scratchDir, startServer, transportOf, writeConfig } from "../lib/client.mjs";
import { waitingTests } from "./waiting.mjs";
import { interactiveTests } from "./interactive.mjs";

const SECRET_NAME = "TB_CONTRACT_SECRET_TOKEN";
const SECRET = "s3cr3t-Contract-Value-0451";
const HOST_SECRET_NAME = "TB_CONTRACT_HOST_MASKED";
const HOST_SECRET = "host-only-Masked-Value-7788";
const TERMINAL = ["succeeded", "failed", "cancelled", "timed_out"];
const STATES = [...TERMINAL, "running", "unknown"];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Waits for cond() to return a truthy value, polling; fails after limitMs.
async function until(what, cond, limitMs = 60000, everyMs = 100) {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await sleep(everyMs);
  }
}

// The pidfds process pid holds (valgrind has no pidfd_open: none there).
function pidfdsOf(pid) {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === "anon_inode:[pidfd]";
    } catch {
      return false;
    }
  }).length;
}

function data(result) {
  if (result.structuredContent) return result.structuredContent;
  return JSON.parse(result.content[0].text);
}

// The structured result of a successful call.
function ok(result, what) {
  assert.ok(!result.isError, `${what}: unexpected tool error: ${result.content?.[0]?.text}`);
  return data(result);
}

// The text of a tool error.
function failure(result, what) {
  assert.equal(result.isError, true, `${what}: expected a tool error, got ${result.content?.[0]?.text}`);
  return result.content.map((c) => c.text || "").join("\n");
}

export function contractSuite(provider, via = {}) {
  const transport = transportOf(via);
  const client = clientOf(via);
  const era = eraOf(client);
  const modern = era === "modern";
  const over =
    (transport === "stdio" && client === "v1" ? "" : ` over ${transport} (SDK ${client})`) +
    (modern ? " in MCP 2026-07-28" : "");
  describe(`reconnectable tasks on ${provider.name}${over}`, () => {
    let cfgPath;
    let env;
    const servers = new Set();
    const closed = new WeakSet();
    const sandboxes = new Set();

    async function server(extraArgs = []) {
      const s = await startServer({ args: ["--config", cfgPath, ...extraArgs], env, transport, client });
      servers.add(s);
      return s;
    }

    // Closes a client once: on stdio the process ends with it; over HTTP a
    // process's first client takes the process with it (SIGTERM), any other
    // only ends its session.
    async function closeServer(s) {
      servers.delete(s);
      if (closed.has(s)) return;
      closed.add(s);
      await s.close();
    }

    // Ends s's session as its client does and returns a client to carry on
    // with: on stdio, EOF (the process exits) and a new process; over HTTP,
    // the DELETE and a new session of the same process, which stays up.
    // closeServer(s) afterwards ends what is left of s (the HTTP process).
    async function endSession(s) {
      if (s.transportKind !== "http") {
        await closeServer(s);
        return server();
      }
      await s.endSession();
      const next = await s.session();
      servers.add(next);
      return next;
    }

    // Waits until process pid is gone.
    async function exited(pid, what = "the server to exit") {
      await until(what, () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      }, 10000, 20);
    }

    // kill -9 and wait until the process is gone.
    async function killServer(s) {
      servers.delete(s);
      const pid = s.pid;
      s.kill("SIGKILL");
      await exited(pid, "the killed server to exit");
      await s.close().catch(() => {});
    }

    // A modern client's going away (endSession): on stdio its process has
    // exited once this returns, so that anything its end would do is done.
    async function clientGone(s) {
      if (s.transportKind === "stdio") await exited(s.pid, "the closed client's server to exit");
    }

    // kill_sandbox, for sandboxes no session end destroys (modern).
    async function killSandbox(s, sandbox_id) {
      ok(await call(s, "kill_sandbox", { sandbox_id }), `kill_sandbox ${sandbox_id}`);
      sandboxes.delete(sandbox_id);
    }

    async function call(s, name, args, options = {}) {
      return callTool(s.client, name, args, options);
    }

    async function createSandbox(s, args = {}) {
      const r = ok(await call(s, "create_sandbox", { timeout: 900, ...args }), "create_sandbox");
      assert.match(r.sandbox_id, /^[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9_.-]{1,127}$/);
      sandboxes.add(r.sandbox_id);
      return r.sandbox_id;
    }

    async function start(s, sandbox_id, command, extra = {}) {
      const r = ok(await call(s, "start_task", { sandbox_id, command, ...extra }), `start_task ${command}`);
      if (sandbox_id) assert.equal(r.sandbox_id, sandbox_id);
      assert.match(r.task_id, /^[0-9a-f]{32}$/);
      assert.ok(STATES.includes(r.state), r.state);
      return r;
    }

    async function getTask(s, sandbox_id, task_id, extra = {}) {
      return ok(await call(s, "get_task", { sandbox_id, task_id, ...extra }), "get_task");
    }

    async function waitDone(s, sandbox_id, task_id, limitMs = 60000) {
      return until(`task ${task_id} to finish`, async () => {
        const r = await getTask(s, sandbox_id, task_id);
        return TERMINAL.includes(r.state) ? r : null;
      }, limitMs);
    }

    // Reads one stream whole, page by page, passing each next offset on.
    async function readStream(s, sandbox_id, task_id, stream, limit = 5) {
      let offset = 0;
      let text = "";
      for (;;) {
        const r = await getTask(s, sandbox_id, task_id, { [`${stream}_offset`]: offset, limit });
        text += r[stream];
        const next = r[`${stream}_next_offset`];
        if (next === offset) return { text, size: r[`${stream}_size`] };
        assert.ok(next - offset <= limit, "a page is at most limit bytes");
        offset = next;
      }
    }

    async function run(s, sandbox_id, command) {
      return ok(await call(s, "run_command", { sandbox_id, command }), `run_command ${command}`);
    }

    // Waits until sandbox_id is gone (a tool error naming it) and returns
    // the error. A session's end destroys its sandboxes: on stdio before
    // the process exits, over HTTP on a worker after the DELETE's answer.
    async function destroyed(s, sandbox_id, what) {
      const r = await until(`${what}: ${sandbox_id} to be destroyed`, async () => {
        const x = await call(s, "run_command", { sandbox_id, command: "true" });
        return x.isError ? x : null;
      }, 30000, 50);
      const text = failure(r, what);
      assert.ok(text.includes(sandbox_id), text);
      sandboxes.delete(sandbox_id);
      return text;
    }

    async function taskDirs(s, sandbox_id) {
      const r = await run(s, sandbox_id, "ls .taskbox/tasks 2>/dev/null || true");
      return r.stdout.split("\n").filter((x) => /^[0-9a-f]{32}$/.test(x));
    }

    async function statusRecord(s, sandbox_id, task_id) {
      const r = ok(await call(s, "read_file", { sandbox_id, path: `.taskbox/tasks/${task_id}/status.json` }), "read_file status");
      return JSON.parse(r.content);
    }

    before(async () => {
      const p = await provider.setup({ sandboxEnv: { [SECRET_NAME]: SECRET } });
      const config = { ...p.config, mask: { values_from_env: [HOST_SECRET_NAME] } };
      cfgPath = writeConfig(scratchDir("taskbox-contract-cfg-"), config);
      env = { ...p.env, [HOST_SECRET_NAME]: HOST_SECRET };
    });

    after(async () => {
      for (const s of servers) await s.close().catch(() => {});
      if (sandboxes.size) {
        const s = await server().catch(() => null);
        if (s) {
          for (const id of sandboxes) await call(s, "kill_sandbox", { sandbox_id: id }).catch(() => {});
          await closeServer(s);
        }
      }
      await provider.teardown();
    });

    // An image without python3: the first verb finds it missing, the server
    // copies its static supervisor in (one file, named by its content), and
    // a second server process uses that copy without copying again.
    test("without python3 in the image, the verbs run with the static supervisor copied in", { timeout: 120000, skip: provider.noPython ? false : "the image has python3" }, async () => {
      const s = await server();
      const sb = await createSandbox(s);
      const py = await run(s, sb, "command -v python3 || echo none");
      assert.equal(py.stdout.trim(), "none", "the image has no python3");
      assert.deepEqual((await run(s, sb, "ls -a .taskbox/bin 2>/dev/null || true")).stdout.trim(), "");
      const t = await start(s, sb, "echo one; sleep 30");
      assert.equal(t.state, "running");
      const copies = async (x) => (await run(x, sb, "ls -l .taskbox/bin")).stdout.trim().split("\n").filter((x) => x && !x.startsWith("total"));
      const first = await copies(s);
      assert.equal(first.length, 1, first.join("\n"));
      assert.match(first[0], /^-rwx------ .* taskbox-supervisor-[0-9a-f]{16}$/);
      await closeServer(s);
      const s2 = await server();
      const c = ok(await call(s2, "cancel_task", { sandbox_id: sb, task_id: t.task_id }), "cancel_task");
      assert.equal(c.state, "cancelled", JSON.stringify(c));
      assert.match(c.stdout, /^one\n/);
      assert.deepEqual(await copies(s2), first, "the second server used the copy");
      await killSandbox(s2, sb);
      await closeServer(s2);
    });

    test("the whole scenario: start, kill the server, reconnect, read, cancel, clean up", { timeout: 120000 }, async () => {
      const a = await server();
      const sb = await createSandbox(a);
      const cmd = "printf BEFORE; sleep 2; printf AFTER; printf oops >&2; exit 3";
      let t;
      if (!modern) {
        t = await start(a, undefined, cmd, { timeout: 120 });
        assert.equal(t.sandbox_id, sb, "start_task without sandbox_id uses the newest sandbox");
      } else {
        // No session, so no newest sandbox to fall back on.
        const text = failure(await call(a, "start_task", { command: cmd, timeout: 120 }), "start_task without sandbox_id");
        assert.match(text, /sandbox_id/);
        t = await start(a, sb, cmd, { timeout: 120 });
      }
      await killServer(a);

      const b = await server();
      const done = await waitDone(b, sb, t.task_id);
      assert.equal(done.state, "failed");
      assert.equal(done.exit_code, 3, "a saved nonzero exit code is data");
      assert.ok(Number.isInteger(done.started_at) && Number.isInteger(done.finished_at));
      assert.ok(done.finished_at >= done.started_at);
      assert.equal(done.error, null);
      const out = await readStream(b, sb, t.task_id, "stdout", 4);
      assert.equal(out.text, "BEFOREAFTER");
      assert.equal(out.size, 11);
      const err = await readStream(b, sb, t.task_id, "stderr", 3);
      assert.equal(err.text, "oops");
      // A saved offset replays the same page.
      const p1 = await getTask(b, sb, t.task_id, { stdout_offset: 6, limit: 3 });
      const p2 = await getTask(b, sb, t.task_id, { stdout_offset: 6, limit: 3 });
      assert.equal(p1.stdout, "AFT");
      assert.deepEqual(p2, p1);
      assert.equal(p1.stdout_next_offset, 9);

      const long = await start(b, sb, "sleep 300");
      const c = ok(await call(b, "cancel_task", { sandbox_id: sb, task_id: long.task_id }), "cancel_task");
      assert.equal(c.state, "cancelled");
      const again = ok(await call(b, "cancel_task", { sandbox_id: sb, task_id: long.task_id }), "cancel again");
      assert.equal(again.state, "cancelled", "a second cancel returns the saved outcome");
      assert.equal(again.finished_at, c.finished_at);

      ok(await call(b, "kill_sandbox", { sandbox_id: sb }), "kill_sandbox");
      sandboxes.delete(sb);
      const gone = failure(await call(b, "get_task", { sandbox_id: sb, task_id: t.task_id }), "get_task after kill");
      assert.ok(gone.includes(sb), `the error names the sandbox: ${gone}`);
      await closeServer(b);
    });

    test("each state is reached for real", { timeout: 120000 }, async () => {
      const s = await server();
      const sb = await createSandbox(s);
      const succ = await start(s, sb, "echo fine");
      const fail = await start(s, sb, "echo bad >&2; exit 7");
      const canc = await start(s, sb, "sleep 300");
      const tout = await start(s, sb, "sleep 300", { timeout: 1 });
      const lost = await start(s, sb, "sleep 300");

      const r1 = await waitDone(s, sb, succ.task_id);
      assert.equal(r1.state, "succeeded");
      assert.equal(r1.exit_code, 0);
      assert.equal(r1.stdout, "fine\n");
      const r2 = await waitDone(s, sb, fail.task_id);
      assert.equal(r2.state, "failed");
      assert.equal(r2.exit_code, 7);
      assert.equal(r2.stderr, "bad\n");
      const r3 = ok(await call(s, "cancel_task", { sandbox_id: sb, task_id: canc.task_id }), "cancel");
      assert.equal(r3.state, "cancelled");
      assert.equal(r3.error, null);
      const r4 = await waitDone(s, sb, tout.task_id, 30000);
      assert.equal(r4.state, "timed_out");

      // Kill the supervisor the way a crash would: SIGKILL to its
      // recorded pid. The task is then unknown, never a success.
      const rec = await statusRecord(s, sb, lost.task_id);
      assert.equal(rec.state, "running");
      // Seen alive first, so that a provider sharing the server's pids
      // has the supervisor watched (a pidfd) when it dies.
      assert.equal((await getTask(s, sb, lost.task_id)).state, "running");
      if (provider.hostPids && !process.env.TASKBOX_TEST_WRAPPER)
        assert.ok(pidfdsOf(s.pid) > 0, "the server watches the supervisor through a pidfd");
      await run(s, sb, `kill -9 ${rec.supervisor_pid}`);
      const r5 = await until("the dead supervisor to be noticed", async () => {
        const r = await getTask(s, sb, lost.task_id);
        return r.state === "unknown" ? r : null;
      }, 15000);
      assert.equal(r5.exit_code, null);
      assert.match(r5.error, /supervisor/);
      // A server that never saw that supervisor alive says the same.
      const fresh = await server();
      const r5b = await getTask(fresh, sb, lost.task_id);
      assert.equal(r5b.state, "unknown");
      assert.match(r5b.error, /supervisor/);
      await closeServer(fresh);
      // Nothing enforces its timeout any more: what was left of its group
      // was killed when the supervisor was found gone.
      assert.match(r5.error, /process group was killed/);
      const groupState = async (pgid) =>
        (await run(s, sb, `st=$(cut -d" " -f3 /proc/${pgid}/stat 2>/dev/null); echo "\${st:-gone}"`)).stdout.trim();
      await until("the lost task's group to be killed", async () => /^(gone|Z)$/.test(await groupState(rec.pgid)), 15000);
      const r6 = ok(await call(s, "cancel_task", { sandbox_id: sb, task_id: lost.task_id }), "cancel of unknown");
      assert.notEqual(r6.state, "cancelled", "cancellation is not claimed without a supervisor");
      assert.equal(r6.state, "unknown");
      assert.match(r6.error, /not confirmed: the supervisor is gone/);
      const l = ok(await call(s, "list_tasks", { sandbox_id: sb }), "list_tasks");
      assert.equal(l.tasks.find((t) => t.task_id === lost.task_id).state, "unknown");
      // remove_task agrees with get_task: the task it removes was unknown.
      const gone1 = ok(await call(s, "remove_task", { sandbox_id: sb, task_id: lost.task_id }), "remove_task of an unknown task");
      assert.equal(gone1.state, "unknown");
      // remove_task straight after a supervisor's death (no get_task in
      // between) removes it like any task that ended.
      const lost2 = await start(s, sb, "sleep 300");
      const rec2 = await statusRecord(s, sb, lost2.task_id);
      await run(s, sb, `kill -9 ${rec2.supervisor_pid}`);
      const gone2 = ok(await call(s, "remove_task", { sandbox_id: sb, task_id: lost2.task_id }), "remove_task of a lost task");
      assert.equal(gone2.removed, true);
      assert.equal(gone2.state, "unknown");
      assert.match(await groupState(rec2.pgid), /^(gone|Z)$/);
      await closeServer(s);
    });

    // Where the sandbox's PID 1 reaps nothing (an engine without an init
    // binary), the killed orphans of a task's group stay zombies: they must
    // not keep a finished task or a cancelled group looking alive.
    test("orphans of a command keep neither a finished task nor a cancelled one running", { timeout: 120000 }, async () => {
      const s = await server();
      const sb = await createSandbox(s);
      // The process's state letter from /proc, or "gone".
      const procState = async (pidFile) =>
        (await run(s, sb, `p=$(cat ${pidFile}); st=$(cut -d" " -f3 /proc/$p/stat 2>/dev/null); echo "\${st:-gone}"`)).stdout.trim();

      const quick = await start(s, sb, "sleep 300 & echo $! > orphan1.pid; echo parent done");
      const r1 = await waitDone(s, sb, quick.task_id);
      assert.equal(r1.state, "succeeded");
      assert.equal(r1.stdout, "parent done\n");
      assert.match(await procState("orphan1.pid"), /^(gone|Z)$/, "the orphan went with its group");

      // The leader dies of the TERM; its children ignore it and are
      // orphaned until the KILL.
      const grp = await start(s, sb, "(trap '' TERM; sleep 300 & echo $! > orphan2.pid; wait) & wait");
      await until("the orphan-to-be to start", async () =>
        (await run(s, sb, "cat orphan2.pid 2>/dev/null || true")).stdout.trim() !== "", 20000);
      const c = ok(await call(s, "cancel_task", { sandbox_id: sb, task_id: grp.task_id }), "cancel_task");
      assert.equal(c.state, "cancelled");
      assert.equal(c.error, null);
      assert.match(await procState("orphan2.pid"), /^(gone|Z)$/, "the group was killed");

      const fresh = await server();
      assert.equal((await getTask(fresh, sb, quick.task_id)).state, "succeeded");
      assert.equal((await getTask(fresh, sb, grp.task_id)).state, "cancelled");
      const again = ok(await call(fresh, "cancel_task", { sandbox_id: sb, task_id: grp.task_id }), "cancel again");
      assert.equal(again.state, "cancelled");
      ok(await call(fresh, "remove_task", { sandbox_id: sb, task_id: grp.task_id }), "remove_task");
      await closeServer(fresh);
      await closeServer(s);
    });

    test("a command that begins with - or + is the command, not options of sh", { timeout: 60000 }, async () => {
      const s = await server();
      const sb = await createSandbox(s);
      const r = await run(s, sb, "-v; echo ran");
      assert.equal(r.stdout, "ran\n");
      assert.match(r.stderr, /-v/);
      const t = await start(s, sb, "+x; echo ran too");
      const d = await waitDone(s, sb, t.task_id);
      assert.equal(d.state, "succeeded");
      assert.equal(d.stdout, "ran too\n");
      await closeServer(s);
    });

    test("10 MiB on each stream: 1 MiB kept, truncation reported, the task finishes", { timeout: 180000 }, async () => {
      const s = await server();
      const sb = await createSandbox(s);
      const t = await start(s, sb,
        "head -c 10485760 /dev/zero | tr '\\0' o; head -c 10485760 /dev/zero | tr '\\0' e >&2; echo done-marker-never-saved");
      const r = await waitDone(s, sb, t.task_id, 150000);
      assert.equal(r.state, "succeeded");
      assert.equal(r.stdout_size, 1048576);
      assert.equal(r.stderr_size, 1048576);
      assert.equal(r.stdout_truncated, true);
      assert.equal(r.stderr_truncated, true);
      const tail = await getTask(s, sb, t.task_id, { stdout_offset: 1048576 - 10, stderr_offset: 1048576, limit: 65536 });
      assert.equal(tail.stdout, "oooooooooo");
      assert.equal(tail.stdout_next_offset, 1048576);
      assert.equal(tail.stderr, "");
      const big = await getTask(s, sb, t.task_id, { limit: 65536 });
      assert.equal(big.stdout.length, 65536);
      assert.equal(big.stdout_next_offset, 65536);
      await closeServer(s);
    });

    test("secrets are masked, also when split across reads", { timeout: 60000 }, async () => {
      const s = await server();
      const sb = await createSandbox(s);
      // The secret is printed in two halves with a pause between, so the
      // supervisor sees it across two pipe reads.
      const t = await start(s, sb,
        `v="$${SECRET_NAME}"; printf 'A:%s' "$(printf %s "$v" | cut -c1-10)"; sleep 1; printf '%s:Z' "$(printf %s "$v" | cut -c11-)"`);
      const r = await waitDone(s, sb, t.task_id);
      assert.equal(r.state, "succeeded");
      assert.equal(r.stdout, "A:****:Z");
      assert.ok(!r.stdout.includes(SECRET.slice(0, 10)));

      // The host's configured values are masked on each returned page,
      // the command text included.
      const h = await start(s, sb, `echo "${HOST_SECRET}"; echo "${HOST_SECRET}" >&2`);
      const hr = await waitDone(s, sb, h.task_id);
      assert.equal(hr.stdout, "****\n");
      assert.equal(hr.stderr, "****\n");
      assert.ok(!hr.command.includes(HOST_SECRET));
      const rc = await run(s, sb, `echo "${HOST_SECRET}"`);
      assert.equal(rc.stdout, "****\n");

      // Every other returned byte too: read_file in both encodings, and
      // errors that quote a client's input (a path, a cwd).
      await run(s, sb, `echo "a ${HOST_SECRET} b" > masked.txt`);
      const u = ok(await call(s, "read_file", { sandbox_id: sb, path: "masked.txt" }), "read_file");
      assert.equal(u.content, "a **** b\n");
      const b = ok(await call(s, "read_file", { sandbox_id: sb, path: "masked.txt", encoding: "base64" }), "read_file base64");
      assert.equal(Buffer.from(b.content, "base64").toString(), "a **** b\n");
      const missing = failure(await call(s, "read_file", { sandbox_id: sb, path: `no/${HOST_SECRET}/x` }), "read_file missing");
      assert.ok(!missing.includes(HOST_SECRET), missing);
      assert.match(missing, /\*\*\*\*/);
      // A cwd holding the host's value, then one holding a value of the
      // sandbox's environment named like a secret (the supervisor's).
      for (const secret of [HOST_SECRET, SECRET]) {
        const cwd = await call(s, "start_task", { sandbox_id: sb, command: "true", cwd: `no/${secret}` });
        const text = JSON.stringify(cwd);
        assert.ok(!text.includes(secret), text);
        if (!cwd.isError) {
          const d = await waitDone(s, sb, data(cwd).task_id);
          assert.ok(!JSON.stringify(d).includes(secret), JSON.stringify(d));
          const l = ok(await call(s, "list_tasks", { sandbox_id: sb }), "list_tasks");
          assert.ok(!JSON.stringify(l).includes(secret), JSON.stringify(l));
        }
      }
      await closeServer(s);
    });

    test("a UTF-8 sequence split by a page edge decodes as U+FFFD, and pages replay", { timeout: 60000 }, async () => {
      const s = await server();
      const sb = await createSandbox(s);
      // "ab€cd😀" : € is 3 bytes at offset 2, 😀 is 4 bytes at offset 7.
      const t = await start(s, sb, "printf 'ab\\342\\202\\254cd\\360\\237\\230\\200'");
      const r = await waitDone(s, sb, t.task_id);
      assert.equal(r.stdout, "ab€cd😀");
      assert.equal(r.stdout_size, 11);
      const p1 = await getTask(s, sb, t.task_id, { limit: 3 });
      assert.equal(p1.stdout, "ab\uFFFD");
      assert.equal(p1.stdout_next_offset, 3);
      const p2 = await getTask(s, sb, t.task_id, { stdout_offset: 3, limit: 5 });
      assert.equal(p2.stdout, "\uFFFD\uFFFDcd\uFFFD");
      const p2again = await getTask(s, sb, t.task_id, { stdout_offset: 3, limit: 5 });
      assert.deepEqual(p2again, p2);
      const p3 = await getTask(s, sb, t.task_id, { stdout_offset: 8, limit: 16 });
      assert.equal(p3.stdout, "\uFFFD\uFFFD\uFFFD");
      assert.equal(p3.stdout_next_offset, 11);
      await closeServer(s);
    });

    const limitSkip = via.limitElsewhere ? "checked by this provider's primary run: no transport or era changes it" : false;
    test("at most 128 tasks per sandbox; remove_task frees a slot", { timeout: 600000, skip: limitSkip }, async () => {
      const s = await server();
      const sb = await createSandbox(s);
      // 128 real starts, a few at a time (the server serves calls
      // concurrently; the supervisor's limit is per sandbox).
      const ids = [];
      for (let i = 0; i < 128; i += 8) {
        const batch = await Promise.all(Array.from({ length: 8 }, () => start(s, sb, "true")));
        ids.push(...batch.map((t) => t.task_id));
      }
      const refused = failure(await call(s, "start_task", { sandbox_id: sb, command: "true" }), "129th task");
      assert.match(refused, /128/);
      assert.equal((await taskDirs(s, sb)).length, 128);
      const first = await waitDone(s, sb, ids[0]);
      assert.equal(first.state, "succeeded");
      const rm = ok(await call(s, "remove_task", { sandbox_id: sb, task_id: ids[0] }), "remove_task");
      assert.equal(rm.removed, true);
      const missing = failure(await call(s, "get_task", { sandbox_id: sb, task_id: ids[0] }), "get_task of a removed task");
      assert.ok(missing.includes(ids[0]));
      await start(s, sb, "true");
      failure(await call(s, "start_task", { sandbox_id: sb, command: "true" }), "the 129th is refused again");
      await closeServer(s);
      ok(await (async () => {
        const k = await server();
        const r = await call(k, "kill_sandbox", { sandbox_id: sb });
        await closeServer(k);
        return r;
      })(), "kill_sandbox");
      sandboxes.delete(sb);
    });

    test("every bad input is refused, naming the field, before any provider call", { timeout: 60000 }, async () => {
      const s = await server();
      const sb = await createSandbox(s);
      const tid = "0123456789abcdef0123456789abcdef";
      // A sandbox that does not exist: if a provider were asked, the error
      // would be about it rather than about the field.
      const ghost = sb.replace(/:.*/, ":doesnotexist0000");
      const cases = [
        ["start_task", { sandbox_id: sb, command: "" }, "command"],
        ["start_task", { sandbox_id: sb, command: "x".repeat(65537) }, "command"],
        ["start_task", { sandbox_id: sb, command: "true", timeout: 0 }, "timeout"],
        ["start_task", { sandbox_id: sb, command: "true", timeout: 3601 }, "timeout"],
        ["start_task", { sandbox_id: sb, command: "true", bogus: 1 }, "bogus"],
        ["start_task", { sandbox_id: sb, command: "echo " + "é".repeat(20000) }, "command"],
        ["start_task", { sandbox_id: "no-colon", command: "true" }, "sandbox_id"],
        ["get_task", { sandbox_id: ghost, task_id: tid, stdout_offset: -1 }, "stdout_offset"],
        ["get_task", { sandbox_id: ghost, task_id: tid, stdout_offset: 1048577 }, "stdout_offset"],
        ["get_task", { sandbox_id: ghost, task_id: tid, stderr_offset: -1 }, "stderr_offset"],
        ["get_task", { sandbox_id: ghost, task_id: tid, stderr_offset: 1048577 }, "stderr_offset"],
        ["get_task", { sandbox_id: ghost, task_id: tid, limit: 0 }, "limit"],
        ["get_task", { sandbox_id: ghost, task_id: tid, limit: 65537 }, "limit"],
        ["get_task", { sandbox_id: ghost, task_id: tid.toUpperCase() }, "task_id"],
        ["get_task", { sandbox_id: ghost, task_id: tid.slice(1) }, "task_id"],
        ["get_task", { sandbox_id: ghost, task_id: tid + "0" }, "task_id"],
        ["get_task", { sandbox_id: ghost, task_id: "../../../../etc/passwd" }, "task_id"],
        ["get_task", { sandbox_id: ghost, task_id: tid, extra: true }, "extra"],
        ["cancel_task", { sandbox_id: ghost, task_id: tid, limit: 65537 }, "limit"],
        ["cancel_task", { sandbox_id: ghost, task_id: "xyz" }, "task_id"],
        ["cancel_task", { sandbox_id: ghost, task_id: tid, pid: 1 }, "pid"],
        ["remove_task", { sandbox_id: ghost, task_id: "xyz" }, "task_id"],
        ["create_sandbox", { timeout: 0 }, "timeout"],
        ["create_sandbox", { timeout: 86401 }, "timeout"],
        ["create_sandbox", { provider: "no-such-provider" }, "provider"],
        ["kill_sandbox", { sandbox_id: "bad id" }, "sandbox_id"],
      ];
      for (const [tool, args, field] of cases) {
        const text = failure(await call(s, tool, args), `${tool} ${JSON.stringify(args).slice(0, 80)}`);
        assert.ok(text.includes(field), `${tool}: the error names ${field}: ${text.slice(0, 300)}`);
        assert.ok(!text.includes("doesnotexist0000") || field === "sandbox_id",
          `${tool}: refused before asking the provider: ${text.slice(0, 300)}`);
      }
      // Nothing reached the sandbox: no task directory was made.
      assert.deepEqual(await taskDirs(s, sb), []);
      await closeServer(s);
    });

    if (!modern) {
      test("start_task without a sandbox and without a session default refuses", { timeout: 30000 }, async () => {
        const s = await server();
        const text = failure(await call(s, "start_task", { command: "true" }), "start_task without default");
        assert.match(text, /sandbox_id/);
        assert.match(text, /create_sandbox/);
        await closeServer(s);
      });
    } else {
      test("start_task without a sandbox refuses, also after create_sandbox: MCP 2026-07-28 has no session default", { timeout: 30000 }, async () => {
        const s = await server();
        const text = failure(await call(s, "start_task", { command: "true" }), "start_task without sandbox_id");
        assert.match(text, /sandbox_id/);
        assert.match(text, /create_sandbox/);
        assert.match(text, /2026-07-28/);
        // A sandbox made by this very client is no default either.
        const sb = await createSandbox(s);
        const again = failure(await call(s, "start_task", { command: "true" }), "start_task after create_sandbox");
        assert.match(again, /sandbox_id/);
        assert.match(again, /create_sandbox/);
        assert.deepEqual(await taskDirs(s, sb), [], "no task was started anywhere");
        await killSandbox(s, sb);
        await closeServer(s);
      });
    }

    if (!modern) {
      test("disconnect destroys the session's sandboxes except those running tasks", { timeout: 60000 }, async () => {
        const a = await server();
        const plain = await createSandbox(a);
        const kept = await createSandbox(a);
        const t = await start(a, kept, "sleep 1; echo kept");
        const b = await endSession(a); // EOF or DELETE: the session ends normally

        await destroyed(b, plain, "run_command in a destroyed sandbox");
        const r = await waitDone(b, kept, t.task_id);
        assert.equal(r.stdout, "kept\n");
        assert.equal((await run(b, kept, "echo still here")).stdout, "still here\n");
        await closeServer(b);
        await closeServer(a);
      });
    } else {
      test("a client going away destroys none of its sandboxes: MCP 2026-07-28 has no sessions", { timeout: 60000 }, async () => {
        const a = await server();
        const plain = await createSandbox(a);
        const kept = await createSandbox(a);
        const t = await start(a, kept, "sleep 1; echo kept");
        const b = await endSession(a); // EOF (the process exits) or the client's close
        await clientGone(a);

        // The sandbox without tasks outlives the client that made it, and
        // a new client uses it.
        assert.equal((await run(b, plain, "echo still here")).stdout, "still here\n");
        ok(await call(b, "write_file", { sandbox_id: plain, path: "left.txt", content: "by b" }), "write_file");
        const r = await waitDone(b, kept, t.task_id);
        assert.equal(r.stdout, "kept\n");
        assert.equal((await run(b, kept, "echo still here")).stdout, "still here\n");
        // b going away destroys nothing either.
        const c = await endSession(b);
        await clientGone(b);
        assert.equal(ok(await call(c, "read_file", { sandbox_id: plain, path: "left.txt" }), "read_file").content, "by b");
        await killSandbox(c, plain);
        await killSandbox(c, kept);
        await closeServer(c);
        await closeServer(b);
        await closeServer(a);
      });
    }

    if (!modern) {
      test("querying from another session does not make the sandbox that session's", { timeout: 60000 }, async () => {
        const a = await server();
        const sb = await createSandbox(a);
        const t = await start(a, sb, "sleep 300");
        const b = await endSession(a);

        assert.equal((await getTask(b, sb, t.task_id)).state, "running");
        const c = ok(await call(b, "cancel_task", { sandbox_id: sb, task_id: t.task_id }), "cancel from b");
        assert.equal(c.state, "cancelled");
        // b's own sandbox, which its end destroys: once it is gone, b's end
        // is over.
        const canary = await createSandbox(b);
        const d = await endSession(b); // must not destroy sb
        await destroyed(d, canary, "the ended session's own sandbox");

        const r = await getTask(d, sb, t.task_id);
        assert.equal(r.state, "cancelled");
        await closeServer(d);
        await closeServer(b);
        await closeServer(a);
      });
    } else {
      // No session owns a sandbox in MCP 2026-07-28; what is left of the
      // legacy test: a task is read and cancelled by another client than
      // the one that started it, and neither client's going away destroys
      // the sandbox or that client's own one.
      test("another client reads and cancels a task; no client's going away destroys a sandbox", { timeout: 60000 }, async () => {
        const a = await server();
        const sb = await createSandbox(a);
        const t = await start(a, sb, "sleep 300");
        const b = await endSession(a);
        await clientGone(a);

        assert.equal((await getTask(b, sb, t.task_id)).state, "running");
        const c = ok(await call(b, "cancel_task", { sandbox_id: sb, task_id: t.task_id }), "cancel from b");
        assert.equal(c.state, "cancelled");
        const own = await createSandbox(b);
        const d = await endSession(b);
        await clientGone(b);
        assert.equal((await run(d, own, "echo kept")).stdout, "kept\n", "b's own sandbox outlives b");
        const r = await getTask(d, sb, t.task_id);
        assert.equal(r.state, "cancelled");
        await killSandbox(d, own);
        await killSandbox(d, sb);
        await closeServer(d);
        await closeServer(b);
        await closeServer(a);
      });
    }

    test("a task directory without a status record (an interrupted start) is unknown", { timeout: 60000 }, async () => {
      const s = await server();
      const sb = await createSandbox(s);
      // What a start cut short between making the directory and writing
      // the first record leaves behind.
      const tid = "00112233445566778899aabbccddeeff";
      await run(s, sb, `mkdir -p .taskbox/tasks/${tid} && chmod 700 .taskbox .taskbox/tasks .taskbox/tasks/${tid}`);
      const r = await getTask(s, sb, tid);
      assert.equal(r.state, "unknown");
      assert.equal(r.exit_code, null);
      assert.match(r.error, /status record/);
      const c = ok(await call(s, "cancel_task", { sandbox_id: sb, task_id: tid }), "cancel_task");
      assert.equal(c.state, "unknown");
      assert.match(c.error, /not confirmed/);
      // remove_task clears it, and then it is gone.
      const rm = ok(await call(s, "remove_task", { sandbox_id: sb, task_id: tid }), "remove_task");
      assert.equal(rm.removed, true);
      assert.equal(rm.state, "unknown");
      failure(await call(s, "get_task", { sandbox_id: sb, task_id: tid }), "no such task");
      // A task that never existed is an error naming it.
      const other = "ffeeddccbbaa99887766554433221100";
      const missing = failure(await call(s, "get_task", { sandbox_id: sb, task_id: other }), "no such task");
      assert.ok(missing.includes(other));
      await closeServer(s);
    });

    // Legacy: the first run_command without sandbox_id makes the session's
    // default sandbox, and the session's end destroys it. Modern: no
    // default (a tool error naming sandbox_id), so the same calls name the
    // sandbox create_sandbox made, and it outlives the client.
    test(
      modern
        ? "ordinary tools: run_command, write_file, read_file; no implicit sandbox in MCP 2026-07-28"
        : "ordinary tools: run_command, write_file, read_file and the implicit default sandbox",
      { timeout: 60000 },
      async () => {
        const a = await server();
        let sb;
        if (modern) {
          for (const [tool, args] of [
            ["run_command", { command: "echo hi" }],
            ["read_file", { path: "dir/hello.txt" }],
            ["write_file", { path: "dir/hello.txt", content: "x" }],
          ]) {
            const text = failure(await call(a, tool, args), `${tool} without sandbox_id`);
            assert.match(text, /sandbox_id/, `${tool}: ${text}`);
            assert.match(text, /create_sandbox/, `${tool}: ${text}`);
          }
          sb = await createSandbox(a);
        }
        // In the legacy era at is {}: the calls name no sandbox.
        const at = modern ? { sandbox_id: sb } : {};
        // Without any sandbox, run_command makes the session default.
        const r = ok(await call(a, "run_command", { ...at, command: "echo hi; echo err >&2; exit 4" }), "run_command");
        if (!modern) {
          sb = r.sandbox_id;
          sandboxes.add(sb);
        } else assert.equal(r.sandbox_id, sb);
        assert.equal(r.exit_code, 4);
        assert.equal(r.stdout, "hi\n");
        assert.equal(r.stderr, "err\n");
        assert.equal(r.timed_out, false);
        const big = ok(await call(a, "run_command", { ...at, command: "head -c 200000 /dev/zero | tr '\\0' x" }), "big output");
        assert.equal(big.stdout.length, 65536);
        assert.equal(big.stdout_truncated, true);
        const slow = ok(await call(a, "run_command", { ...at, command: "sleep 30", timeout: 1 }), "timeout");
        assert.equal(slow.timed_out, true);

        // notifications/cancelled (an aborted request) stops a long command.
        const ac = new AbortController();
        const long = callTool(a.client, "run_command", { ...at, command: "echo $$ > run.pid; exec sleep 60" }, { signal: ac.signal })
          .then(() => "finished", () => "aborted");
        await until("the command to start", async () => {
          const r = ok(await call(a, "run_command", { ...at, command: "cat run.pid 2>/dev/null || true" }), "cat run.pid");
          return r.stdout.trim() !== "";
        }, 20000);
        ac.abort();
        assert.equal(await long, "aborted");
        await until("the cancelled command to stop", async () => {
          const r = ok(await call(a, "run_command", { ...at, command: "kill -0 $(cat run.pid) 2>/dev/null && echo alive || echo gone" }), "probe");
          return r.stdout.trim() === "gone";
        }, 20000);

        ok(await call(a, "write_file", { ...at, path: "dir/hello.txt", content: "héllo\n" }), "write_file");
        const bytes = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]);
        ok(await call(a, "write_file", { ...at, path: "bin.dat", content: bytes.toString("base64"), encoding: "base64" }), "write_file base64");
        const t = ok(await call(a, "read_file", { ...at, path: "dir/hello.txt" }), "read_file");
        assert.equal(t.content, "héllo\n");
        assert.equal(t.size, 7);
        assert.equal(t.eof, true);
        const part = ok(await call(a, "read_file", { ...at, path: "dir/hello.txt", offset: 1, length: 2 }), "read_file part");
        assert.equal(part.content, "é");
        assert.equal(part.next_offset, 3);
        const b = ok(await call(a, "read_file", { ...at, path: "bin.dat", encoding: "base64" }), "read_file base64");
        assert.deepEqual(Buffer.from(b.content, "base64"), bytes);
        const bad = failure(await call(a, "write_file", { ...at, path: "x", content: "@@@", encoding: "base64" }), "bad base64");
        assert.match(bad, /content/);
        const missing = failure(await call(a, "read_file", { ...at, path: "no/such/file" }), "read_file missing");
        assert.match(missing, /no\/such\/file/);
        const b2 = await endSession(a);
        if (!modern) {
          // No task was started there, so the session's end destroyed it.
          await destroyed(b2, sb, "after disconnect");
        } else {
          // No session: the sandbox, files and all, outlives the client.
          await clientGone(a);
          const kept = ok(await call(b2, "read_file", { sandbox_id: sb, path: "dir/hello.txt" }), "read_file from a new client");
          assert.equal(kept.content, "héllo\n");
          await killSandbox(b2, sb);
        }
        await closeServer(b2);
        await closeServer(a);
      },
    );

    waitingTests({ server, closeServer, killServer, call, createSandbox, start, getTask, ok, failure, data, HOST_SECRET, era });
    interactiveTests({ server, closeServer, killServer, call, createSandbox, start, getTask, ok, failure, data, until, sleep, SECRET, HOST_SECRET, era, primary: !via.limitElsewhere && !via.interactiveElsewhere && transport === "stdio" && client === "v1", renewsOnConnect: !!provider.renewsOnConnect, noPython: !!provider.noPython, killSandbox, forgetSandbox: (id) => sandboxes.delete(id), run, statusRecord });

    test("kill -9 of the server during start_task never loses the task", { timeout: 90000 }, async () => {
      const a = await server();
      const sb = await createSandbox(a);
      const watcher = await server();
      const pending = call(a, "start_task", { sandbox_id: sb, command: "sleep 2; echo late" }).catch((e) => e);
      // Kill the server as soon as the task's directory exists, while
      // start_task may still be in flight.
      await until("the task directory", async () => (await taskDirs(watcher, sb)).length > 0, 30000, 5);
      await killServer(a);
      await pending;

      const ids = await taskDirs(watcher, sb);
      assert.equal(ids.length, 1);
      const r = await until("the task to be readable", async () => {
        const g = await call(watcher, "get_task", { sandbox_id: sb, task_id: ids[0] });
        return g.isError ? null : data(g);
      }, 10000);
      assert.ok(["running", "unknown", ...TERMINAL].includes(r.state), r.state);
      if (r.state === "running") {
        const done = await waitDone(watcher, sb, ids[0]);
        assert.equal(done.stdout, "late\n");
      }
      await closeServer(watcher);
    });
  });
}
