// The fake's control plane: the REST API the E2B SDK and the plugin call with
// X-API-Key. Paths, bodies and status codes follow the service's OpenAPI.
// Test-only switches live under /_fake/ and need no key.
import { sandboxJson, sandboxDetailJson } from "./sandboxes.mjs";
import { tokenControl } from "./tokens.mjs";
import { listSandboxes } from "./list.mjs";

function sendJson(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}

function sendError(res, status, message) {
  sendJson(res, status, { code: status, message });
}

async function readJson(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return {};
  return JSON.parse(text);
}

function validTimeout(t) {
  return Number.isInteger(t) && t >= 0 && t <= 86400;
}

export function makeApiHandler(fake) {
  const { sandboxes } = fake;
  return async function handle(req, res) {
    const url = new URL(req.url, "http://fake");
    const path = url.pathname;
    fake.log("api", req);

    if (path.startsWith("/_fake/")) return fakeControl(fake, req, res, path);

    if (fake.faults.delayMs > 0) await new Promise((r) => setTimeout(r, fake.faults.delayMs));
    if (fake.rateLimit.count > 0) {
      fake.rateLimit.count--;
      res.setHeader("Retry-After", String(fake.rateLimit.retryAfter));
      return sendError(res, 429, "Rate limit exceeded, try again later");
    }
    if (path === "/health" && req.method === "GET") {
      res.writeHead(200);
      return res.end();
    }
    if (req.headers["x-api-key"] !== fake.apiKey) {
      // The echo switch makes the fake quote the key it was given, so that
      // tests can see the client keep it out of its messages.
      const quoted = fake.faults.echoKey ? `: ${req.headers["x-api-key"]}` : "";
      return sendError(res, 401, `Invalid API key${quoted}`);
    }

    let body;
    try {
      body = req.method === "POST" ? await readJson(req) : {};
    } catch (e) {
      return sendError(res, 400, `Invalid request body: ${e.message}`);
    }

    // POST /sandboxes is the original form, POST /v2/sandboxes the one the
    // current SDK sends (its timeout has a longer default).
    if ((path === "/sandboxes" || path === "/v2/sandboxes") && req.method === "POST") {
      if (typeof body.templateID !== "string" || !body.templateID)
        return sendError(res, 400, "templateID is required");
      const timeout = body.timeout ?? (path === "/sandboxes" ? 15 : 300);
      if (!validTimeout(timeout)) return sendError(res, 400, "timeout must be an integer of seconds");
      if (fake.unknownTemplates.has(body.templateID))
        return sendError(res, 404, `template '${body.templateID}' not found`);
      const envVars = body.envVars ?? {};
      if (typeof envVars !== "object" || Array.isArray(envVars) || Object.values(envVars).some((v) => typeof v !== "string"))
        return sendError(res, 400, "envVars must be an object of strings");
      const metadata = body.metadata ?? {};
      if (typeof metadata !== "object" || Array.isArray(metadata) || Object.values(metadata).some((v) => typeof v !== "string"))
        return sendError(res, 400, "metadata must be an object of strings");
      const sbx = sandboxes.create(body.templateID, timeout, envVars, { ...metadata });
      return sendJson(res, 201, sandboxJson(sbx));
    }
    const listed = listSandboxes(fake, req.method, url);
    if (listed) return sendJson(res, listed.status, listed.body, listed.headers);

    const m = /^(\/v2)?\/sandboxes\/([^/]+)(\/[a-z]+)?$/.exec(path);
    if (!m) return sendError(res, 404, `no route for ${req.method} ${path}`);
    const v2 = !!m[1];
    const id = decodeURIComponent(m[2]);
    const action = m[3] || "";
    if (v2 && action !== "/connect") return sendError(res, 404, `no route for ${req.method} ${path}`);
    const sbx = sandboxes.get(id);
    const notFound = () => sendError(res, 404, `sandbox "${id}" not found`);

    if (action === "" && req.method === "GET") {
      return sbx ? sendJson(res, 200, sandboxDetailJson(sbx)) : notFound();
    }
    if (action === "" && req.method === "DELETE") {
      if (!sandboxes.kill(id)) return notFound();
      res.writeHead(204);
      return res.end();
    }
    if (req.method !== "POST") return sendError(res, 405, "method not allowed");
    if (!sbx) return notFound();
    switch (action) {
      case "/connect": {
        // v1 requires the timeout; v2 makes it optional.
        const given = body.timeout !== undefined;
        if (given ? !validTimeout(body.timeout) : !v2) return sendError(res, 400, "timeout is required");
        const wasPaused = sbx.state === "paused";
        sbx.state = "running";
        if (wasPaused) sandboxes.setTimeout(sbx, given ? body.timeout : 300);
        else if (given) sandboxes.extend(sbx, body.timeout);
        return sendJson(res, wasPaused ? 201 : 200, sandboxJson(sbx));
      }
      case "/resume": {
        if (sbx.state !== "paused") return sendError(res, 409, `sandbox "${id}" is already running`);
        sbx.state = "running";
        sandboxes.setTimeout(sbx, validTimeout(body.timeout) ? body.timeout : 15);
        return sendJson(res, 201, sandboxJson(sbx));
      }
      case "/pause": {
        if (sbx.state === "paused") return sendError(res, 409, `sandbox "${id}" is already paused`);
        sbx.state = "paused";
        if (sbx.timer) clearTimeout(sbx.timer);
        res.writeHead(204);
        return res.end();
      }
      case "/timeout": {
        if (!validTimeout(body.timeout)) return sendError(res, 400, "timeout is required");
        sandboxes.setTimeout(sbx, body.timeout);
        res.writeHead(204);
        return res.end();
      }
      default:
        return sendError(res, 404, `no route for ${req.method} ${path}`);
    }
  };
}

