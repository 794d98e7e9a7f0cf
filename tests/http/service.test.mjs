// taskbox under a service manager, with the real binary: a listening
// socket handed over by systemd-socket-activate (the LISTEN_FDS protocol)
// is served, neither the variables nor the descriptor reach a command;
// readiness (READY=1) and stopping (STOPPING=1) reach NOTIFY_SOCKET; the
// systemd credential http-tokens guards the port; a handover taskbox
// cannot serve is refused with a clear error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { scratchDir, taskboxCommand } from "../lib/client.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function which(cmd) {
  try {
    return execFileSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" }).trim();
  } catch {
    return null;
  }
}
const activate = which("systemd-socket-activate");

async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

// Runs `systemd-socket-activate -l 127.0.0.1:PORT [more] env ... taskbox
// serve`; taskbox starts at the first connection. systemd-socket-activate
// passes on no variable but its own, so env (an exec: the pid stays the
// one LISTEN_PID names) sets the test's.
async function activated({ env: extra = {}, more = [] } = {}) {
  const dir = scratchDir("taskbox-service-");
  const config = join(dir, "config.json");
  writeFileSync(config, JSON.stringify({ default: "local", providers: { local: { plugin: "local", settings: {} } } }));
  const port = await freePort();
  const env = { ...process.env, XDG_STATE_HOME: join(dir, "state"), ...extra };
  delete env.TASKBOX_HTTP_TOKEN;
  const { command, args } = taskboxCommand(["serve", "--config", config, "--test-tools"]);
  const passed = /^(TASKBOX_|ASAN_|UBSAN_|LSAN_|PATH$|HOME$|TMPDIR$|XDG_STATE_HOME$|NOTIFY_SOCKET$|CREDENTIALS_DIRECTORY$)/;
  const vars = Object.entries(env).filter(([k]) => passed.test(k)).map(([k, v]) => `${k}=${v}`);
  const child = spawn(activate, ["-l", `127.0.0.1:${port}`, ...more, "env", ...vars, command, ...args],
    { env, stdio: ["ignore", "inherit", "pipe"] });
  let log = "";
  child.stderr.on("data", (d) => {
    process.stderr.write(d);
    log += d;
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  for (let i = 0; i < 400 && !log.includes("Listening on"); i++) await sleep(50);
  return { dir, port, child, exited, base: `http://127.0.0.1:${port}`, get log() { return log; } };
}

async function rpc(s, body, { sid, token } = {}) {
  return fetch(`${s.base}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(sid ? { "mcp-session-id": sid } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

const init = { jsonrpc: "2.0", id: 0, method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "service-test", version: "1" } } };

// Runs one command in a fresh sandbox over a session; returns its stdout.
async function runCommand(s, command, token) {
  const r = await rpc(s, init, { token });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  const sid = r.headers.get("mcp-session-id");
  const call = (id, name, args) => rpc(s, { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
    { sid, token }).then((x) => x.json());
  const created = await call(1, "create_sandbox", {});
  const { sandbox_id } = JSON.parse(created.result.content[0].text);
  const ran = await call(2, "run_command", { sandbox_id, command });
  return JSON.parse(ran.result.content[0].text).stdout;
}

async function stop(s) {
  s.child.kill("SIGTERM");
  return s.exited;
}

test("a socket handed over by systemd-socket-activate is served, and kept from commands", { skip: !activate && "no systemd-socket-activate" }, async () => {
  const s = await activated();
  try {
    const health = await fetch(`${s.base}/healthz`);
    assert.equal(health.status, 200);
    const line = new RegExp(`listening on http://127\\.0\\.0\\.1:${s.port}/mcp`);
    for (let i = 0; i < 400 && !line.test(s.log); i++) await sleep(50);
    assert.match(s.log, line);
    const out = await runCommand(s, "env | grep -c '^LISTEN_'; readlink /proc/$$/fd/3 || echo closed");
    const [count, fd3] = out.trim().split("\n");
    assert.equal(count.trim(), "0", `LISTEN_ variables reached a command: ${out}`);
    assert.doesNotMatch(fd3, /^socket:/, `the listening socket reached a command as descriptor 3: ${out}`);
  } finally {
    const e = await stop(s);
    assert.equal(e.code, 0, `exit after SIGTERM: ${e.signal || e.code}`);
  }
});

test("READY=1 once serving and STOPPING=1 at SIGTERM reach NOTIFY_SOCKET", { skip: !activate && "no systemd-socket-activate" }, async () => {
  const dir = scratchDir("taskbox-notify-");
  const sock = join(dir, "notify.sock");
  // A datagram socket, as systemd's: python3 prints each message.
  const listener = spawn("python3", ["-c", `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound", flush=True)
while True:
    print(s.recv(4096).decode(), flush=True)
`, sock], { stdio: ["ignore", "pipe", "inherit"] });
  let heard = "";
  listener.stdout.on("data", (d) => (heard += d));
  for (let i = 0; i < 400 && !heard.includes("bound"); i++) await sleep(50);
  const s = await activated({ env: { NOTIFY_SOCKET: sock } });
  try {
    assert.equal((await fetch(`${s.base}/healthz`)).status, 200);
    for (let i = 0; i < 400 && !heard.includes("READY=1"); i++) await sleep(50);
    assert.match(heard, /READY=1/);
    assert.doesNotMatch(heard, /STOPPING=1/);
    const e = await stop(s);
    assert.equal(e.code, 0);
    for (let i = 0; i < 400 && !heard.includes("STOPPING=1"); i++) await sleep(50);
    assert.match(heard, /READY=1\s+STOPPING=1/);
  } finally {
    listener.kill();
  }
});

test("the credential http-tokens guards the port", { skip: !activate && "no systemd-socket-activate" }, async () => {
  const dir = scratchDir("taskbox-creds-");
  const creds = join(dir, "credentials");
  mkdirSync(creds);
  const token = randomBytes(16).toString("hex");
  writeFileSync(join(creds, "http-tokens"), `${token}\n`, { mode: 0o400 });
  const s = await activated({ env: { CREDENTIALS_DIRECTORY: creds } });
  try {
    const r = await rpc(s, init);
    assert.equal(r.status, 401, "no token");
    assert.equal((await rpc(s, init, { token: "wrong" })).status, 401, "a wrong token");
    const ok = await rpc(s, init, { token });
    assert.equal(ok.status, 200, await ok.text());
  } finally {
    await stop(s);
  }
});

test("two sockets handed over: refused, saying why", { skip: !activate && "no systemd-socket-activate" }, async () => {
  const other = await freePort();
  const s = await activated({ more: ["-l", `127.0.0.1:${other}`] });
  await fetch(`${s.base}/healthz`).catch(() => {});
  const e = await Promise.race([s.exited, sleep(20000).then(() => null)]);
  if (!e) s.child.kill("SIGKILL");
  assert.ok(e, "taskbox did not exit");
  assert.equal(e.code, 1);
  assert.match(s.log, /LISTEN_FDS: 2 sockets passed, taskbox serves one/);
});
