// The k8s plugin against an apiserver whose pods/exec speaks only
// v4.channel.k8s.io (the fake with --exec-protocols v4.channel.k8s.io: an
// apiserver before 1.30, or with TranslateStreamCloseWebsocketRequests off,
// proxying the WebSocket to the kubelet's legacy stream server). v4 has no
// CLOSE on channel 255, so stdin never ends before the connection does,
// and the connection is closed right after the close frame that follows
// the Status on channel 3. The plugin offers v5 then v4 and must work on
// v4 alone: exit codes and both streams, timeouts, write_file (its stdin
// ended by its length, not by EOF) and read_file, then the real server's
// tools, tasks and an interactive task's writes (whose stdin the
// supervisor holds, not the exec).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { connect } from "node:tls";
import { callTool, startServer, writeConfig } from "../lib/client.mjs";
import { pluginPath } from "./fake.mjs";
import { exec, k8sHarness, sleep, text } from "./harness.mjs";
import { RC, unb64 } from "./plugin-driver.mjs";

const V4 = "v4.channel.k8s.io";
// Started here, before the tests are declared: without it they skip.
const { fake, skip, driver, sandbox } = await k8sHarness({ args: ["--exec-protocols", V4] });

// Every exec since the log was cleared was upgraded, and to v4.
async function allExecsV4(what) {
  const execs = (await fake.log()).filter((e) => e.path.endsWith("/exec"));
  assert.ok(execs.length > 0, `${what}: no exec reached the fake`);
  for (const e of execs) assert.equal(e.subprotocol, V4, `${what}: ${JSON.stringify(e)}`);
}

// A bare WebSocket exec client (kubectl 1.30+ offers only v5, so it cannot
// judge the fake's v4): offers what the plugin offers, and collects the
// channel messages, the close frame and when the server hung up.
async function rawExec(pod, argv, { stdin = false } = {}) {
  const q = ["container=main", "stdout=true", "stderr=true", ...(stdin ? ["stdin=true"] : []),
    ...argv.map((a) => `command=${encodeURIComponent(a)}`)].join("&");
  const info = fake.info;
  const sock = connect({ host: "127.0.0.1", port: info.port, ca: readFileSync(info.ca),
    cert: readFileSync(info.client_cert), key: readFileSync(info.client_key), ALPNProtocols: ["http/1.1"] });
  const ev = { head: null, messages: [], closeFrame: false, ended: false };
  let buf = Buffer.alloc(0);
  let headSeen;
  const head = new Promise((resolve) => (headSeen = resolve));
  sock.on("data", (d) => {
    buf = Buffer.concat([buf, d]);
    if (!ev.head) {
      const i = buf.indexOf("\r\n\r\n");
      if (i < 0) return;
      ev.head = buf.subarray(0, i).toString();
      buf = buf.subarray(i + 4);
      headSeen();
    }
    for (;;) {
      if (buf.length < 2) return;
      let n = buf[1] & 0x7f;
      let off = 2;
      if (n === 126) {
        if (buf.length < 4) return;
        n = buf.readUInt16BE(2);
        off = 4;
      } else if (n === 127) {
        if (buf.length < 10) return;
        n = Number(buf.readBigUInt64BE(2));
        off = 10;
      }
      if (buf.length < off + n) return;
      const op = buf[0] & 0x0f;
      const payload = buf.subarray(off, off + n);
      buf = buf.subarray(off + n);
      if (op === 8) ev.closeFrame = true;
      else if (op === 2) ev.messages.push({ ch: payload[0], data: payload.subarray(1).toString() });
    }
  });
  sock.on("end", () => (ev.ended = true));
  sock.on("error", () => {});
  await new Promise((resolve) => sock.once("secureConnect", resolve));
  sock.write(`GET /api/v1/namespaces/default/pods/${pod}/exec?${q} HTTP/1.1\r\nHost: 127.0.0.1:${info.port}\r\n` +
    `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n` +
    `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n` +
    `Sec-WebSocket-Protocol: v5.channel.k8s.io, v4.channel.k8s.io\r\n\r\n`);
  await head;
  // One masked client frame (a binary message, or a close).
  const send = (op, payload) => {
    const mask = randomBytes(4);
    const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]));
    sock.write(Buffer.concat([Buffer.from([0x80 | op, 0x80 | payload.length]), mask, masked]));
  };
  return {
    ev,
    status: () => ev.messages.filter((m) => m.ch === 3).map((m) => m.data).join(""),
    stdout: () => ev.messages.filter((m) => m.ch === 1).map((m) => m.data).join(""),
    send: (ch, text) => send(2, [ch, ...Buffer.from(text)]),
    close: () => send(8, [3, 232]),
    destroy: () => sock.destroy(),
  };
}

