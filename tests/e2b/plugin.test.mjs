// The e2b plugin against the loopback fake, op by op: every op of the ABI,
// big output, file offsets, timeouts and cancellation, and what only this
// provider meets: a paused sandbox resumed through connect, a sandbox gone
// behind our back (502 from the sandbox proxy), a wrong API key, a rate
// limit, and the key never showing in a message, a log or a page.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startFake } from "./fake/spawn.mjs";
import { Driver, RC, b64, unb64 } from "./plugin-driver.mjs";

let fake;
const drivers = [];

before(async () => {
  fake = await startFake();
});

after(async () => {
  // Every driver is closed and the fake stopped before anything is judged:
  // one failure must not leave processes behind that keep the run alive.
  const codes = [];
  for (const d of drivers) codes.push(await d.close());
  await fake.stop();
  // Each driver exits cleanly (under valgrind: without memory errors).
  drivers.forEach((d, i) => assert.equal(codes[i], 0, d.stderr));
  // Nothing the plugin printed or logged in any test holds the key.
  for (const d of drivers) {
    assert.ok(!d.stdout.includes(fake.apiKey), "the key is in an answer");
    assert.ok(!d.stderr.includes(fake.apiKey), "the key is in a log line");
  }
});

function settings(extra = {}) {
  return { api_url: fake.apiUrl, sandbox_url: fake.sandboxUrl, ...extra };
}

async function driver(extraSettings = {}, env = {}) {
  const d = new Driver({ E2B_API_KEY: fake.apiKey, ...env });
  drivers.push(d);
  const init = await d.op({ op: "init", settings: settings(extraSettings) });
  assert.equal(init.rc, RC.OK, init.err);
  return d;
}

async function sandbox(d) {
  const c = await d.op({ op: "create", lifetime: 120 });
  assert.equal(c.rc, RC.OK, c.err);
  const k = await d.op({ op: "connect", id: c.id });
  assert.equal(k.rc, RC.OK, k.err);
  return c.id;
}

const exec = (d, argv, more = {}) => d.op({ op: "exec", argv, timeout_ms: 10000, ...more });
const text = (r, stream = "stdout") => unb64(r[stream]).toString();

test("settings are validated and unknown ones refused by name", async () => {
  const d = new Driver({});
  drivers.push(d);
  for (const [s, word] of [
    [{ colour: "blue" }, "settings.colour"],
    [{ api_url: "ftp://x" }, "settings.api_url"],
    [{ sandbox_url: 7 }, "settings.sandbox_url"],
    [{ api_key_env: "1BAD" }, "settings.api_key_env"],
    [{ domain: "a b" }, "settings.domain"],
    [{ template: "" }, "settings.template"],
    [{ default_lifetime: 0 }, "settings.default_lifetime"],
    [{ request_timeout: "60" }, "settings.request_timeout"],
    [{ env: ["A=1"] }, "settings.env"],
    [{ env: { "BAD NAME": "1" } }, "settings.env.BAD NAME"],
    [{ env: { OK: 1 } }, "settings.env.OK"],
    [{ connection_reuse: -1 }, "settings.connection_reuse"],
    [{ connection_reuse: 301 }, "settings.connection_reuse"],
    [{ connection_reuse: "10" }, "settings.connection_reuse"],
    [{ connection_reuse: 1.5 }, "settings.connection_reuse"],
    [{ connection_reuse: true }, "settings.connection_reuse"],
  ]) {
    const r = await d.op({ op: "init", settings: s });
    assert.equal(r.rc, RC.INVALID, JSON.stringify(s));
    assert.ok(r.err.includes(word), `${r.err} names ${word}`);
  }
  const ok = await d.op({
    op: "init",
    settings: { domain: "example.test", template: "base", default_lifetime: 600, request_timeout: 5 },
  });
  assert.equal(ok.rc, RC.OK, ok.err);
  await d.op({ op: "fini" });
  for (const reuse of [0, 300]) {
    const r = await d.op({ op: "init", settings: { connection_reuse: reuse } });
    assert.equal(r.rc, RC.OK, `connection_reuse ${reuse}: ${r.err}`);
    await d.op({ op: "fini" });
  }
  const bad = await d.op({ op: "init", settings: { connection_reuse: 301 } });
  assert.match(bad.err, /0.*300/, "the message gives the rule");
});

