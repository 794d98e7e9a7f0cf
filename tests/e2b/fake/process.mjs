// The fake envd's process service: Start (a Connect server stream) runs the
// command for real, as envd does (/bin/sh -c 'exec "$@"' -- cmd args, the
// user's home as the default cwd, PATH/HOME/USER, the sandbox's envVars and
// the request's envs),
// and streams its output; SendSignal, SendInput, CloseStdin and List are
// unary calls.
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { userInfo } from "node:os";
import {
  ConnectError,
  FLAG_COMPRESSED,
  FLAG_END_STREAM,
  bytesFromJson,
  bytesToJson,
  envelope,
  parseEnvelopes,
  sendUnaryError,
} from "./connect.mjs";

// Go's names for the signals a process may die of (syscall.Signal.String).
const GO_SIGNAL_NAMES = {
  SIGHUP: "hangup",
  SIGINT: "interrupt",
  SIGQUIT: "quit",
  SIGILL: "illegal instruction",
  SIGTRAP: "trace/breakpoint trap",
  SIGABRT: "aborted",
  SIGBUS: "bus error",
  SIGFPE: "floating point exception",
  SIGKILL: "killed",
  SIGUSR1: "user defined signal 1",
  SIGSEGV: "segmentation fault",
  SIGUSR2: "user defined signal 2",
  SIGPIPE: "broken pipe",
  SIGALRM: "alarm clock",
  SIGTERM: "terminated",
};

function resolveCwd(sbx, cwd) {
  if (!cwd) return sbx.home;
  if (cwd === "~" || cwd.startsWith("~/")) return join(sbx.home, cwd.slice(1));
  return isAbsolute(cwd) ? cwd : join(sbx.home, cwd);
}

function spawnProcess(sbx, msg) {
  const cfg = msg.process || {};
  if (typeof cfg.cmd !== "string" || !cfg.cmd)
    throw new ConnectError("invalid_argument", "process.cmd is required");
  const args = Array.isArray(cfg.args) ? cfg.args : [];
  const cwd = resolveCwd(sbx, cfg.cwd);
  if (!existsSync(cwd) || !statSync(cwd).isDirectory())
    throw new ConnectError("invalid_argument", `cwd '${cwd}' does not exist`);
  const env = {
    PATH: process.env.PATH,
    HOME: sbx.home,
    USER: userInfo().username,
    LOGNAME: userInfo().username,
    E2B_SANDBOX: "true",
    E2B_SANDBOX_ID: sbx.id,
    ...sbx.envVars,
    ...(cfg.envs || {}),
  };
  const withStdin = msg.stdin === undefined ? true : !!msg.stdin;
  const child = spawn("/bin/sh", ["-c", 'exec "$@"', "--", cfg.cmd, ...args], {
    cwd,
    env,
    stdio: [withStdin ? "pipe" : "ignore", "pipe", "pipe"],
  });
  return child;
}

// The EndEvent as protojson writes it: zero values are left out.
function endEvent(code, signal) {
  const ev = {};
  if (signal) {
    ev.exitCode = -1;
    ev.status = `signal: ${GO_SIGNAL_NAMES[signal] || signal}`;
  } else {
    if (code) ev.exitCode = code;
    ev.exited = true;
    ev.status = `exit status ${code}`;
    if (code) ev.error = ev.status;
  }
  return ev;
}

