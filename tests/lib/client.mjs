// The shared harness of the integration tests: an official MCP SDK client
// driving the real taskbox binary, over stdio (the default) or over
// Streamable HTTP, with the SDK v1 client (the default) or the SDK v2 one.
//
// Environment (set by `make check` through AM_TESTS_ENVIRONMENT):
//   TASKBOX_BIN            the built binary (required)
//   TASKBOX_PLUGIN_PATH    where the built plugins are
//   TASKBOX_TEST_WRAPPER   optional command prefix, e.g. tests/vg (valgrind)
// and, for a whole run on another transport or client (startServer's
// opts.transport and opts.client override them):
//   TASKBOX_TEST_TRANSPORT stdio (default) or http
//   TASKBOX_TEST_CLIENT    v1 (default: @modelcontextprotocol/sdk), v2
//                          (@modelcontextprotocol/client, legacy era),
//                          v2-modern (the same client pinned to MCP
//                          2026-07-28) or v2-auto (the same client in its
//                          "auto" version negotiation: server/discover on a
//                          throw-away process first, then modern, as taskbox
//                          offers 2026-07-28)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";

// The argv of the taskbox under test with args: behind TASKBOX_TEST_WRAPPER
// (valgrind, in one stage), or behind wrapper (an argv prefix) instead.
export function taskboxCommand(args = [], wrapper = null) {
  const bin = process.env.TASKBOX_BIN;
  if (!bin) throw new Error("TASKBOX_BIN is not set: run through `make check`");
  wrapper ||= (process.env.TASKBOX_TEST_WRAPPER || "").split(/\s+/).filter(Boolean);
  const argv = [...wrapper, bin, ...args];
  return { command: argv[0], args: argv.slice(1) };
}

// A scratch directory that outlives nothing important.
export function scratchDir(prefix = "taskbox-test-") {
  return mkdtempSync(join(tmpdir(), prefix));
}

// Writes a config object to a file in dir and returns its path.
export function writeConfig(dir, config) {
  const path = join(dir, "config.json");
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

// The transport and the client a startServer call uses.
export function transportOf(opts = {}) {
  const t = opts.transport || process.env.TASKBOX_TEST_TRANSPORT || "stdio";
  if (t !== "stdio" && t !== "http") throw new Error(`unknown transport ${t} (stdio or http)`);
  return t;
}

const CLIENT_KINDS = ["v1", "v2", "v2-modern", "v2-auto"];

export function clientOf(opts = {}) {
  const c = opts.client || process.env.TASKBOX_TEST_CLIENT || "v1";
  if (!CLIENT_KINDS.includes(c)) throw new Error(`unknown client ${c} (${CLIENT_KINDS.join(", ")})`);
  return c;
}

// The era a client kind speaks with taskbox: "legacy" (initialize and a
// session: protocol versions up to 2025-11-25) or "modern" (MCP 2026-07-28:
// no handshake, no session, a _meta envelope on every request). v2-auto
// negotiates, and taskbox's server/discover offers 2026-07-28, so it is
// modern against taskbox (connectedEra tells what a live client chose).
export function eraOf(kind) {
  const k = clientOf({ client: kind });
  return k === "v2-modern" || k === "v2-auto" ? "modern" : "legacy";
}

// The era a connected SDK client is in, as the client itself says
// ("modern" or "legacy"; undefined for an SDK v2 client not connected).
export function connectedEra(client) {
  if (!isV2(client)) return "legacy";
  return client.getProtocolEra();
}

// The clientInfo every client of these tests gives.
export const CLIENT_INFO = { name: "taskbox-tests", version: "1.0.0" };

// The modern revision and its request envelope (params._meta), for raw
// requests: capabilities are the client capabilities it declares
// (tasksCapabilities declares the tasks extension).
export const MODERN_VERSION = "2026-07-28";
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
export const tasksCapabilities = { extensions: { [TASKS_EXTENSION]: {} } };
export function envelope(capabilities = {}, clientInfo = CLIENT_INFO) {
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientInfo": clientInfo,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  };
}

// The SDK v2 packages are loaded only when a test asks for them.
let v2;
async function sdkV2() {
  v2 ??= {
    ...(await import("@modelcontextprotocol/client")),
    stdio: await import("@modelcontextprotocol/client/stdio"),
  };
  return v2;
}

async function newClient(kind, opts) {
  const capabilities = opts.capabilities || {};
  if (kind === "v1") return new Client(CLIENT_INFO, { capabilities });
  const { Client: ClientV2 } = await sdkV2();
  // v2: legacy era, pinned: a plain initialize, no server/discover probe.
  // It is the SDK's default too; naming it keeps a later default from
  // changing what these tests speak. v2-modern: MCP 2026-07-28 or fail (no
  // fallback). v2-auto: probe, then modern or legacy. Both probe with
  // server/discover first, on stdio in a sibling process of their own.
  const mode = { v2: "legacy", "v2-modern": { pin: MODERN_VERSION }, "v2-auto": "auto" }[kind];
  return new ClientV2(CLIENT_INFO, { capabilities, versionNegotiation: { mode } });
}

// Every HTTP server process this test process started and has not seen
// exit: killed when the test process exits, however it exits (a failed
// assertion skips close()). A stdio server ends on its own when its stdin
// closes with this process.
const live = new Set();
function killLive() {
  for (const child of live) {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
}
process.on("exit", killLive);
// A signal ends this process without "exit": kill them, then die of it.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.once(sig, () => {
    killLive();
    process.kill(process.pid, sig);
  });
}