test("every op of the ABI works against the fake", async () => {
  const d = await driver();
  const id = await sandbox(d);

  const r = await exec(d, ["sh", "-c", 'printf "%s|%s" "$1" "$GREETING"; echo oops >&2; exit 3', "sh", "a b 'c'"], {
    env: ["GREETING=hi there"],
  });
  assert.equal(r.rc, RC.OK, r.err);
  assert.equal(r.exit_code, 3);
  assert.equal(text(r), "a b 'c'|hi there", "argv goes through without a shell");
  assert.equal(text(r, "stderr"), "oops\n");

  const home = text(await exec(d, ["pwd"])).trim();
  await exec(d, ["mkdir", "sub"]);
  assert.equal(text(await exec(d, ["pwd"], { cwd: "sub" })).trim(), `${home}/sub`, "a relative cwd is in the home");
  const badCwd = await exec(d, ["pwd"], { cwd: "/no/such/dir" });
  assert.equal(badCwd.rc, RC.INVALID);
  assert.match(badCwd.err, /does not exist/);
  const missing = await exec(d, ["no-such-command-here"]);
  assert.equal(missing.rc, RC.OK);
  assert.equal(missing.exit_code, 127);
  const killed = await exec(d, ["sh", "-c", "kill -TERM $$"]);
  assert.equal(killed.exit_code, 128 + 15, "a signal death is 128+N");

  const data = Buffer.from([0, 1, 2, 3, 255, 10, 65, 66]);
  let w = await d.op({ op: "write_file", path: "deep/er/f.bin", data: data.toString("base64"), mode: 0o640 });
  assert.equal(w.rc, RC.OK, w.err);
  assert.equal(text(await exec(d, ["stat", "-c", "%a %s", "deep/er/f.bin"])), "640 8\n");
  w = await d.op({ op: "write_file", path: `${home}/deep/er/f.bin`, data: b64("new"), mode: 0o755 });
  assert.equal(w.rc, RC.OK, w.err);
  assert.equal(text(await exec(d, ["stat", "-c", "%a %s", "deep/er/f.bin"])), "755 3\n", "write replaces");
  w = await d.op({ op: "write_file", path: "empty", data: "", mode: 0o600 });
  assert.equal(w.rc, RC.OK, w.err);

  await d.op({ op: "write_file", path: "abc.txt", data: b64("0123456789"), mode: 0o644 });
  const page = async (offset, length) => d.op({ op: "read_file", path: "abc.txt", offset, length });
  let p = await page(0, 4);
  assert.equal(unb64(p.data).toString(), "0123");
  assert.equal(p.file_size, 10);
  p = await page(7, 100);
  assert.equal(unb64(p.data).toString(), "789");
  p = await page(10, 5);
  assert.equal(p.rc, RC.OK, "reading at the end is fine");
  assert.equal(p.data, "");
  assert.equal(p.file_size, 10);
  p = await page(50, 5);
  assert.equal(p.rc, RC.OK, "reading past the end is fine");
  assert.equal(p.data, "");
  p = await page(3, 0);
  assert.equal(p.rc, RC.OK);
  assert.equal(p.data, "");
  assert.equal(p.file_size, 10);
  p = await d.op({ op: "read_file", path: "empty", offset: 0, length: 10 });
  assert.equal(p.rc, RC.OK, p.err);
  assert.equal(p.file_size, 0);
  p = await d.op({ op: "read_file", path: "nope.txt", offset: 0, length: 10 });
  assert.equal(p.rc, RC.NOT_FOUND);
  assert.match(p.err, /does not exist/);

  // procfs: envd's file server sees no size there, so cat serves it.
  const pid = text(await exec(d, ["sh", "-c", "sleep 5 >/dev/null 2>&1 & echo $!"])).trim();
  p = await d.op({ op: "read_file", path: `/proc/${pid}/stat`, offset: 0, length: 4096 });
  assert.equal(p.rc, RC.OK, p.err);
  assert.match(unb64(p.data).toString(), new RegExp(`^${pid} \\(sleep\\) `));
  p = await d.op({ op: "read_file", path: "/proc/999999999/stat", offset: 0, length: 10 });
  assert.equal(p.rc, RC.NOT_FOUND, p.err);

  const renew = await d.op({ op: "renew", lifetime: 600 });
  assert.equal(renew.rc, RC.OK, renew.err);
  const info = await fake.info(id);
  assert.ok(new Date(info.endAt) - Date.now() > 500_000, "renew set the lifetime");

  await d.op({ op: "close" });
  let x = await d.op({ op: "destroy", id });
  assert.equal(x.rc, RC.OK, x.err);
  x = await d.op({ op: "destroy", id });
  assert.equal(x.rc, RC.NOT_FOUND, "destroying a destroyed sandbox");
  x = await d.op({ op: "connect", id });
  assert.equal(x.rc, RC.NOT_FOUND);
  x = await d.op({ op: "connect", id: "bad/id" });
  assert.equal(x.rc, RC.INVALID);
});

