// The client's ceiling for the HTTP figures: a trivial node http server that
// reads each request and answers one fixed JSON-RPC body (an empty result),
// with no MCP, no session and no parsing. What the load client reaches
// against it is the most it can measure on this machine.
//
//   node bench/peer/fixed.mjs [--listen 127.0.0.1:0]
//
// Logs `listening on http://HOST:PORT/mcp` on stderr.
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values: opts } = parseArgs({ options: { listen: { type: "string", default: "127.0.0.1:0" } } });
const BODY = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}');
const HEADERS = { "content-type": "application/json", "content-length": BODY.length, "mcp-session-id": "fixed" };

const http = createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    res.writeHead(200, HEADERS);
    res.end(BODY);
  });
});
http.keepAliveTimeout = 600e3;
http.requestTimeout = 0;
const [host, port] = opts.listen.split(/:(?=\d+$)/);
http.listen(Number(port), host, () => {
  const a = http.address();
  process.stderr.write(`bench-fixed: listening on http://${a.address}:${a.port}/mcp\n`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