// Spawns `taskbox ARGS` (a `serve --http`) with env, its stderr echoed to
// this process's; resolves once it says where it listens with { url,
// child, exited (its exit), log() (its stderr so far), stop() (SIGTERM,
// and a clean exit asserted) }; rejects if it exits first.
export async function spawnListening(args, env) {
  const { command, args: argv } = taskboxCommand(args);
  const child = spawn(command, argv, { env, stdio: ["ignore", "inherit", "pipe"] });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let log = "";
  const url = await new Promise((resolve, reject) => {
    child.stderr.on("data", (d) => {
      process.stderr.write(d);
      log += d;
      const m = LISTENING_LINE.exec(log);
      if (m) resolve(m[1]);
    });
    exited.then((e) => reject(new Error(`server exited (${e.signal || e.code}): ${log}`)));
  });
  return {
    url,
    child,
    exited,
    log: () => log,
    async stop() {
      child.kill("SIGTERM");
      const e = await exited;
      if (e.code !== 0) throw new Error(`exit after SIGTERM: ${e.signal || e.code}`);
    },
  };
}
const LISTENING_LINE = /listening on (https?:\/\/\S+)/;

const URL_LINE = /listening on (http:\/\/\S+)/;

// Starts a server and connects an SDK client to it.
//   opts.args         extra arguments after `serve`
//   opts.env          extra environment (merged over process.env)
//   opts.stderr       "inherit" (default) or "pipe"
//   opts.wrapper      an argv prefix to run taskbox behind instead of
//                     TASKBOX_TEST_WRAPPER's (`sh -c 'ulimit ...; exec
//                     "$0" "$@"'`, say)
//   opts.transport    "stdio" or "http" (default: $TASKBOX_TEST_TRANSPORT or stdio)
//   opts.client       "v1", "v2", "v2-modern" or "v2-auto" (default:
//                     $TASKBOX_TEST_CLIENT or v1); every kind but v1 uses
//                     the SDK v2 transports
//   opts.capabilities the client's capabilities
//   opts.token        http: the bearer token (default: a random one), or
//                     false for a server without TASKBOX_HTTP_TOKEN
// Returns { client, transport, pid, close(), kill(signal), kind, era,
// transportKind } and, over HTTP, also url, token, headers, session()
// (another client in a session of its own on the same process; for a
// modern kind simply another client on the same URL, as MCP 2026-07-28 has
// no sessions) and endSession() (DELETE, the process stays; for a modern
// kind it only closes that client).
export async function startServer(opts = {}) {
  const kind = clientOf(opts);
  if (transportOf(opts) === "http") return startHttpServer(opts, kind);
  const { command, args } = taskboxCommand(["serve", ...(opts.args || [])], opts.wrapper);
  const params = {
    command,
    args,
    env: { ...process.env, ...(opts.env || {}) },
    stderr: opts.stderr || "inherit",
  };
  const transport =
    kind === "v1" ? new StdioClientTransport(params) : new (await sdkV2()).stdio.StdioClientTransport(params);
  const client = await newClient(kind, opts);
  await client.connect(transport);
  return {
    client,
    transport,
    kind,
    era: eraOf(kind),
    transportKind: "stdio",
    get pid() {
      return transport.pid;
    },
    get stderr() {
      return transport.stderr;
    },
    async close() {
      await client.close();
    },
    kill(signal = "SIGKILL") {
      if (transport.pid) process.kill(transport.pid, signal);
    },
  };
}