test("settings.env reaches every process of a new sandbox", async () => {
  const d = await driver({ env: { TB_SANDBOX_WIDE: "everywhere", TB_OVERRIDDEN: "sandbox" } });
  const id = await sandbox(d);
  const r = await exec(d, ["sh", "-c", 'printf "%s %s" "$TB_SANDBOX_WIDE" "$TB_OVERRIDDEN"'], {
    env: ["TB_OVERRIDDEN=request"],
  });
  assert.equal(text(r), "everywhere request", "the request's env overrides the sandbox's");
  await d.op({ op: "close" });
  await d.op({ op: "destroy", id });
});

test("without sandbox_url the envd URL is https://49983-ID.DOMAIN", async () => {
  const d = new Driver({ E2B_API_KEY: fake.apiKey });
  drivers.push(d);
  const init = await d.op({ op: "init", settings: { api_url: fake.apiUrl, domain: "sandboxes.invalid" } });
  assert.equal(init.rc, RC.OK, init.err);
  const id = await sandbox(d);
  const r = await exec(d, ["true"], { timeout_ms: 5000 });
  assert.equal(r.rc, RC.UNAVAILABLE, r.err);
  assert.ok(r.err.includes(`https://49983-${id}.sandboxes.invalid/process.Process/Start`), r.err);
  await d.op({ op: "close" });
  assert.equal((await d.op({ op: "destroy", id })).rc, RC.OK);
});

test("the requests carry what the service expects", async () => {
  const d = await driver();
  await fake.clearRequests();
  const id = await sandbox(d);
  await exec(d, ["true"]);
  await d.op({ op: "read_file", path: "x", offset: 5, length: 10 });
  const reqs = await fake.requests();
  const create = reqs.find((r) => r.plane === "api" && r.method === "POST" && r.url === "/v2/sandboxes");
  assert.ok(create && create.headers["has-x-api-key"], "create sends X-API-Key");
  assert.ok(reqs.find((r) => r.url === `/v2/sandboxes/${id}/connect`), "connect uses the v2 path");
  const start = reqs.find((r) => r.url === "/process.Process/Start");
  assert.equal(start.headers["content-type"], "application/connect+json");
  assert.equal(start.headers["connect-protocol-version"], "1");
  assert.equal(start.headers["e2b-sandbox-id"], id);
  assert.equal(start.headers["e2b-sandbox-port"], "49983");
  assert.ok(Number(start.headers["connect-timeout-ms"]) >= 10000);
  assert.ok(start.headers["has-x-access-token"]);
  const read = reqs.find((r) => r.url.startsWith("/files?path=x"));
  assert.equal(read.headers.range, "bytes=5-14");
  await d.op({ op: "close" });
  await d.op({ op: "destroy", id });
});