test("the fake's v4 itself: CLOSE on channel 255 is ignored, the server hangs up after its close frame",
  { skip: skip(), timeout: 60000 }, async () => {
    const pod = "raw-v4";
    const made = await fake.call("POST", "/api/v1/namespaces/default/pods", {
      apiVersion: "v1", kind: "Pod", metadata: { name: pod },
      spec: { containers: [{ name: "main", image: "busybox" }] },
    });
    assert.equal(made.status, 201, made.text);
    try {
      // v4 chosen from "v5, v4"; stdin written, then the v5 CLOSE of stdin:
      // wc keeps waiting, as on a kubelet's legacy server.
      const a = await rawExec(pod, ["wc", "-c"], { stdin: true });
      assert.match(a.ev.head, /^HTTP\/1\.1 101 /);
      assert.match(a.ev.head, /\r\nSec-WebSocket-Protocol: v4\.channel\.k8s\.io(\r\n|$)/i);
      a.send(0, "abc");
      a.send(255, "\u0000");
      await sleep(1500);
      assert.equal(a.status(), "", "no Status: stdin did not end on CLOSE");
      assert.equal(a.ev.ended, false);
      a.close();
      a.destroy();

      // The Status on channel 3, its close frame, and the connection ended
      // without waiting for the client's close.
      const b = await rawExec(pod, ["sh", "-c", "echo hi; exit 3"]);
      for (let i = 0; i < 100 && !b.ev.ended; i++) await sleep(50);
      assert.equal(b.ev.ended, true, "the server hung up by itself");
      assert.equal(b.ev.closeFrame, true);
      assert.equal(b.ev.messages[0].ch, 1, "the first message is the empty one on stdout");
      assert.equal(b.ev.messages[0].data, "");
      assert.equal(b.stdout(), "hi\n");
      const st = JSON.parse(b.status());
      assert.equal(st.reason, "NonZeroExitCode");
      assert.deepEqual(st.details.causes, [{ reason: "ExitCode", message: "3" }]);
      b.destroy();
    } finally {
      await fake.call("DELETE", `/api/v1/namespaces/default/pods/${pod}`);
    }
  });