// `taskbox serve --http 127.0.0.1:0`: the server picks a free port and
// says which on stderr.
async function startHttpServer(opts, kind) {
  const token = opts.token === false ? null : opts.token || randomBytes(24).toString("hex");
  const { command, args } = taskboxCommand(["serve", "--http", "127.0.0.1:0", ...(opts.args || [])], opts.wrapper);
  const env = { ...process.env, ...(opts.env || {}) };
  delete env.TASKBOX_HTTP_TOKEN;
  if (token) env.TASKBOX_HTTP_TOKEN = token;
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  live.add(child);
  // Neither the process nor its pipes keep this one alive: when a failed
  // test leaves it running, this process still ends, and kills it.
  child.unref();
  child.stdout.unref();
  child.stderr.unref();
  const exited = new Promise((resolve) =>
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  let exit = null;
  exited.then((e) => (exit = e));
  child.once("error", () => {}); // a spawn failure shows as the exit

  // stderr goes where the test's goes, as on stdio (or to a stream of its
  // own with stderr "pipe"); nothing is expected on stdout, which is shown
  // the same way rather than mixed into the test's report.
  const sink = opts.stderr === "pipe" ? new PassThrough() : process.stderr;
  child.stdout.on("data", (d) => sink.write(d));
  let seen = "";
  const url = await new Promise((resolve, reject) => {
    const limit = setTimeout(
      () => reject(new Error(`taskbox serve --http: no "listening on" line within 120 s:\n${seen.slice(-2000)}`)),
      120000,
    );
    child.stderr.on("data", (d) => {
      sink.write(d);
      if (seen === null) return;
      seen += d.toString();
      const m = URL_LINE.exec(seen);
      if (m) {
        seen = null;
        clearTimeout(limit);
        resolve(m[1]);
      }
    });
    exited.then(({ code, signal }) => {
      clearTimeout(limit);
      if (seen !== null)
        reject(new Error(`taskbox serve --http exited (${signal || code}) before listening:\n${seen.slice(-2000)}`));
    });
  }).catch((e) => {
    child.kill("SIGKILL");
    throw e;
  });

  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const pid = child.pid;

  let signalled = null;
  function kill(signal = "SIGKILL") {
    if (exit !== null) return;
    signalled = signal;
    process.kill(pid, signal);
  }

  // SIGTERM, then the exit; SIGKILL if it does not come within limitMs.
  // A server that SIGTERM did not end cleanly (a nonzero exit: valgrind's
  // or a sanitizer's finding, a crash), or that had ended before without
  // being told to, fails the caller.
  async function stop(limitMs = 60000) {
    if (signalled === null) {
      if (exit !== null) throw new Error(`taskbox serve --http: ended on its own (${exit.signal || exit.code})`);
      signalled = "SIGTERM";
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), limitMs);
      await exited;
      clearTimeout(t);
      if (exit.code !== 0) throw new Error(`taskbox serve --http: exit ${exit.signal || exit.code} after SIGTERM`);
    }
    await exited;
  }

  // One client, in a session of its own, on this process: the same kind
  // of client unless sessionOpts.client names another. A modern client has
  // no session: it is just another client of the same URL.
  async function session(sessionOpts = {}) {
    const k = clientOf({ client: sessionOpts.client || kind });
    const client = await newClient(k, { ...opts, ...sessionOpts });
    const transportOpts = { requestInit: { headers: { ...headers, ...(sessionOpts.headers || {}) } } };
    const transport =
      k === "v1"
        ? new StreamableHTTPClientTransport(new URL(url), transportOpts)
        : new (await sdkV2()).StreamableHTTPClientTransport(new URL(url), transportOpts);
    await client.connect(transport);
    let ended = false;
    const era = eraOf(k);
    // DELETE the session, then drop the client. A server already gone has
    // nothing to end, and neither has a modern client (no session).
    async function endSession() {
      if (ended) return;
      ended = true;
      try {
        if (era === "legacy" && exit === null && signalled === null) await transport.terminateSession();
      } finally {
        await client.close();
      }
    }
    return {
      client,
      transport,
      kind: k,
      era,
      transportKind: "http",
      url,
      token,
      headers,
      pid,
      get sessionId() {
        return transport.sessionId;
      },
      endSession,
      session,
      kill,
      async close() {
        await endSession();
      },
    };
  }

  let first;
  try {
    first = await session();
  } catch (e) {
    kill("SIGKILL");
    await exited;
    throw e;
  }
  return {
    ...first,
    stderr: opts.stderr === "pipe" ? sink : undefined,
    // The process's own end: the client's close (its session's DELETE),
    // then SIGTERM and the exit.
    async close() {
      try {
        await first.endSession();
      } finally {
        await stop();
      }
    },
    stop,
    get exited() {
      return exit;
    },
  };
}

// Calls a tool and returns the SDK's result object.
export async function callTool(client, name, args = {}, options = {}) {
  if (isV2(client)) return client.callTool({ name, arguments: args }, options);
  return client.callTool({ name, arguments: args }, undefined, options);
}