test("10 MiB of output, output limits and offsets into a big file", async () => {
  const d = await driver();
  const id = await sandbox(d);
  const big = await exec(d, ["sh", "-c", "head -c 10485760 /dev/zero | tr '\\0' x; echo tail >&2"], { timeout_ms: 60000 });
  assert.equal(big.rc, RC.OK, big.err);
  const out = unb64(big.stdout);
  assert.equal(out.length, 10485760);
  assert.ok(out.every((c) => c === 0x78));
  assert.equal(text(big, "stderr"), "tail\n");
  assert.equal(big.out_truncated, false);

  const cut = await exec(d, ["sh", "-c", "seq 1 2000000"], { output_limit: 1000, timeout_ms: 60000 });
  assert.equal(cut.rc, RC.OK, cut.err);
  assert.equal(unb64(cut.stdout).length, 1000);
  assert.equal(cut.out_truncated, true);
  assert.equal(cut.exit_code, 0, "the rest was read, the command was not blocked");

  await exec(d, ["sh", "-c", "seq -w 0 999999 > big.txt"], { timeout_ms: 60000 });
  const p = await d.op({ op: "read_file", path: "big.txt", offset: 7 * 500000, length: 21 });
  assert.equal(p.rc, RC.OK, p.err);
  assert.equal(unb64(p.data).toString(), "500000\n500001\n500002\n");
  assert.equal(p.file_size, 7000000);
  await d.op({ op: "close" });
  await d.op({ op: "destroy", id });
});

test("a timeout kills the process and says so; cancel stops the op", async () => {
  const d = await driver();
  const id = await sandbox(d);
  const t0 = Date.now();
  const r = await exec(d, ["sh", "-c", "echo $$ > pid; echo started; exec sleep 30"], { timeout_ms: 700 });
  assert.equal(r.rc, RC.OK, r.err);
  assert.equal(r.timed_out, true);
  assert.equal(text(r), "started\n", "output before the timeout is kept");
  assert.ok(Date.now() - t0 < 5000, "the op returned soon after the timeout");
  let pid = text(await exec(d, ["cat", "pid"])).trim();
  let alive = await exec(d, ["kill", "-0", pid]);
  assert.notEqual(alive.exit_code, 0, "the timed-out process is dead");

  const c = await exec(d, ["sh", "-c", "echo $$ > pid2; exec sleep 30"], { cancel_after_ms: 400 });
  assert.equal(c.rc, RC.CANCELLED);
  pid = text(await exec(d, ["cat", "pid2"])).trim();
  alive = await exec(d, ["kill", "-0", pid]);
  assert.notEqual(alive.exit_code, 0, "the cancelled process is dead");
  await d.op({ op: "close" });
  await d.op({ op: "destroy", id });
});

test("a cancel or a deadline before envd's start event still kills the process (it waits for its pid)", async () => {
  const d = await driver();
  const id = await sandbox(d);
  // envd started the process; its start event (the pid) is 1.5 s away.
  await fake.faults({ start_delay_ms: 1500 });
  try {
    const c = await exec(d, ["sh", "-c", "echo $$ > pid3; exec sleep 30"], { cancel_after_ms: 200 });
    assert.equal(c.rc, RC.CANCELLED, c.err);
    const t = await exec(d, ["sh", "-c", "echo $$ > pid4; exec sleep 30"], { timeout_ms: 300 });
    assert.equal(t.rc, RC.OK, t.err);
    assert.equal(t.timed_out, true);
  } finally {
    await fake.faults({});
  }
  for (const f of ["pid3", "pid4"]) {
    const pid = text(await exec(d, ["cat", f])).trim();
    assert.match(pid, /^[0-9]+$/);
    const alive = await exec(d, ["kill", "-0", pid]);
    assert.notEqual(alive.exit_code, 0, `the process of ${f} is dead`);
  }
  await d.op({ op: "close" });
  await d.op({ op: "destroy", id });
});