// POST /process.Process/Start. startDelayMs holds the start event (the
// pid) and what follows it back that long after the process started: the
// window in which a real envd's answer is still on its way.
export async function handleStart(sbx, req, res, body, startDelayMs = 0) {
  const ctype = (req.headers["content-type"] || "").split(";")[0].trim();
  if (ctype !== "application/connect+json") {
    res.writeHead(415, { "Content-Type": "text/plain" });
    return res.end(`unsupported content type ${ctype}`);
  }
  let msg;
  try {
    const frames = parseEnvelopes(body);
    if (frames.length !== 1 || frames[0].flags & FLAG_COMPRESSED)
      throw new Error("expected one uncompressed request message");
    msg = JSON.parse(frames[0].data.toString("utf8"));
  } catch (e) {
    return endStreamOnly(res, new ConnectError("invalid_argument", e.message));
  }
  let child;
  try {
    child = spawnProcess(sbx, msg);
  } catch (e) {
    return endStreamOnly(res, e instanceof ConnectError ? e : new ConnectError("internal", e.message));
  }

  res.writeHead(200, { "Content-Type": "application/connect+json" });
  let open = true;
  let started = !(startDelayMs > 0);
  const held = [];
  const send = (flags, m) => {
    if (!started) held.push([flags, m]);
    else if (open && !res.destroyed) res.write(envelope(flags, m));
  };
  let finishing = null;
  const finish = (err) => {
    if (!started) {
      finishing = { err };
      return;
    }
    if (!open) return;
    send(FLAG_END_STREAM, err ? { error: { code: err.code, message: err.message } } : {});
    open = false;
    clearInterval(keepalive);
    clearTimeout(deadline);
    res.end();
  };

  const entry = { child, sbx };
  child.on("spawn", () => {
    sbx.processes.set(child.pid, entry);
    const pid = child.pid;
    const go = () => {
      started = true;
      send(0, { event: { start: { pid } } });
      for (const [flags, m] of held.splice(0)) send(flags, m);
      if (finishing) finish(finishing.err);
    };
    if (startDelayMs > 0) setTimeout(go, startDelayMs);
    else go();
  });
  child.on("error", (e) => finish(new ConnectError("invalid_argument", e.message)));

  const interval = Number(req.headers["keepalive-ping-interval"] || 0);
  const keepalive = interval > 0
    ? setInterval(() => send(0, { event: { keepalive: {} } }), interval * 1000)
    : null;

  // Connect-Timeout-Ms bounds the process as envd's context does: the
  // process is killed and the stream ends with deadline_exceeded.
  const timeoutMs = Number(req.headers["connect-timeout-ms"] || 0);
  const deadline = timeoutMs > 0
    ? setTimeout(() => {
        child.kill("SIGKILL");
        finish(new ConnectError("deadline_exceeded", "the operation timed out"));
      }, timeoutMs)
    : null;

  child.stdout.on("data", (d) => send(0, { event: { data: { stdout: bytesToJson(d) } } }));
  child.stderr.on("data", (d) => send(0, { event: { data: { stderr: bytesToJson(d) } } }));
  // A client that goes away does not kill the process (envd's rule).
  res.on("close", () => {
    open = false;
    clearInterval(keepalive);
  });
  child.on("close", (code, signal) => {
    sbx.processes.delete(child.pid);
    send(0, { event: { end: endEvent(code, signal) } });
    finish(null);
  });
}

function endStreamOnly(res, err) {
  res.writeHead(200, { "Content-Type": "application/connect+json" });
  res.end(envelope(FLAG_END_STREAM, { error: { code: err.code, message: err.message } }));
}

function findProcess(sbx, selector) {
  const pid = selector && selector.pid;
  const entry = pid ? sbx.processes.get(Number(pid)) : undefined;
  if (!entry) throw new ConnectError("not_found", `process with pid ${pid} not found`);
  return entry;
}

// POST /process.Process/{SendSignal,SendInput,CloseStdin,List}
export async function handleUnary(sbx, method, req, res, body) {
  const ctype = (req.headers["content-type"] || "").split(";")[0].trim();
  if (ctype !== "application/json") {
    res.writeHead(415, { "Content-Type": "text/plain" });
    return res.end(`unsupported content type ${ctype}`);
  }
  try {
    const msg = body.length ? JSON.parse(body.toString("utf8")) : {};
    let out = {};
    if (method === "SendSignal") {
      const { child } = findProcess(sbx, msg.process);
      const sig = { SIGNAL_SIGKILL: "SIGKILL", SIGNAL_SIGTERM: "SIGTERM", 9: "SIGKILL", 15: "SIGTERM" }[msg.signal];
      if (!sig) throw new ConnectError("unimplemented", `invalid signal: ${msg.signal}`);
      child.kill(sig);
    } else if (method === "SendInput") {
      const { child } = findProcess(sbx, msg.process);
      if (!child.stdin) throw new ConnectError("failed_precondition", "stdin not enabled or closed");
      child.stdin.write(bytesFromJson(msg.input && msg.input.stdin));
    } else if (method === "CloseStdin") {
      const { child } = findProcess(sbx, msg.process);
      if (child.stdin) child.stdin.end();
    } else if (method === "List") {
      out = {
        processes: [...sbx.processes.entries()].map(([pid, e]) => ({
          config: { cmd: e.child.spawnargs[4], args: e.child.spawnargs.slice(5), envs: {} },
          pid,
        })),
      };
    } else {
      throw new ConnectError("unimplemented", `process.Process/${method} is not implemented`);
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(out));
  } catch (e) {
    sendUnaryError(res, e instanceof ConnectError ? e : new ConnectError("invalid_argument", e.message));
  }
}
