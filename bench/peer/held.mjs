// The client's floor for the parked waits' burst over HTTP: a trivial node
// http server that answers initialize and notifications at once and holds
// every other request, by the task_id its arguments name, until told to
// let that task's go (`POST /release?task_id=ID`); then it answers each of
// them, in the order they came, with the id it carried and a fixed
// tools/call result (a finished task's state), and then the release. No
// MCP, no session, no task: what the load client measures from the release
// to each answer is the least it can measure for that many answers at
// once on this machine.
//
//   node bench/peer/held.mjs [--listen 127.0.0.1:0]
//
// GET /held says how many requests it holds. Logs `listening on
// http://HOST:PORT/mcp` on stderr.
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values: opts } = parseArgs({ options: { listen: { type: "string", default: "127.0.0.1:0" } } });
const RESULT = { content: [{ type: "text", text: '{"state":"succeeded"}' }], structuredContent: { state: "succeeded" } };
const INIT = { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "bench-held", version: "1.0.0" } };
const held = new Map(); // task_id -> [{ res, id }]
let nHeld = 0;

function answer(res, id, result) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id, result }));
  res.writeHead(200, { "content-type": "application/json", "content-length": body.length, "mcp-session-id": "held" });
  res.end(body);
}

const http = createServer((req, res) => {
  const url = new URL(req.url, "http://held");
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(String(nHeld));
    return;
  }
  if (url.pathname === "/release") {
    const task = url.searchParams.get("task_id");
    const list = held.get(task) || [];
    held.delete(task);
    nHeld -= list.length;
    for (const h of list) answer(h.res, h.id, RESULT);
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(String(list.length));
    req.resume();
    return;
  }
  let text = "";
  req.setEncoding("utf8");
  req.on("data", (d) => (text += d));
  req.on("end", () => {
    const msg = JSON.parse(text || "{}");
    if (msg.id === undefined) {
      res.writeHead(202);
      res.end();
    } else if (msg.method === "initialize") answer(res, msg.id, INIT);
    else {
      const task = String(msg.params?.arguments?.task_id);
      if (!held.has(task)) held.set(task, []);
      held.get(task).push({ res, id: msg.id });
      nHeld++;
    }
  });
});
http.keepAliveTimeout = 600e3;
http.requestTimeout = 0;
const [host, port] = opts.listen.split(/:(?=\d+$)/);
http.listen(Number(port), host, 2048, () => {
  const a = http.address();
  process.stderr.write(`bench-held: listening on http://${a.address}:${a.port}/mcp\n`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