test("until_newline returns with stdout's first line and leaves the command to run", async () => {
  const d = await driver();
  const id = await sandbox(d);
  // The line comes in two pieces; the command goes on after it.
  const r = await exec(d, ["sh", "-c", "printf ans; sleep 0.2; echo $$ > pid; echo wer; exec sleep 30"], {
    timeout_ms: 60000,
    until_newline: true,
  });
  assert.equal(r.rc, RC.OK, r.err);
  assert.equal(text(r), "answer\n");
  assert.equal(r.exit_code, -1, "the command's end was not waited for");
  const pid = text(await exec(d, ["cat", "pid"])).trim();
  assert.equal((await exec(d, ["kill", "-0", pid])).exit_code, 0, "the command was left running");
  await exec(d, ["kill", pid]);
  // Without it, the same kind of command is waited for to its end.
  const w = await exec(d, ["sh", "-c", "echo one; echo two; exit 3"], { until_newline: false });
  assert.equal(w.rc, RC.OK, w.err);
  assert.deepEqual([text(w), w.exit_code], ["one\ntwo\n", 3]);
  await d.op({ op: "close" });
  await d.op({ op: "destroy", id });
});

test("a paused sandbox is resumed through connect", async () => {
  // Without connection reuse an op finds the sandbox paused; connect
  // resumes it.
  const d = await driver({ connection_reuse: 0 });
  const id = await sandbox(d);
  await exec(d, ["sh", "-c", "echo kept > state.txt"]);
  assert.equal(await fake.pause(id), 204);
  const r = await exec(d, ["true"]);
  assert.equal(r.rc, RC.GONE, "envd is unreachable while paused");
  await d.op({ op: "close" });
  const k = await d.op({ op: "connect", id });
  assert.equal(k.rc, RC.OK, k.err);
  await d.stderrMatching(/resumed/); // the resume is logged
  assert.equal(text(await exec(d, ["cat", "state.txt"])), "kept\n");
  assert.equal((await fake.info(id)).state, "running");
  await d.op({ op: "close" });
  await d.op({ op: "destroy", id });
});

test("a sandbox gone behind our back is GONE on envd, NOT_FOUND on the API", async () => {
  const d = await driver();
  const id = await sandbox(d);
  await fake.vanish(id);
  const r = await exec(d, ["true"]);
  assert.equal(r.rc, RC.GONE);
  assert.match(r.err, /502.*not found/);
  const p = await d.op({ op: "read_file", path: "x", offset: 0, length: 1 });
  assert.equal(p.rc, RC.GONE);
  const w = await d.op({ op: "write_file", path: "x", data: b64("x"), mode: 0o644 });
  assert.equal(w.rc, RC.GONE);
  await d.op({ op: "close" });
  assert.equal((await d.op({ op: "connect", id })).rc, RC.NOT_FOUND);
  assert.equal((await d.op({ op: "destroy", id })).rc, RC.NOT_FOUND);
});

test("a wrong or missing API key is AUTH and never echoed", async () => {
  const wrongKey = "e2b_" + "5".repeat(40);
  let d = await driver({ api_key_env: "TB_TEST_WRONG_KEY" }, { TB_TEST_WRONG_KEY: wrongKey });
  await fake.faults({ echo_key: true }); // the fake quotes the key it got
  try {
    const r = await d.op({ op: "create" });
    assert.equal(r.rc, RC.AUTH);
    assert.match(r.err, /HTTP 401: Invalid API key/);
    assert.ok(!r.err.includes(wrongKey), "the key is scrubbed from the service's message");
    assert.ok(!r.err.includes(wrongKey.slice(0, 20)));
    assert.ok(!d.stderr.includes(wrongKey));
    assert.equal((await d.op({ op: "connect", id: "ianything" })).rc, RC.AUTH);
  } finally {
    await fake.faults({});
  }
  d = await driver({ api_key_env: "TB_TEST_UNSET_KEY" }, { TB_TEST_UNSET_KEY: "" });
  const r = await d.op({ op: "create" });
  assert.equal(r.rc, RC.AUTH);
  assert.match(r.err, /TB_TEST_UNSET_KEY/, "the message names the variable");
});

test("a rate limit is waited out as Retry-After says, within bounds", async () => {
  const d = await driver();
  await fake.rateLimit(2, 1);
  const t0 = Date.now();
  const c = await d.op({ op: "create" });
  assert.equal(c.rc, RC.OK, c.err);
  assert.ok(Date.now() - t0 >= 1900, "it waited Retry-After before each retry");
  await d.stderrMatching(/rate limited; retrying in 1 s/);

  await fake.rateLimit(1, 3600);
  const r = await d.op({ op: "connect", id: c.id });
  assert.equal(r.rc, RC.RATE_LIMITED, "a wait too long is not waited");
  assert.match(r.err, /429.*retry after 3600/);

  await fake.rateLimit(10, 0);
  const many = await d.op({ op: "destroy", id: c.id });
  assert.equal(many.rc, RC.RATE_LIMITED, "retries are bounded");
  await fake.rateLimit(0, 0);
  assert.equal((await d.op({ op: "destroy", id: c.id })).rc, RC.OK);
});