test("op by op over v4: exit codes, streams apart, timeouts, files", { skip: skip(), timeout: 120000 }, async () => {
  await fake.clearLog();
  const d = await driver();
  const c = { id: await sandbox(d) };

  let r = await exec(d, ["sh", "-c", "echo out; echo err >&2; exit 7"]);
  assert.equal(r.rc, RC.OK, r.err);
  assert.equal(r.exit_code, 7);
  assert.equal(text(r), "out\n");
  assert.equal(text(r, "stderr"), "err\n");
  r = await exec(d, ["pwd"]);
  assert.equal(r.exit_code, 0);
  assert.equal(text(r), "/workspace\n");
  assert.equal((await exec(d, ["no-such-command-here"])).exit_code, 127);
  assert.equal((await exec(d, ["sh", "-c", "kill -TERM $$"])).exit_code, 128 + 15);
  // The tail is never lost, although the server hangs up at once.
  r = await exec(d, ["seq", "1", "100000"], { output_limit: 0 });
  assert.equal(r.rc, RC.OK, r.err);
  const lines = text(r).split("\n");
  assert.equal(lines.length, 100001);
  assert.equal(lines[99999], "100000");
  const t0 = Date.now();
  const slow = await exec(d, ["sh", "-c", "sleep 30 & sleep 30"], { timeout_ms: 1000 });
  assert.equal(slow.rc, RC.OK, slow.err);
  assert.equal(slow.timed_out, true);
  assert.ok(Date.now() - t0 < 15000, "the timeout's kill went through a second v4 exec");
  // until_newline: the op returns with stdout's first line (it came in two
  // pieces) and leaves the command to run.
  r = await exec(d, ["sh", "-c", "printf ans; sleep 0.2; echo $$ > pid; echo wer; exec sleep 30"], {
    timeout_ms: 60000,
    until_newline: true,
  });
  assert.equal(r.rc, RC.OK, r.err);
  assert.equal(text(r), "answer\n");
  assert.equal(r.exit_code, -1, "the command's end was not waited for");
  assert.equal(text(await exec(d, ["sh", "-c", "kill -0 $(cat pid) && kill $(cat pid) && echo ran"])), "ran\n");

  // write_file sends its bytes on channel 0 and no CLOSE: the script reads
  // exactly their length, so it ends without EOF.
  const bytes = Buffer.from([...Array(256).keys(), 0, 10, 13, 255]);
  let w = await d.op({ op: "write_file", path: "dir/all.bin", data: bytes.toString("base64"), mode: 0o640 });
  assert.equal(w.rc, RC.OK, w.err);
  let p = await d.op({ op: "read_file", path: "dir/all.bin", offset: 0, length: 1000 });
  assert.equal(p.rc, RC.OK, p.err);
  assert.deepEqual(unb64(p.data), bytes);
  assert.equal(p.file_size, bytes.length);
  assert.equal(text(await exec(d, ["stat", "-c", "%a %s", "dir/all.bin"])), `640 ${bytes.length}\n`);
  w = await d.op({ op: "write_file", path: "empty", data: "", mode: 0o600 });
  assert.equal(w.rc, RC.OK, w.err);
  p = await d.op({ op: "read_file", path: "empty", offset: 0, length: 10 });
  assert.equal(p.rc, RC.OK, p.err);
  assert.equal(p.file_size, 0);
  const big = Buffer.alloc(2 * 1024 * 1024 + 3);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 255;
  w = await d.op({ op: "write_file", path: "big.bin", data: big.toString("base64"), mode: 0o600 });
  assert.equal(w.rc, RC.OK, w.err);
  p = await d.op({ op: "read_file", path: "big.bin", offset: 1000000, length: 4096 });
  assert.deepEqual(unb64(p.data), big.subarray(1000000, 1004096));
  assert.equal(p.file_size, big.length);
  const sum = await exec(d, ["sh", "-c", "md5sum big.bin | cut -d' ' -f1"]);
  assert.equal(text(sum).trim(), createHash("md5").update(big).digest("hex"));
  // A write that fails in the pod fails clearly, and at once.
  const t1 = Date.now();
  w = await d.op({ op: "write_file", path: "dir/all.bin/under-a-file", data: "eA==", mode: 0o600 });
  assert.equal(w.rc, RC.IO, w.err);
  assert.match(w.err, /under-a-file/);
  assert.ok(Date.now() - t1 < 15000, "no wait for an EOF that v4 cannot send");
  const batch = await d.op({ op: "read_files", items: [
    { path: "dir/all.bin", offset: 256, length: 4 },
    { path: "nope", offset: 0, length: 1 },
  ] });
  assert.equal(batch.rc, RC.OK, batch.err);
  assert.deepEqual(batch.items.map((i) => i.status), [RC.OK, RC.NOT_FOUND]);
  assert.deepEqual([...unb64(batch.items[0].data)], [0, 10, 13, 255]);

  assert.equal((await d.op({ op: "close" })).rc, RC.OK);
  assert.equal((await d.op({ op: "destroy", id: c.id })).rc, RC.OK);
  await allExecsV4("the driver's execs");
});

