// The fake's data plane: envd behind the sandbox proxy. A request finds its
// sandbox by the E2b-Sandbox-Id header or by a PORT-ID.domain Host, as the
// proxy routes; an unknown, killed or paused sandbox gets the proxy's 502.
// X-Access-Token is checked against the sandbox's envd token.
import { handleStart, handleUnary } from "./process.mjs";
import { handleDownload, handleUpload } from "./files.mjs";
import { tokenAccepted } from "./tokens.mjs";

const ENVD_PORT = "49983";

function proxyNotFound(res, id) {
  const text = JSON.stringify({ sandboxId: id, message: "The sandbox was not found", code: 502 });
  res.writeHead(502, { "Content-Type": "application/json; charset=utf-8" });
  res.end(text);
}

function sandboxIdOf(req) {
  const byHeader = req.headers["e2b-sandbox-id"];
  if (byHeader) return { id: byHeader, port: req.headers["e2b-sandbox-port"] };
  const host = (req.headers.host || "").split(":")[0];
  const m = /^(\d+)-([^.]+)\./.exec(host);
  return m ? { id: m[2], port: m[1] } : { id: "", port: "" };
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks);
}

export function makeEnvdHandler(fake) {
  return async function handle(req, res) {
    fake.log("envd", req);
    const url = new URL(req.url, "http://fake");
    const { id, port } = sandboxIdOf(req);
    const sbx = fake.sandboxes.get(id);
    if (!sbx || sbx.state !== "running") return proxyNotFound(res, id);
    if (port !== ENVD_PORT) {
      res.writeHead(502, { "Content-Type": "application/json" });
      return res.end(JSON.stringify({ sandboxId: id, message: `port ${port} is not open`, code: 502 }));
    }
    if (url.pathname === "/health" && req.method === "GET") {
      res.writeHead(204);
      return res.end();
    }
    if (!tokenAccepted(sbx, req.headers["x-access-token"])) {
      res.writeHead(401, { "Content-Type": "application/json; charset=utf-8" });
      return res.end(JSON.stringify({ code: 401, message: "unauthorized access, a valid access token is required" }) + "\n");
    }
    try {
      if (url.pathname === "/files") {
        if (req.method === "GET" || req.method === "HEAD") return handleDownload(sbx, req, res, url);
        if (req.method === "POST") return await handleUpload(sbx, req, res, url);
      }
      const m = /^\/process\.Process\/([A-Za-z]+)$/.exec(url.pathname);
      if (m && req.method === "POST") {
        const body = await readBody(req);
        if (m[1] === "Start") return await handleStart(sbx, req, res, body, fake.faults.startDelayMs);
        return await handleUnary(sbx, m[1], req, res, body);
      }
      res.writeHead(404, { "Content-Type": "text/plain" });
      res.end("404 page not found\n");
    } catch (e) {
      if (!res.headersSent) {
        res.writeHead(500, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ code: 500, message: e.message }));
      } else {
        res.destroy();
      }
    }
  };
}