test("a control-plane request that takes too long is TIMEOUT", async () => {
  const d = await driver({ request_timeout: 1 });
  await fake.faults({ delay_ms: 3000 });
  try {
    const t0 = Date.now();
    const r = await d.op({ op: "create" });
    assert.equal(r.rc, RC.TIMEOUT, r.err);
    assert.ok(Date.now() - t0 < 2500);
  } finally {
    await fake.faults({});
  }
});

// ---- read_files, and connecting once per connection_reuse window ----

const connects = async (id) =>
  (await fake.requests()).filter((r) => r.plane === "api" && r.url === `/v2/sandboxes/${id}/connect`).length;
const envdGets = async () => (await fake.requests()).filter((r) => r.plane === "envd" && r.url.startsWith("/files?"));

test("read_files reads several files, windows and a missing one in one batch", async () => {
  const d = await driver();
  const id = await sandbox(d);
  await d.op({ op: "write_file", path: "a.txt", data: b64("0123456789"), mode: 0o644 });
  await d.op({ op: "write_file", path: "dir/b.txt", data: b64("hello"), mode: 0o644 });
  await d.op({ op: "write_file", path: "empty", data: "", mode: 0o644 });
  const home = text(await exec(d, ["pwd"])).trim();
  const pid = text(await exec(d, ["sh", "-c", "sleep 5 >/dev/null 2>&1 & echo $!"])).trim();
  const r = await d.op({
    op: "read_files",
    items: [
      { path: "a.txt", offset: 2, length: 3 },
      { path: `${home}/dir/b.txt`, offset: 0, length: 100 },
      { path: "missing.txt", offset: 0, length: 10 },
      { path: "a.txt", offset: 10, length: 5 },
      { path: "a.txt", offset: 50, length: 5 },
      { path: "a.txt", offset: 4, length: 0 },
      { path: "empty", offset: 0, length: 10 },
      { path: `/proc/${pid}/stat`, offset: 0, length: 4096 },
      { path: "/proc/999999999/stat", offset: 0, length: 10 },
    ],
  });
  assert.equal(r.rc, RC.OK, r.err);
  const [win, whole, missing, atEnd, pastEnd, zero, empty, stat, noProc] = r.items;
  assert.deepEqual([win.status, unb64(win.data).toString(), win.file_size], [RC.OK, "234", 10]);
  assert.deepEqual([whole.status, unb64(whole.data).toString(), whole.file_size], [RC.OK, "hello", 5]);
  assert.equal(missing.status, RC.NOT_FOUND);
  assert.equal(missing.data, "");
  assert.deepEqual([atEnd.status, atEnd.data, atEnd.file_size], [RC.OK, "", 10]);
  assert.deepEqual([pastEnd.status, pastEnd.data], [RC.OK, ""]);
  assert.deepEqual([zero.status, zero.data, zero.file_size], [RC.OK, "", 10]);
  assert.deepEqual([empty.status, empty.data, empty.file_size], [RC.OK, "", 0]);
  assert.equal(stat.status, RC.OK);
  assert.match(unb64(stat.data).toString(), new RegExp(`^${pid} \\(sleep\\) `), "procfs items are read with cat");
  assert.equal(noProc.status, RC.NOT_FOUND);

  // The same answers as read_file, item by item.
  for (const [i, item] of [[0, { path: "a.txt", offset: 2, length: 3 }], [2, { path: "missing.txt", offset: 0, length: 10 }]]) {
    const one = await d.op({ op: "read_file", ...item });
    assert.equal(one.rc, r.items[i].status);
    assert.equal(one.data, r.items[i].data);
  }
  // An item that is not OK or NOT_FOUND fails the batch, naming its path.
  const bad = await d.op({ op: "read_files", items: [{ path: "a.txt", offset: 0, length: 1 }, { path: "dir", offset: 0, length: 1 }] });
  assert.equal(bad.rc, RC.INVALID, bad.err);
  assert.match(bad.err, /read_files dir: .*is a directory/);
  const none = await d.op({ op: "read_files", items: [] });
  assert.equal(none.rc, RC.OK, none.err);
  await d.op({ op: "close" });
  await d.op({ op: "destroy", id });
});