// The SDK v1 client has an experimental client of the MCP tasks utility;
// the v2 client has none (it speaks the utility's methods only given a
// result schema), so for it the same five calls are made with
// client.request, following a task-augmented call as the v1 client does:
// taskCreated, then tasks/get until the task ends, then the result.
export function tasksOf(client) {
  if (!isV2(client)) return client.experimental.tasks;
  const req = (method, params, schema, options) => client.request({ method, params }, schema, options);
  const getTask = (taskId, options) => req("tasks/get", { taskId }, GetTaskResultSchema, options);
  const getTaskResult = (taskId, schema, options) => req("tasks/result", { taskId }, schema, options);
  return {
    getTask,
    getTaskResult,
    listTasks: (cursor, options) => req("tasks/list", cursor ? { cursor } : {}, ListTasksResultSchema, options),
    cancelTask: (taskId, options) => req("tasks/cancel", { taskId }, CancelTaskResultSchema, options),
    async *callToolStream(params, schema, options = {}) {
      const { task, ...rest } = options;
      let taskId;
      try {
        const created = await req("tools/call", { ...params, task: task || {} }, CreateTaskResultSchema, rest);
        taskId = created.task.taskId;
        yield { type: "taskCreated", task: created.task };
        for (;;) {
          const t = await getTask(taskId, rest);
          yield { type: "taskStatus", task: t };
          if (t.status === "completed") {
            yield { type: "result", result: await getTaskResult(taskId, schema, rest) };
            return;
          }
          if (t.status === "failed" || t.status === "cancelled") {
            yield { type: "error", error: new Error(`Task ${taskId} ${t.status === "failed" ? "failed" : "was cancelled"}`) };
            return;
          }
          await new Promise((r) => setTimeout(r, t.pollInterval ?? 1000));
        }
      } catch (error) {
        yield { type: "error", error };
      }
    },
  };
}

function isV2(client) {
  return !(client instanceof Client);
}

// A raw JSON-RPC path beside an SDK v2 client, on the same transport: what
// the SDK will not send or accept itself (the tasks extension's shapes,
// which SDK v2 2.4.0 rejects). Requests use string ids "raw-N", which the
// SDK's numeric ids never collide with; their answers are taken off the
// transport before the SDK sees them.
//   dispatch(request, { signal }) -> { kind: "result", result } or
//     { kind: "error", error }: the request as given (the ext-tasks
//     session's rawDispatch: it frames the envelope itself)
//   request(method, params, { capabilities, signal }) -> the same, with
//     the modern envelope declaring capabilities added to params._meta
export function rawChannel(server) {
  const transport = server.transport;
  if (!isV2(server.client)) throw new Error("rawChannel: an SDK v2 client is needed");
  const pending = new Map();
  let next = 0;
  const sdkOnMessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg && typeof msg.id === "string" && pending.has(msg.id) && ("result" in msg || "error" in msg)) {
      const resolve = pending.get(msg.id);
      pending.delete(msg.id);
      resolve("error" in msg ? { kind: "error", error: msg.error } : { kind: "result", result: msg.result });
      return;
    }
    sdkOnMessage?.call(transport, msg, extra);
  };
  function dispatch(request, options = {}) {
    return new Promise((resolve, reject) => {
      const id = `raw-${++next}`;
      pending.set(id, resolve);
      options.signal?.addEventListener(
        "abort",
        () => {
          pending.delete(id);
          reject(options.signal.reason);
        },
        { once: true },
      );
      transport.send({ jsonrpc: "2.0", id, ...request }).catch((e) => {
        pending.delete(id);
        // Over HTTP a JSON-RPC error may come with a 4xx status (404 for
        // -32601, ...), which the SDK's transport throws as an error
        // quoting the body: that body is the answer.
        const body = typeof e?.message === "string" ? e.message.slice(e.message.indexOf("{")) : "";
        try {
          const msg = JSON.parse(body);
          if (msg.id === id && msg.error) return resolve({ kind: "error", error: msg.error, httpError: e });
        } catch {
          // not a JSON-RPC answer
        }
        reject(e);
      });
    });
  }
  function request(method, params = {}, { capabilities = {}, signal } = {}) {
    const _meta = { ...(params._meta || {}), ...envelope(capabilities) };
    return dispatch({ method, params: { ...params, _meta } }, { signal });
  }
  return { dispatch, request };
}

// A minimal assertion helper that names what it compared.
export function check(cond, message) {
  if (!cond) throw new Error(`check failed: ${message}`);
}

// Whether bubblewrap can make a sandbox on this machine (user namespaces
// allowed, bwrap installed).
export function bwrapWorks() {
  try {
    execFileSync("bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "true"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
