// The fake's sandbox listing, as the service does it: GET /v2/sandboxes
// (running and paused, newest first, a page of `limit` at most 100 and a
// cursor in X-Next-Token) and the older GET /sandboxes (running ones, one
// page). Both filter on a metadata query: the parameter, once decoded, is
// "k=v&k2=v2" escaped once more as a whole, and each key and value escaped
// again (the service unescapes three times; the SDK escapes as often).
import { listedSandboxJson } from "./sandboxes.mjs";

const MAX_LIMIT = 100;

// Go's url.QueryUnescape: '+' is a space, %XX a byte; throws when malformed.
function queryUnescape(s) {
  if (/%(?![0-9A-Fa-f]{2})/.test(s)) throw new Error("invalid URL escape");
  return decodeURIComponent(s.replace(/\+/g, " "));
}

// The metadata filter of a query, or null when none was given.
export function parseMetadataQuery(raw) {
  if (raw === null) return null;
  const filters = {};
  for (const pair of queryUnescape(raw).split("&")) {
    const parts = pair.split("=");
    if (parts.length !== 2) throw new Error("invalid key value pair in query");
    filters[queryUnescape(parts[0])] = queryUnescape(parts[1]);
  }
  return filters;
}

function matches(sbx, filters) {
  if (!filters) return true;
  return Object.entries(filters).every(([k, v]) => Object.hasOwn(sbx.metadata, k) && sbx.metadata[k] === v);
}

// Newest first; sandboxes started in the same millisecond by id.
function newestFirst(a, b) {
  const dt = b.startedAt.getTime() - a.startedAt.getTime();
  return dt !== 0 ? dt : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const cursorOf = (sbx) => Buffer.from(`${sbx.startedAt.toISOString()}__${sbx.id}`).toString("base64url");

function parseCursor(token) {
  const parts = Buffer.from(token, "base64url").toString().split("__");
  const at = parts.length === 2 ? Date.parse(parts[0]) : NaN;
  if (!Number.isFinite(at)) throw new Error("invalid cursor");
  return { at, id: parts[1] };
}

// Answers {status, headers, body} for a list request, or null when the
// path is not a list endpoint.
export function listSandboxes(fake, method, url) {
  if (method !== "GET" || (url.pathname !== "/v2/sandboxes" && url.pathname !== "/sandboxes")) return null;
  const q = url.searchParams;
  let filters;
  try {
    filters = parseMetadataQuery(q.get("metadata"));
  } catch (e) {
    return { status: 400, body: { code: 400, message: `Error parsing metadata: ${e.message}` } };
  }
  // A fault switch: a service that ignores the query (the client must
  // filter on its side too).
  if (fake.faults.ignoreMetadataQuery) filters = null;
  const all = [...fake.sandboxes.byId.values()].filter((s) => matches(s, filters)).sort(newestFirst);
  if (url.pathname === "/sandboxes")
    return { status: 200, headers: {}, body: all.filter((s) => s.state === "running").map(listedSandboxJson) };

  const states = q.has("state") ? q.getAll("state").flatMap((s) => s.split(",")) : ["running", "paused"];
  if (states.some((s) => s !== "running" && s !== "paused"))
    return { status: 400, body: { code: 400, message: "state must be running or paused" } };
  let limit = MAX_LIMIT;
  if (q.has("limit")) {
    limit = Number(q.get("limit"));
    if (!Number.isInteger(limit) || limit < 1)
      return { status: 400, body: { code: 400, message: "limit must be an integer >= 1" } };
    limit = Math.min(limit, MAX_LIMIT);
  }
  // A test switch: pages no longer than this, whatever limit says.
  if (fake.listPageMax > 0) limit = Math.min(limit, fake.listPageMax);
  let chosen = all.filter((s) => states.includes(s.state));
  const headers = {};
  if (states.includes("running")) headers["X-Total-Running"] = String(chosen.filter((s) => s.state === "running").length);
  if (q.get("nextToken")) {
    let cur;
    try {
      cur = parseCursor(q.get("nextToken"));
    } catch {
      return { status: 400, body: { code: 400, message: "Invalid next token" } };
    }
    chosen = chosen.filter((s) => s.startedAt.getTime() < cur.at || (s.startedAt.getTime() === cur.at && s.id > cur.id));
  }
  if (chosen.length > limit) {
    chosen = chosen.slice(0, limit);
    headers["X-Next-Token"] = cursorOf(chosen[limit - 1]);
  }
  return { status: 200, headers, body: chosen.map(listedSandboxJson) };
}