test("read_files sends its GETs at once: a batch costs about one round trip", async () => {
  const d = await driver();
  const id = await sandbox(d);
  const names = Array.from({ length: 40 }, (_, i) => `f${i}.txt`);
  await exec(d, ["sh", "-c", 'for n in "$@"; do printf "%s" "$n" > "$n"; done', "sh", ...names]);
  await fake.clearRequests();
  const items = names.map((path) => ({ path, offset: 1, length: 100 }));
  let r = await d.op({ op: "read_files", items });
  assert.equal(r.rc, RC.OK, r.err);
  r.items.forEach((it, i) => {
    assert.equal(it.status, RC.OK);
    assert.equal(unb64(it.data).toString(), names[i].slice(1));
    assert.equal(it.file_size, names[i].length);
  });
  const gets = await envdGets();
  assert.equal(gets.length, 40, "one GET per item");
  gets.forEach((g) => assert.equal(g.headers.range, "bytes=1-100"));

  // With 300 ms added to every request, 8 reads one after another would
  // take 2.4 s; together they take about one 300 ms round trip.
  await fake.setLatency(300);
  try {
    const t0 = Date.now();
    r = await d.op({ op: "read_files", items: items.slice(0, 8) });
    const took = Date.now() - t0;
    assert.equal(r.rc, RC.OK, r.err);
    assert.ok(took < 1200, `the batch took ${took} ms`);
  } finally {
    await fake.setLatency(0);
  }
  await d.op({ op: "close" });
  await d.op({ op: "destroy", id });
});

test("a connect within connection_reuse seconds asks the API nothing", async () => {
  const d = await driver();
  const id = await sandbox(d);
  await d.op({ op: "close" });
  await fake.clearRequests();
  for (let i = 0; i < 3; i++) {
    assert.equal((await d.op({ op: "connect", id })).rc, RC.OK);
    const r = await exec(d, ["true"]);
    assert.equal(r.rc, RC.OK, r.err);
    await d.op({ op: "close" });
  }
  assert.equal(await connects(id), 0, "no control-plane connect");
  const api = (await fake.requests()).filter((r) => r.plane === "api" && !r.url.startsWith("/_fake/"));
  assert.deepEqual(api, [], "no control-plane request at all");

  // Off: every connect asks.
  const off = await driver({ connection_reuse: 0 });
  await fake.clearRequests();
  for (let i = 0; i < 2; i++) {
    assert.equal((await off.op({ op: "connect", id })).rc, RC.OK);
    await off.op({ op: "close" });
  }
  assert.equal(await connects(id), 2);

  // An entry ages out after connection_reuse seconds.
  const short = await driver({ connection_reuse: 2 });
  await fake.clearRequests();
  assert.equal((await short.op({ op: "connect", id })).rc, RC.OK);
  await short.op({ op: "close" });
  assert.equal((await short.op({ op: "connect", id })).rc, RC.OK);
  await short.op({ op: "close" });
  assert.equal(await connects(id), 1, "within the window: cached");
  await new Promise((r) => setTimeout(r, 2100));
  assert.equal((await short.op({ op: "connect", id })).rc, RC.OK);
  await short.op({ op: "close" });
  assert.equal(await connects(id), 2, "after it: asked again");
  assert.equal((await d.op({ op: "destroy", id })).rc, RC.OK);
});

