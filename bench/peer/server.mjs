// The peer for the HTTP figures: the MCP server a user would otherwise
// write with the official TypeScript SDK, served over Streamable HTTP the
// way the SDK's documentation shows it: one StreamableHTTPServerTransport and
// one McpServer per session (legacy sessions, `Mcp-Session-Id`), on node's
// own http server, answers as the transport's default (server-sent events).
//
// It serves one tool shaped like taskbox's get_task on the local provider:
// it reads a task's status file and a page of its stdout and stderr logs
// from disk, checks that a running task's process is alive, and returns
// the same JSON (structuredContent and a text block), plus ping.
//
//   node bench/peer/server.mjs --root DIR [--listen 127.0.0.1:0]
//
// DIR holds one directory per task: status.json ({state, pid, exit_code,
// started_at, finished_at, command, error}), stdout and stderr. With
// PEER_HTTP_TOKEN set, every request must carry `Authorization: Bearer
// <token>`. Logs `listening on http://HOST:PORT/mcp` on stderr.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { randomUUID, timingSafeEqual } from "node:crypto";
import { open, readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as z from "zod";

const { values: opts } = parseArgs({
  options: { root: { type: "string" }, listen: { type: "string", default: "127.0.0.1:0" } },
});
if (!opts.root) {
  process.stderr.write("usage: server.mjs --root DIR [--listen HOST:PORT]\n");
  process.exit(2);
}
const token = process.env.PEER_HTTP_TOKEN ? Buffer.from(`Bearer ${process.env.PEER_HTTP_TOKEN}`) : null;
const MAX_BODY = 4 << 20;

const STATES = ["running", "succeeded", "failed", "cancelled", "timed_out", "unknown"];
const ID = /^[0-9a-f]{32}$/;

// A page of a log: up to limit bytes from offset, cut back to whole UTF-8
// characters, and the file's size.
async function page(path, offset, limit) {
  let fh;
  try {
    fh = await open(path, "r");
  } catch (e) {
    if (e.code === "ENOENT") return { text: "", size: 0, next: offset };
    throw e;
  }
  try {
    const { size } = await fh.stat();
    const want = Math.max(0, Math.min(limit, size - offset));
    const buf = Buffer.alloc(want);
    const { bytesRead } = want ? await fh.read(buf, 0, want, offset) : { bytesRead: 0 };
    let end = bytesRead;
    // back off a trailing partial character
    let i = end - 1;
    while (i >= 0 && i >= end - 4 && (buf[i] & 0xc0) === 0x80) i--;
    if (i >= 0 && buf[i] >= 0xc0) {
      const need = buf[i] >= 0xf0 ? 4 : buf[i] >= 0xe0 ? 3 : 2;
      if (end - i < need) end = i;
    }
    return { text: buf.toString("utf8", 0, end), size, next: offset + end };
  } finally {
    await fh.close();
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
}

async function getTask({ sandbox_id, task_id, stdout_offset = 0, stderr_offset = 0, limit = 16384 }) {
  if (!ID.test(task_id)) throw new Error(`no task ${task_id}`);
  const dir = join(opts.root, task_id);
  const status = JSON.parse(await readFile(join(dir, "status.json"), "utf8"));
  let state = STATES.includes(status.state) ? status.state : "unknown";
  if (state === "running" && !(status.pid > 0 && alive(status.pid))) state = "unknown";
  const [out, err] = await Promise.all([
    page(join(dir, "stdout"), stdout_offset, limit),
    page(join(dir, "stderr"), stderr_offset, limit),
  ]);
  return {
    sandbox_id,
    task_id,
    state,
    exit_code: status.exit_code ?? null,
    started_at: status.started_at ?? null,
    finished_at: status.finished_at ?? null,
    command: status.command ?? null,
    error: state === "unknown" ? "the task's process is gone" : (status.error ?? null),
    stdout: out.text,
    stderr: err.text,
    stdout_next_offset: out.next,
    stderr_next_offset: err.next,
    stdout_size: out.size,
    stderr_size: err.size,
    stdout_truncated: out.next < out.size,
    stderr_truncated: err.next < err.size,
  };
}

// One McpServer per session, as the SDK's session example does.
function newServer() {
  const server = new McpServer({ name: "bench-peer", version: "1.0.0" });
  const nullable = (t) => t.nullable();
  server.registerTool(
    "get_task",
    {
      description: "A task's state and a page of its output, read from its status file and logs.",
      inputSchema: {
        sandbox_id: z.string(),
        task_id: z.string(),
        stdout_offset: z.number().int().min(0).optional(),
        stderr_offset: z.number().int().min(0).optional(),
        limit: z.number().int().min(1).max(1048576).optional(),
      },
      outputSchema: {
        sandbox_id: z.string(),
        task_id: z.string(),
        state: z.enum(STATES),
        exit_code: nullable(z.number().int()),
        started_at: nullable(z.number().int()),
        finished_at: nullable(z.number().int()),
        command: nullable(z.string()),
        error: nullable(z.string()),
        stdout: z.string(),
        stderr: z.string(),
        stdout_next_offset: z.number().int(),
        stderr_next_offset: z.number().int(),
        stdout_size: z.number().int(),
        stderr_size: z.number().int(),
        stdout_truncated: z.boolean(),
        stderr_truncated: z.boolean(),
      },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      const view = await getTask(args);
      return { content: [{ type: "text", text: JSON.stringify(view) }], structuredContent: view };
    },
  );
  return server;
}

const transports = new Map();

function fail(res, status, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

function authorised(req) {
  if (!token) return true;
  const got = Buffer.from(req.headers.authorization || "");
  return got.length === token.length && timingSafeEqual(got, token);
}

async function readBody(req) {
  const chunks = [];
  let n = 0;
  for await (const c of req) {
    n += c.length;
    if (n > MAX_BODY) throw new Error("body too large");
    chunks.push(c);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function handle(req, res) {
  if (new URL(req.url, "http://x").pathname !== "/mcp") return fail(res, 404, "Not found");
  if (!authorised(req)) return fail(res, 401, "Unauthorized");
  const sid = req.headers["mcp-session-id"];
  if (req.method === "POST") {
    let body;
    try {
      body = await readBody(req);
    } catch (e) {
      return fail(res, 400, `Parse error: ${e.message}`);
    }
    let transport = sid && transports.get(sid);
    if (!transport) {
      if (sid || !isInitializeRequest(body)) return fail(res, sid ? 404 : 400, "No valid session ID");
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await newServer().connect(transport);
    }
    return transport.handleRequest(req, res, body);
  }
  if (req.method === "GET" || req.method === "DELETE") {
    const transport = sid && transports.get(sid);
    if (!transport) return fail(res, 400, "Invalid or missing session ID");
    return transport.handleRequest(req, res);
  }
  return fail(res, 405, "Method not allowed");
}

const [host, port] = opts.listen.split(/:(?=\d+$)/);
const http = createServer((req, res) => {
  handle(req, res).catch((e) => {
    if (!res.headersSent) fail(res, 500, e.message);
    else res.end();
  });
});
http.keepAliveTimeout = 600e3;
http.requestTimeout = 0;
http.listen(Number(port), host, () => {
  const a = http.address();
  process.stderr.write(`bench-peer: listening on http://${a.address}:${a.port}/mcp\n`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
