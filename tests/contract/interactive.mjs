// Interactive tasks, for any provider: a task's stdin kept open as a pipe
// (stdin "pipe") or a pseudo-terminal (tty: true), fed by write_task from
// any server process and sized by resize_task; idempotency keys making a
// start happen once, also across a killed server and concurrent starts; and
// ended_by / signal telling how each task ended, every value reached for
// real. Called from contractSuite with its helpers.
//
// h.primary is true only on a provider's first run (stdio, the SDK v1
// client, not limitElsewhere): nothing here depends on the transport or the
// era, so the other runs take only the quick smoke test (a pipe written and
// closed through `wc -l`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

const TERMINAL = ["succeeded", "failed", "cancelled", "timed_out"];

// What a terminal stream reads as, without its control sequences (CSI and
// the like: readline's bracketed paste, colours) and carriage returns.
function plain(text) {
  return text
    .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "")
    .replace(/\x1b[()][0-9A-Za-z]/g, "")
    .replace(/\x1b[=>]/g, "")
    .replace(/\r/g, "");
}

export function interactiveTests(h) {
  const { server, closeServer, killServer, call, createSandbox, start, getTask, ok, failure, until, SECRET } = h;
  const heavy = h.primary ? false : "checked by this provider's primary run: no transport or era changes it";
  // The tests whose command is a python3 program need one in the image.
  const needsPython = heavy || (h.noPython ? "the sandbox's image has no python3" : false);

  async function write(s, sandbox_id, task_id, data, extra = {}) {
    return ok(await call(s, "write_task", { sandbox_id, task_id, data, ...extra }), `write_task ${JSON.stringify(data).slice(0, 40)}`);
  }

  // Waits (get_task with wait, following both streams' offsets) until the
  // task's whole stdout so far satisfies pred; returns { text, task }.
  async function outputUntil(s, sandbox_id, task_id, what, pred, limitMs = 60000) {
    const end = Date.now() + limitMs;
    let text = "";
    let so = 0;
    let se = 0;
    for (;;) {
      const r = await getTask(s, sandbox_id, task_id, { wait: 10, stdout_offset: so, stderr_offset: se, limit: 65536 });
      text += r.stdout;
      so = r.stdout_next_offset;
      se = r.stderr_next_offset;
      if (pred(text)) return { text, task: r };
      if (r.state !== "running" && so >= r.stdout_size)
        throw new Error(`${what}: the task ended (${r.state}, ${r.error}) first; stdout ${JSON.stringify(text)}`);
      if (Date.now() > end) throw new Error(`gave up waiting for ${what}; stdout so far ${JSON.stringify(text)}`);
    }
  }

  // get_task with wait until the task has ended.
  async function ended(s, sandbox_id, task_id, limitMs = 60000) {
    return until(`task ${task_id} to end`, async () => {
      const r = await getTask(s, sandbox_id, task_id, { wait: 10, limit: 65536 });
      return r.state !== "running" ? r : null;
    }, limitMs, 0);
  }

  // The fields every task view has gained, as a task started with stdin
  // and key shows them while it runs.
  function assertInputFields(r, stdin, key = null) {
    assert.equal(r.stdin, stdin, `stdin: ${JSON.stringify(r)}`);
    assert.equal(r.idempotency_key, key);
    if (r.state === "running") {
      assert.equal(r.ended_by, null, "ended_by is null while the task runs");
      assert.equal(r.signal, null);
    }
  }

  // The smoke test, on every run.
  test("stdin pipe: one write_task with eof ends a `wc -l`", { timeout: 60000 }, async () => {
    const s = await server();
    const sb = await createSandbox(s);
    const t = await start(s, sb, "wc -l", { stdin: "pipe" });
    assert.equal(t.reused, false);
    assertInputFields(t, "pipe");
    const w = await write(s, sb, t.task_id, "one\ntwo\nthree\n", { eof: true });
    assert.deepEqual(w, { sandbox_id: sb, task_id: t.task_id, written: 14, eof: true });
    const r = await ended(s, sb, t.task_id);
    assert.equal(r.state, "succeeded", JSON.stringify(r));
    assert.equal(r.stdout.trim(), "3"); // busybox wc pads the count
    assert.equal(r.stderr, "");
    assert.equal(r.ended_by, "exit");
    assert.equal(r.signal, null);
    assertInputFields(r, "pipe");
    await h.killSandbox(s, sb);
    await closeServer(s);
  });

  test("stdin pipe: a `read` loop answered line by line", { timeout: 90000, skip: heavy }, async () => {
    const s = await server();
    const sb = await createSandbox(s);
    const t = await start(s, sb, 'while read l; do echo "got:$l"; done; echo done', { stdin: "pipe" });
    assertInputFields(t, "pipe");
    // Nothing written yet: the loop waits, the task runs.
    const idle = await getTask(s, sb, t.task_id, { wait: 1 });
    assert.equal(idle.state, "running");
    assert.equal(idle.stdout, "");
    assert.deepEqual(await write(s, sb, t.task_id, "a\n"), { sandbox_id: sb, task_id: t.task_id, written: 2, eof: false });
    await outputUntil(s, sb, t.task_id, "got:a", (x) => x === "got:a\n");
    assert.equal((await write(s, sb, t.task_id, "b\n")).written, 2);
    const { task } = await outputUntil(s, sb, t.task_id, "got:b", (x) => x === "got:a\ngot:b\n");
    assert.equal(task.state, "running", "the loop still waits for input");
    // eof alone: no bytes, the pipe closed.
    assert.deepEqual(await write(s, sb, t.task_id, "", { eof: true }), { sandbox_id: sb, task_id: t.task_id, written: 0, eof: true });
    const r = await ended(s, sb, t.task_id);
    assert.equal(r.state, "succeeded", JSON.stringify(r));
    assert.equal(r.exit_code, 0);
    assert.equal(r.stdout, "got:a\ngot:b\ndone\n");
    assert.equal(r.stderr, "");
    assert.equal(r.ended_by, "exit");
    assert.equal(r.signal, null);
    await h.killSandbox(s, sb);
    await closeServer(s);
  });

  test("stdin pipe: written from a second server process, after the first one ended", { timeout: 90000, skip: heavy }, async () => {
    const a = await server();
    const sb = await createSandbox(a);
    const t = await start(a, sb, "cat", { stdin: "pipe" });
    assert.equal((await write(a, sb, t.task_id, "from-a\n")).written, 7);
    await outputUntil(a, sb, t.task_id, "a's line", (x) => x === "from-a\n");
    // The first server goes away normally (its session's end too): the
    // supervisor, not the server, holds the task's stdin.
    await closeServer(a);

    const b = await server();
    assertInputFields(await getTask(b, sb, t.task_id), "pipe");
    assert.equal((await write(b, sb, t.task_id, "x\n")).written, 2);
    await outputUntil(b, sb, t.task_id, "b's line", (x) => x === "from-a\nx\n");
    // And a third one, killed after its write: what it wrote stays written.
    const c = await server();
    assert.equal((await write(c, sb, t.task_id, "from-c\n")).written, 7);
    await killServer(c);
    assert.equal((await write(b, sb, t.task_id, "", { eof: true })).eof, true);
    const r = await ended(b, sb, t.task_id);
    assert.equal(r.state, "succeeded", JSON.stringify(r));
    assert.equal(r.stdout, "from-a\nx\nfrom-c\n");
    assert.equal(r.ended_by, "exit");
    await h.killSandbox(b, sb);
    await closeServer(b);
  });

  test("stdin pipe: bytes in base64 and UTF-8 text reach the task as sent", { timeout: 60000, skip: heavy }, async () => {
    const s = await server();
    const sb = await createSandbox(s);
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const bin = await start(s, sb, "cat > bin.dat", { stdin: "pipe" });
    const w = await write(s, sb, bin.task_id, bytes.toString("base64"), { encoding: "base64", eof: true });
    assert.equal(w.written, 256);
    assert.equal(w.eof, true);
    assert.equal((await ended(s, sb, bin.task_id)).state, "succeeded");
    const back = ok(await call(s, "read_file", { sandbox_id: sb, path: "bin.dat", encoding: "base64" }), "read_file base64");
    assert.deepEqual(Buffer.from(back.content, "base64"), bytes);

    // utf8 (the default): written counts bytes, not characters.
    const text = "héllo € 😀\n";
    const txt = await start(s, sb, "cat > text.txt", { stdin: "pipe" });
    assert.equal((await write(s, sb, txt.task_id, text, { encoding: "utf8" })).written, Buffer.byteLength(text));
    await write(s, sb, txt.task_id, "", { eof: true });
    assert.equal((await ended(s, sb, txt.task_id)).state, "succeeded");
    assert.equal(ok(await call(s, "read_file", { sandbox_id: sb, path: "text.txt" }), "read_file").content, text);
    await h.killSandbox(s, sb);
    await closeServer(s);
  });

  test("stdin pipe: a task that does not read takes what fits, and write_task says how much", { timeout: 120000, skip: heavy }, async () => {
    const s = await server();
    const sb = await createSandbox(s);
    const t = await start(s, sb, "sleep 300", { stdin: "pipe" });
    const chunk = "x".repeat(65536);
    let total = 0;
    let short = null;
    // The pipes between write_task and the command hold a few hundred KiB
    // at most; 4 MiB never fits.
    for (let i = 0; i < 64 && short === null; i++) {
      const w = await write(s, sb, t.task_id, chunk);
      assert.ok(w.written >= 0 && w.written <= 65536, JSON.stringify(w));
      assert.equal(w.eof, false);
      total += w.written;
      if (w.written < 65536) short = w;
    }
    assert.ok(short, "a write to a full pipe returns fewer bytes than sent");
    assert.ok(total >= 65536, `the pipe took something first (${total} bytes)`);
    assert.equal((await getTask(s, sb, t.task_id)).state, "running");
    // eof with bytes that do not fit is not carried out: eof false.
    const w = await write(s, sb, t.task_id, chunk, { eof: true });
    assert.ok(w.written < 65536);
    assert.equal(w.eof, false, "eof is only done once all the bytes went in");
    const c = ok(await call(s, "cancel_task", { sandbox_id: sb, task_id: t.task_id }), "cancel");
    assert.equal(c.state, "cancelled");
    await h.killSandbox(s, sb);
    await closeServer(s);
  });

  test("tty: a python3 REPL driven through a terminal (prompt, echo, exit)", { timeout: 90000, skip: needsPython }, async () => {
    const s = await server();
    const sb = await createSandbox(s);
    // PYTHON_BASIC_REPL: the plain REPL whatever python3's version (3.13's
    // own line editor redraws the line instead of letting the terminal
    // echo it).
    const t = await start(s, sb, "PYTHON_BASIC_REPL=1 python3 -q -i", { tty: true });
    assertInputFields(t, "tty");
    await outputUntil(s, sb, t.task_id, "the prompt", (x) => plain(x).includes(">>> "));
    await write(s, sb, t.task_id, "print(6*7)\n");
    const seen = await outputUntil(s, sb, t.task_id, "the answer", (x) => /(^|\n)42\n/.test(plain(x)));
    assert.ok(plain(seen.text).includes("print(6*7)"), `the input is echoed: ${JSON.stringify(seen.text)}`);
    assert.ok(plain(seen.text).indexOf("print(6*7)") < plain(seen.text).lastIndexOf("42"), "echo first, then the answer");
    await write(s, sb, t.task_id, "exit()\n");
    const r = await ended(s, sb, t.task_id);
    assert.equal(r.state, "succeeded", JSON.stringify(r));
    assert.equal(r.exit_code, 0);
    assert.equal(r.stderr, "", "on a terminal everything is in stdout");
    assert.equal(r.ended_by, "exit");
    assert.equal(r.signal, null);
    assert.equal(r.stdin, "tty");
    // The terminal has ended: its input is closed.
    const msg = failure(await call(s, "write_task", { sandbox_id: sb, task_id: t.task_id, data: "1\n" }), "write_task after exit");
    assert.match(msg, /ended/, msg);
    await h.killSandbox(s, sb);
    await closeServer(s);
  });

  test("tty: rows and cols at start, resize_task changes them and signals the task", { timeout: 90000, skip: needsPython }, async () => {
    const s = await server();
    const sb = await createSandbox(s);
    // The defaults: 24 rows, 80 columns.
    const d = await start(s, sb, "stty size", { tty: true });
    const dr = await ended(s, sb, d.task_id);
    assert.equal(dr.state, "succeeded", JSON.stringify(dr));
    assert.match(plain(dr.stdout), /^24 80$/m);

    const py = [
      "import os, signal, sys",
      'size = lambda: "%d %d" % os.get_terminal_size()[::-1]',
      'signal.signal(signal.SIGWINCH, lambda *a: print("winch", size(), flush=True))',
      'print("ready", flush=True)',
      "sys.stdin.readline()",
    ].join("\n");
    const t = await start(s, sb, `stty size; python3 -c '${py}'; stty size`, { tty: true, rows: 30, cols: 100 });
    assertInputFields(t, "tty");
    await outputUntil(s, sb, t.task_id, "the first size", (x) => /^30 100\n[\s\S]*ready\n/m.test(plain(x)));
    const rz = ok(await call(s, "resize_task", { sandbox_id: sb, task_id: t.task_id, rows: 40, cols: 120 }), "resize_task");
    assert.deepEqual(rz, { sandbox_id: sb, task_id: t.task_id, rows: 40, cols: 120 });
    await outputUntil(s, sb, t.task_id, "SIGWINCH", (x) => /winch 40 120/.test(plain(x)));
    await write(s, sb, t.task_id, "\n");
    const r = await ended(s, sb, t.task_id);
    assert.equal(r.state, "succeeded", JSON.stringify(r));
    assert.match(plain(r.stdout), /^30 100\n[\s\S]*winch 40 120\n[\s\S]*^40 120$/m);
    await h.killSandbox(s, sb);
    await closeServer(s);
  });

  test("tty and pipe: a secret typed in is masked in the echo and the output", { timeout: 60000, skip: heavy }, async () => {
    const s = await server();
    const sb = await createSandbox(s);
    const t = await start(s, sb, "cat", { tty: true });
    const w = await write(s, sb, t.task_id, `${SECRET}\n`);
    assert.equal(w.written, SECRET.length + 1);
    assert.ok(!JSON.stringify(w).includes(SECRET));
    // Twice: the terminal's echo, then cat's copy.
    await outputUntil(s, sb, t.task_id, "the echo and the copy", (x) => x.split("****").length >= 3);
    // eof on a terminal: ^D at the start of a line ends cat.
    assert.equal((await write(s, sb, t.task_id, "", { eof: true })).eof, true);
    const r = await ended(s, sb, t.task_id);
    assert.equal(r.state, "succeeded", JSON.stringify(r));
    assert.ok(!r.stdout.includes(SECRET), r.stdout);
    assert.ok(!r.stdout.includes(SECRET.slice(0, 10)), r.stdout);
    assert.equal(plain(r.stdout), "****\n****\n");

    const p = await start(s, sb, "cat", { stdin: "pipe" });
    await write(s, sb, p.task_id, `a ${SECRET} b\n`, { eof: true });
    const pr = await ended(s, sb, p.task_id);
    assert.equal(pr.stdout, "a **** b\n");
    await h.killSandbox(s, sb);
    await closeServer(s);
  });

  test("idempotency_key: concurrent starts with one key, from two servers, start one task", { timeout: 150000, skip: heavy }, async () => {
    const a = await server();
    const b = await server();
    const sb = await createSandbox(a);
    const key = `k-${randomBytes(6).toString("hex")}`;
    const args = { sandbox_id: sb, command: "sleep 300", idempotency_key: key };
    const results = await Promise.all([a, b, a, b].map(async (s, i) => ok(await call(s, "start_task", args), `start ${i}`)));
    const ids = new Set(results.map((r) => r.task_id));
    assert.equal(ids.size, 1, `one task: ${[...ids]}`);
    assert.deepEqual(results.map((r) => r.reused).sort(), [false, true, true, true], "exactly one start was not reused");
    for (const r of results) {
      assert.equal(r.idempotency_key, key);
      assert.equal(r.stdin, "null");
      assert.ok(["running", ...TERMINAL].includes(r.state), r.state);
    }
    const [task_id] = ids;
    const l = ok(await call(b, "list_tasks", { sandbox_id: sb }), "list_tasks");
    assert.deepEqual(l.tasks.map((x) => x.task_id), [task_id], "one task in the sandbox");
    assert.equal(l.tasks[0].idempotency_key, key);
    assert.equal(l.tasks[0].stdin, "null");

    // The key with another request is refused, from either server, naming
    // what differs and starting nothing; the same request is still the one.
    const cmd = failure(await call(b, "start_task", { ...args, command: "sleep 301" }), "another command");
    assert.match(cmd, new RegExp(`idempotency_key: ${key} was used for a different request.*: command differs`), cmd);
    const two = failure(await call(a, "start_task", { ...args, cwd: ".", timeout: 60 }), "another cwd and timeout");
    assert.match(two, /: cwd and timeout differ/, two);
    const io = failure(await call(a, "start_task", { ...args, tty: true }), "a terminal");
    assert.match(io, /: stdin and tty differ/, io);
    const same = ok(await call(b, "start_task", args), "the same request");
    assert.equal(same.task_id, task_id);
    assert.equal(same.reused, true);
    const l2 = ok(await call(a, "list_tasks", { sandbox_id: sb }), "list_tasks");
    assert.equal(l2.tasks.length, 1, "a refused start started nothing");

    // Another key is another task; the same key once more is still the one.
    const other = await start(a, sb, "sleep 300", { idempotency_key: `${key}-2` });
    assert.equal(other.reused, false);
    assert.notEqual(other.task_id, task_id);
    const c = ok(await call(b, "cancel_task", { sandbox_id: sb, task_id }), "cancel");
    assert.equal(c.state, "cancelled");
    assert.equal(c.ended_by, "cancel");
    assert.equal(c.idempotency_key, key);
    // An ended task is still the key's: reused, as observed (cancelled).
    const again = await start(a, sb, "sleep 300", { idempotency_key: key });
    assert.equal(again.task_id, task_id);
    assert.equal(again.reused, true);
    assert.equal(again.state, "cancelled");
    assert.equal(again.ended_by, "cancel");
    // remove_task frees the key.
    ok(await call(a, "remove_task", { sandbox_id: sb, task_id }), "remove_task");
    const fresh = await start(b, sb, "true", { idempotency_key: key });
    assert.equal(fresh.reused, false);
    assert.notEqual(fresh.task_id, task_id);
    ok(await call(a, "cancel_task", { sandbox_id: sb, task_id: other.task_id }), "cancel other");
    await h.killSandbox(a, sb);
    await closeServer(b);
    await closeServer(a);
  });

  test("idempotency_key: the retry after a killed server returns the same handle", { timeout: 90000, skip: heavy }, async () => {
    const a = await server();
    const sb = await createSandbox(a);
    const key = "retry.key_1";
    const first = await start(a, sb, "sleep 300", { idempotency_key: key, stdin: "pipe" });
    assert.equal(first.reused, false);
    assertInputFields(first, "pipe", key);
    await killServer(a); // the answer came, but say the client never saw it

    const b = await server();
    const retry = await start(b, sb, "sleep 300", { idempotency_key: key, stdin: "pipe" });
    assert.equal(retry.task_id, first.task_id, "the same handle");
    assert.equal(retry.reused, true);
    assert.equal(retry.state, "running", "the state as observed");
    assertInputFields(retry, "pipe", key);
    assert.equal(retry.started_at, first.started_at);
    assert.equal((await getTask(b, sb, first.task_id)).state, "running");

    // A key whose task has ended: the retry gets that task, as it ended.
    const once = await start(b, sb, "echo once", { idempotency_key: "once" });
    const done = await ended(b, sb, once.task_id);
    assert.equal(done.state, "succeeded");
    await killServer(b);
    const c = await server();
    const again = await start(c, sb, "echo once", { idempotency_key: "once" });
    assert.equal(again.task_id, once.task_id);
    assert.equal(again.reused, true);
    assert.equal(again.state, "succeeded");
    assert.equal(again.exit_code, 0);
    assert.equal(again.ended_by, "exit");
    const l = ok(await call(c, "list_tasks", { sandbox_id: sb }), "list_tasks");
    assert.deepEqual(l.tasks.map((x) => x.task_id).sort(), [first.task_id, once.task_id].sort(), "nothing was started twice");
    assert.equal((await getTask(c, sb, once.task_id)).stdout, "once\n", "and nothing ran twice");
    await h.killSandbox(c, sb);
    await closeServer(c);
  });

  test("ended_by and signal: exit, a signal, timeout, cancel and a lost supervisor, each for real", { timeout: 120000, skip: heavy }, async () => {
    const s = await server();
    const sb = await createSandbox(s);
    const exit3 = await start(s, sb, "exit 3");
    const killed = await start(s, sb, "kill -9 $$");
    const tout = await start(s, sb, "sleep 30", { timeout: 1 });
    const canc = await start(s, sb, "sleep 300");
    const lost = await start(s, sb, "sleep 300", { idempotency_key: "lost-1" });

    const r1 = await ended(s, sb, exit3.task_id);
    assert.equal(r1.state, "failed");
    assert.equal(r1.exit_code, 3);
    assert.equal(r1.ended_by, "exit");
    assert.equal(r1.signal, null);

    // The task's /bin/sh killed by a signal: it exited (not a cancel), and
    // the signal is named.
    const r2 = await ended(s, sb, killed.task_id);
    assert.equal(r2.state, "failed", JSON.stringify(r2));
    assert.equal(r2.ended_by, "exit");
    assert.equal(r2.signal, "SIGKILL");

    const r3 = await ended(s, sb, tout.task_id, 30000);
    assert.equal(r3.state, "timed_out");
    assert.equal(r3.ended_by, "timeout");

    const running = await getTask(s, sb, canc.task_id);
    assert.equal(running.ended_by, null);
    assert.equal(running.signal, null);
    const r4 = ok(await call(s, "cancel_task", { sandbox_id: sb, task_id: canc.task_id, wait: 10 }), "cancel");
    assert.equal(r4.state, "cancelled");
    assert.equal(r4.ended_by, "cancel");
    assert.equal((await getTask(s, sb, canc.task_id)).ended_by, "cancel");

    // The supervisor killed the way a crash would (as in "each state is
    // reached for real"): unknown, supervisor_lost.
    assert.equal((await getTask(s, sb, lost.task_id)).state, "running");
    const rec = await h.statusRecord(s, sb, lost.task_id);
    await h.run(s, sb, `kill -9 ${rec.supervisor_pid}`);
    const r5 = await until("the dead supervisor to be noticed", async () => {
      const r = await getTask(s, sb, lost.task_id);
      return r.state === "unknown" ? r : null;
    }, 15000);
    assert.equal(r5.ended_by, "supervisor_lost");
    const fresh = await server();
    const r5b = await getTask(fresh, sb, lost.task_id);
    assert.equal(r5b.state, "unknown");
    assert.equal(r5b.ended_by, "supervisor_lost", "a server that never saw it alive says the same");
    // A retry of its start finds it as it is, not as its record says.
    const again = await start(fresh, sb, "sleep 300", { idempotency_key: "lost-1" });
    assert.equal(again.task_id, lost.task_id);
    assert.equal(again.reused, true);
    assert.equal(again.state, "unknown", JSON.stringify(again));
    assert.equal(again.ended_by, "supervisor_lost");
    await closeServer(fresh);

    const l = ok(await call(s, "list_tasks", { sandbox_id: sb }), "list_tasks");
    const by = Object.fromEntries(l.tasks.map((x) => [x.task_id, x]));
    assert.equal(by[exit3.task_id].ended_by, "exit");
    assert.equal(by[killed.task_id].signal, "SIGKILL");
    assert.equal(by[tout.task_id].ended_by, "timeout");
    assert.equal(by[canc.task_id].ended_by, "cancel");
    assert.equal(by[lost.task_id].ended_by, "supervisor_lost");
    await h.killSandbox(s, sb);
    await closeServer(s);
  });

  // Where connecting extends a sandbox's life (e2b: connect is what
  // resumes a sandbox, and it renews it), a sandbox in use never runs out:
  // there it vanishes behind this server's back, destroyed by another
  // server process, which is the same event for the server that saw the
  // task running.
  const vanishes = h.renewsOnConnect ? "is destroyed by another server process" : "lifetime runs out";
  test(`ended_by sandbox_expired: the sandbox's ${vanishes} while the task runs`, { timeout: 120000, skip: heavy }, async () => {
    const s = await server();
    // Only task tools touch it from here on: they do not renew a sandbox.
    const sb = await createSandbox(s, { timeout: h.renewsOnConnect ? 600 : 8 });
    const t = await start(s, sb, "sleep 300");
    assert.equal((await getTask(s, sb, t.task_id)).state, "running", "this server saw it running");
    if (h.renewsOnConnect) {
      const other = await server();
      ok(await call(other, "kill_sandbox", { sandbox_id: sb }), "kill_sandbox from another server");
      await closeServer(other);
    }
    const r = await until("the sandbox to expire under its task", async () => {
      const x = await call(s, "get_task", { sandbox_id: sb, task_id: t.task_id, wait: 15 });
      assert.ok(!x.isError, `get_task of a task seen running, after its sandbox expired: ${x.content?.[0]?.text}`);
      const v = h.data(x);
      return v.state !== "running" ? v : null;
    }, 90000, 0);
    assert.equal(r.state, "unknown", JSON.stringify(r));
    assert.equal(r.ended_by, "sandbox_expired");
    assert.equal(r.exit_code, null);
    h.forgetSandbox(sb); // nothing left to kill
    await closeServer(s);
  });

  test("write_task, resize_task and start_task's new arguments refuse bad input, naming the cause", { timeout: 90000, skip: heavy }, async () => {
    const s = await server();
    const sb = await createSandbox(s);
    // Refused starts, before anything starts.
    const starts = [
      [{ stdin: "null", tty: true }, /stdin/],
      [{ stdin: "tty" }, /stdin/],
      [{ stdin: "bogus" }, /stdin/],
      [{ tty: "yes" }, /tty/],
      [{ rows: 30 }, /rows/],
      [{ cols: 100 }, /cols/],
      [{ tty: true, rows: 0 }, /rows/],
      [{ tty: true, cols: 1001 }, /cols/],
      [{ idempotency_key: "a/b" }, /idempotency_key/],
      [{ idempotency_key: "" }, /idempotency_key/],
      [{ idempotency_key: "a b" }, /idempotency_key/],
      [{ idempotency_key: "k".repeat(129) }, /idempotency_key/],
    ];
    for (const [extra, field] of starts) {
      const msg = failure(await call(s, "start_task", { sandbox_id: sb, command: "true", ...extra }), `start_task ${JSON.stringify(extra).slice(0, 60)}`);
      assert.match(msg, field, msg);
    }
    assert.deepEqual(ok(await call(s, "list_tasks", { sandbox_id: sb }), "list_tasks").tasks, [], "no refused start started a task");
    const k128 = await start(s, sb, "true", { idempotency_key: "K".repeat(128) });
    assert.equal(k128.idempotency_key, "K".repeat(128));

    const plainTask = await start(s, sb, "sleep 300");
    const piped = await start(s, sb, "cat > /dev/null; sleep 300", { stdin: "pipe" });
    const quick = await start(s, sb, "true", { stdin: "pipe" });
    const unknownId = "0123456789abcdef0123456789abcdef";
    const refuse = async (tool, args, re, what) => {
      const msg = failure(await call(s, tool, { sandbox_id: sb, ...args }), what);
      assert.match(msg, re, `${what}: ${msg}`);
      return msg;
    };

    await refuse("write_task", { task_id: plainTask.task_id, data: "x" }, /stdin/, "a task without stdin");
    await refuse("resize_task", { task_id: piped.task_id, rows: 10, cols: 10 }, /tty|terminal/, "resize of a pipe");
    await refuse("resize_task", { task_id: plainTask.task_id, rows: 10, cols: 10 }, /tty|terminal/, "resize without stdin");
    const unknown = await refuse("write_task", { task_id: unknownId, data: "x" }, /task/, "an unknown task");
    assert.ok(unknown.includes(unknownId), unknown);
    assert.equal((await ended(s, sb, quick.task_id)).state, "succeeded");
    await refuse("write_task", { task_id: quick.task_id, data: "x" }, /ended/, "an ended task");

    // Bad arguments: named, and the task still takes a good write.
    const bad = [
      [{ data: "@@@", encoding: "base64" }, /data/],
      [{ data: "QUJD", encoding: "hex" }, /encoding/],
      [{ data: "x".repeat(65537) }, /data/],
      [{ data: Buffer.alloc(65537).toString("base64"), encoding: "base64" }, /data/],
      [{}, /data/],
      [{ data: 3 }, /data/],
      [{ data: "x", eof: "yes" }, /eof/],
      [{ data: "x", bogus: 1 }, /bogus/],
    ];
    for (const [args, re] of bad) await refuse("write_task", { task_id: piped.task_id, ...args }, re, `write_task ${JSON.stringify(args).slice(0, 60)}`);
    for (const [args, re] of [[{ rows: 0, cols: 10 }, /rows/], [{ rows: 10, cols: 1001 }, /cols/], [{ rows: 10 }, /cols/]])
      await refuse("resize_task", { task_id: piped.task_id, ...args }, re, `resize_task ${JSON.stringify(args)}`);

    const w = await write(s, sb, piped.task_id, "ok\n", { eof: true });
    assert.equal(w.written, 3);
    assert.equal(w.eof, true);
    // After eof: refused, also from another server process, with or
    // without bytes; the task itself runs on.
    await refuse("write_task", { task_id: piped.task_id, data: "more" }, /eof|closed/, "a write after eof");
    await refuse("write_task", { task_id: piped.task_id, data: "", eof: true }, /eof|closed/, "a second eof");
    const other = await server();
    const msg = failure(await call(other, "write_task", { sandbox_id: sb, task_id: piped.task_id, data: "x" }), "after eof, elsewhere");
    assert.match(msg, /eof|closed/, msg);
    await closeServer(other);
    assert.equal((await getTask(s, sb, piped.task_id)).state, "running");

    ok(await call(s, "cancel_task", { sandbox_id: sb, task_id: plainTask.task_id }), "cancel");
    ok(await call(s, "cancel_task", { sandbox_id: sb, task_id: piped.task_id }), "cancel");
    await h.killSandbox(s, sb);
    await closeServer(s);
  });
}