test("a sandbox paused behind the cache's back is resumed by one retry through connect", async () => {
  const d = await driver();
  const id = await sandbox(d);
  await exec(d, ["sh", "-c", "echo kept > state.txt"]);
  await d.op({ op: "close" });
  assert.equal(await fake.pause(id), 204);
  await fake.clearRequests();
  assert.equal((await d.op({ op: "connect", id })).rc, RC.OK, "connect trusts its cache");
  assert.equal(await connects(id), 0);
  const r = await exec(d, ["cat", "state.txt"]);
  assert.equal(r.rc, RC.OK, r.err);
  assert.equal(text(r), "kept\n");
  assert.equal(await connects(id), 1, "one connect resumed it");
  assert.equal((await fake.info(id)).state, "running");
  await d.stderrMatching(/resumed from pause/);
  const starts = (await fake.requests()).filter((q) => q.url === "/process.Process/Start");
  assert.equal(starts.length, 2, "the op ran once more, no more");

  // The same for a batch, and for a write.
  await d.op({ op: "close" });
  assert.equal(await fake.pause(id), 204);
  assert.equal((await d.op({ op: "connect", id })).rc, RC.OK);
  const b = await d.op({ op: "read_files", items: [{ path: "state.txt", offset: 0, length: 10 }, { path: "nope", offset: 0, length: 1 }] });
  assert.equal(b.rc, RC.OK, b.err);
  assert.equal(unb64(b.items[0].data).toString(), "kept\n");
  assert.equal(b.items[1].status, RC.NOT_FOUND);
  assert.equal(await fake.pause(id), 204);
  const w = await d.op({ op: "write_file", path: "w.txt", data: b64("w"), mode: 0o600 });
  assert.equal(w.rc, RC.OK, w.err);
  assert.equal(await connects(id), 3);
  await d.op({ op: "close" });
  await d.op({ op: "destroy", id });
});

test("a sandbox killed behind the cache's back is GONE, and connect then NOT_FOUND", async () => {
  const d = await driver();
  const id = await sandbox(d);
  await d.op({ op: "close" });
  await fake.vanish(id);
  assert.equal((await d.op({ op: "connect", id })).rc, RC.OK, "connect trusts its cache");
  await fake.clearRequests();
  const r = await d.op({ op: "read_files", items: [{ path: "x", offset: 0, length: 1 }] });
  assert.equal(r.rc, RC.GONE, r.err);
  assert.match(r.err, /read_files x: .*502/);
  assert.equal(await connects(id), 1, "it asked the API once");
  const e = await exec(d, ["true"]);
  assert.equal(e.rc, RC.GONE, e.err);
  await d.op({ op: "close" });
  assert.equal((await d.op({ op: "connect", id })).rc, RC.NOT_FOUND, "no entry is left behind");
});

test("destroy drops what connect learnt", async () => {
  const d = await driver();
  const id = await sandbox(d);
  await d.op({ op: "close" });
  assert.equal((await d.op({ op: "destroy", id })).rc, RC.OK);
  assert.equal((await d.op({ op: "connect", id })).rc, RC.NOT_FOUND);
});

test("a rejected access token leads to one connect and one retry", async () => {
  const d = await driver();
  const id = await sandbox(d);
  await d.op({ op: "write_file", path: "t.txt", data: b64("tok"), mode: 0o644 });
  await d.op({ op: "close" });
  await fake.token(id, { rotate: true });
  assert.equal((await d.op({ op: "connect", id })).rc, RC.OK);
  await fake.clearRequests();
  const r = await d.op({ op: "read_file", path: "t.txt", offset: 0, length: 10 });
  assert.equal(r.rc, RC.OK, r.err);
  assert.equal(unb64(r.data).toString(), "tok");
  assert.equal(await connects(id), 1);
  assert.equal((await envdGets()).length, 2);

  // A token refused again after the new connect is reported, not retried
  // on and on.
  await fake.token(id, { reject: true });
  await fake.clearRequests();
  const again = await d.op({ op: "read_file", path: "t.txt", offset: 0, length: 10 });
  assert.equal(again.rc, RC.AUTH, again.err);
  assert.match(again.err, /401/);
  assert.equal(await connects(id), 1, "one connect");
  assert.equal((await envdGets()).length, 2, "one retry");
  await fake.token(id, { reject: false });
  await d.op({ op: "close" });
  await d.op({ op: "destroy", id });
});