// Test switches: rate limiting, faults, the added latency, the longest list
// page (0: as the service), a sandbox
// vanishing behind the client's back, and the request log.
async function fakeControl(fake, req, res, path) {
  let body = {};
  try {
    if (req.method === "POST") body = await readJson(req);
  } catch (e) {
    return sendError(res, 400, e.message);
  }
  if (path === "/_fake/rate_limit" && req.method === "POST") {
    fake.rateLimit = { count: body.count ?? 1, retryAfter: body.retry_after ?? 1 };
    return sendJson(res, 200, fake.rateLimit);
  }
  if (path === "/_fake/latency" && req.method === "POST") {
    const ms = Number(body.ms ?? 0);
    if (!Number.isFinite(ms) || ms < 0) return sendError(res, 400, "ms must be a number >= 0");
    fake.latencyMs = ms;
    return sendJson(res, 200, { ms });
  }
  if (path === "/_fake/latency" && req.method === "GET") {
    return sendJson(res, 200, { ms: fake.latencyMs });
  }
  if (path === "/_fake/list_page_max" && req.method === "POST") {
    const max = Number(body.max ?? 0);
    if (!Number.isInteger(max) || max < 0) return sendError(res, 400, "max must be an integer >= 0");
    fake.listPageMax = max;
    return sendJson(res, 200, { max });
  }
  if (path === "/_fake/faults" && req.method === "POST") {
    fake.faults = { delayMs: body.delay_ms ?? 0, echoKey: !!body.echo_key, ignoreMetadataQuery: !!body.ignore_metadata_query, startDelayMs: body.start_delay_ms ?? 0 };
    return sendJson(res, 200, fake.faults);
  }
  const token = tokenControl(fake, req.method, path, body);
  if (token) return sendJson(res, token.status, token.body);
  const m = /^\/_fake\/sandboxes\/([^/]+)\/vanish$/.exec(path);
  if (m && req.method === "POST") {
    const ok = fake.sandboxes.kill(m[1]);
    return sendJson(res, ok ? 200 : 404, { vanished: ok });
  }
  if (path === "/_fake/requests" && req.method === "GET") {
    return sendJson(res, 200, fake.requests);
  }
  if (path === "/_fake/requests" && req.method === "DELETE") {
    fake.requests.length = 0;
    return sendJson(res, 200, {});
  }
  return sendError(res, 404, `no fake control ${path}`);
}
