// A lean MCP client over Streamable HTTP for the load figures: raw JSON-RPC
// POSTs on undici connections kept alive, one initialize per session, no
// SDK in the request path (so the client costs as little per request as it
// can and its own ceiling can be measured apart).
//
// A connection is one undici `Client` (one TCP connection, no pipelining);
// a session is the `Mcp-Session-Id` an initialize returned, which any number
// of connections may carry.
import { Client } from "undici";

export const PROTOCOL_VERSION = "2025-11-25";
const ACCEPT = "application/json, text/event-stream";

let nextId = 1;

// A kept-alive connection to origin (scheme://host:port).
export function connection(origin) {
  return new Client(origin, {
    pipelining: 1,
    keepAliveTimeout: 600e3,
    keepAliveMaxTimeout: 600e3,
    headersTimeout: 120e3,
    bodyTimeout: 120e3,
    connect: { timeout: 10e3 },
  });
}

// The JSON-RPC message answering `id` in a body that is either one JSON
// value or a stream of server-sent events (the SDK's default answer).
export function answerOf(text, contentType, id) {
  if (!/event-stream/.test(contentType || "")) return text ? JSON.parse(text) : null;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const m = JSON.parse(line.slice(5));
    if (m.id === id) return m;
  }
  return null;
}

// An MCP session over HTTP at `url` (its path is the endpoint, /mcp).
export class HttpSession {
  constructor(url, token) {
    const u = new URL(url);
    this.origin = u.origin;
    this.path = u.pathname;
    this.token = token;
    this.sessionId = null;
    this.headers = null;
  }

  // initialize + notifications/initialized on conn; returns the result.
  async open(conn, clientName = "taskbox-bench") {
    const id = nextId++;
    const init = {
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: clientName, version: "1.0.0" } },
    };
    const base = { "content-type": "application/json", accept: ACCEPT };
    if (this.token) base.authorization = `Bearer ${this.token}`;
    const r = await conn.request({ path: this.path, method: "POST", headers: base, body: JSON.stringify(init) });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`initialize: HTTP ${r.statusCode}: ${text.slice(0, 300)}`);
    const msg = answerOf(text, r.headers["content-type"], id);
    if (!msg?.result) throw new Error(`initialize: ${text.slice(0, 300)}`);
    this.sessionId = r.headers["mcp-session-id"] || null;
    this.headers = { ...base, "mcp-protocol-version": msg.result.protocolVersion || PROTOCOL_VERSION };
    if (this.sessionId) this.headers["mcp-session-id"] = this.sessionId;
    const n = await conn.request({
      path: this.path,
      method: "POST",
      headers: this.headers,
      body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    });
    await n.body.text();
    if (n.statusCode !== 202 && n.statusCode !== 200) throw new Error(`notifications/initialized: HTTP ${n.statusCode}`);
    return msg.result;
  }

  // One request on conn: the body is made from method and the JSON text of
  // params (so a hot loop can keep it prepared). Returns the JSON-RPC
  // message; throws on an HTTP error or a JSON-RPC error.
  async rpc(conn, method, paramsJson = null, options = {}) {
    const id = nextId++;
    const body = paramsJson
      ? `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsJson}}`
      : `{"jsonrpc":"2.0","id":${id},"method":"${method}"}`;
    const r = await conn.request({ path: this.path, method: "POST", headers: this.headers, body, signal: options.signal });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`${method}: HTTP ${r.statusCode}: ${text.slice(0, 200)}`);
    const msg = answerOf(text, r.headers["content-type"], id);
    if (!msg) throw new Error(`${method}: no answer in ${text.slice(0, 200)}`);
    if (msg.error) throw new Error(`${method}: ${msg.error.message}`);
    return msg.result;
  }

  // tools/call; returns structuredContent (or the text block parsed).
  async call(conn, name, args, options) {
    const r = await this.rpc(conn, "tools/call", JSON.stringify({ name, arguments: args }), options);
    if (r.isError) throw new Error(`${name} failed: ${(r.content || []).map((c) => c.text || "").join(" ")}`);
    return r.structuredContent || JSON.parse(r.content?.[0]?.text || "{}");
  }

  // Ends the session (DELETE), best effort.
  async close(conn) {
    if (!this.sessionId) return;
    try {
      const r = await conn.request({ path: this.path, method: "DELETE", headers: this.headers });
      await r.body.text();
    } catch {
      /* the server may be gone already */
    }
  }
}