test("the taskbox server over v4: run_command, files, tasks, an interactive task", { skip: skip(), timeout: 180000 },
  async () => {
    await fake.clearLog();
    const config = writeConfig(fake.dir, {
      default: "kube",
      providers: { kube: { plugin: "k8s", settings: { kubeconfig: fake.kubeconfig } } },
    });
    const s = await startServer({ args: ["--config", config], env: { TASKBOX_PLUGIN_PATH: pluginPath() } });
    try {
      const call = async (name, args) => {
        const r = await callTool(s.client, name, args);
        const data = r.structuredContent || JSON.parse(r.content[0].text);
        assert.ok(!r.isError, `${name}: ${r.content?.[0]?.text}`);
        return data;
      };
      const sb = (await call("create_sandbox", { timeout: 600 })).sandbox_id;
      const r = await call("run_command", { sandbox_id: sb, command: "echo hi; echo err >&2; exit 4" });
      assert.equal(r.exit_code, 4);
      assert.equal(r.stdout, "hi\n");
      assert.equal(r.stderr, "err\n");
      assert.equal(r.timed_out, false);
      assert.equal((await call("run_command", { sandbox_id: sb, command: "true" })).exit_code, 0);

      await call("write_file", { sandbox_id: sb, path: "dir/hello.txt", content: "héllo\n" });
      const f = await call("read_file", { sandbox_id: sb, path: "dir/hello.txt" });
      assert.equal(f.content, "héllo\n");
      assert.equal(f.size, 7);
      const bytes = Buffer.from([0, 1, 2, 250, 255, 10]);
      const content = bytes.toString("base64");
      await call("write_file", { sandbox_id: sb, path: "bin.dat", content, encoding: "base64" });
      const b = await call("read_file", { sandbox_id: sb, path: "bin.dat", encoding: "base64" });
      assert.deepEqual(Buffer.from(b.content, "base64"), bytes);

      // A task, followed with get_task's wait until it ends.
      const t = await call("start_task",
        { sandbox_id: sb, command: "for i in 1 2 3; do echo line $i; sleep 0.3; done; exit 2" });
      let g;
      for (let i = 0; i < 30; i++) {
        g = await call("get_task", { sandbox_id: sb, task_id: t.task_id, wait: 10 });
        if (g.state !== "running") break;
      }
      assert.equal(g.state, "failed", JSON.stringify(g));
      assert.equal(g.exit_code, 2);
      assert.equal(g.stdout, "line 1\nline 2\nline 3\n");

      // cancel_task ends a long one.
      const long = await call("start_task", { sandbox_id: sb, command: "sleep 300" });
      const c = await call("cancel_task", { sandbox_id: sb, task_id: long.task_id });
      assert.equal(c.state, "cancelled", JSON.stringify(c));

      // An interactive task: written twice, then eof; the supervisor holds
      // its stdin, so v4's missing CLOSE is no matter.
      const it = await call("start_task", { sandbox_id: sb, command: "wc -l", stdin: "pipe" });
      assert.equal((await call("write_task", { sandbox_id: sb, task_id: it.task_id, data: "one\ntwo\n" })).written, 8);
      const last = await call("write_task", { sandbox_id: sb, task_id: it.task_id, data: "three\n", eof: true });
      assert.equal(last.written, 6);
      assert.equal(last.eof, true);
      for (let i = 0; i < 30; i++) {
        g = await call("get_task", { sandbox_id: sb, task_id: it.task_id, wait: 10 });
        if (g.state !== "running") break;
        await sleep(100);
      }
      assert.equal(g.state, "succeeded", JSON.stringify(g));
      assert.equal(g.stdout.trim(), "3");

      await call("kill_sandbox", { sandbox_id: sb });
    } finally {
      await s.close();
    }
    await allExecsV4("the server's execs");
  });
