// Where the modern envelope's cost goes, counted rather than timed: the
// server run under valgrind's callgrind, which counts the instructions
// each function executes (the same count whatever else the machine is
// doing, so it holds on a shared machine where latencies do not). Each case
// is run twice, with SMALL and with SMALL + N requests; the difference over
// N is what one request costs, startup and setup cancelled out.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { HttpSession, connection } from "./httpclient.mjs";
import { listen } from "./httpservers.mjs";
import { META, legacyRequest, modernRequest } from "./modernload.mjs";
import { rawStdio } from "./rawstdio.mjs";
import { SYSTEM_PATH } from "./servers.mjs";

const SMALL = 10;
export const PROFILE_N = 500;

// The functions whose inclusive cost per request the report shows.
export const PROFILE_FUNCTIONS = [
  ["json_loadb", "all JSON parsing (jansson): the request body (once on stdio; over HTTP twice, the transport's parse then the protocol's), and any answer parsed again"],
  ["json_dumps", "all JSON writing (jansson): the answer"],
  ["tb_mcp_modern_result", "adding resultType and _meta serverInfo to a modern result"],
  ["tb_mcp_discover_result", "building the server/discover result"],
  ["http_modern_check", "checking the envelope and the MCP-Protocol-Version / Mcp-Method / Mcp-Name headers"],
  ["http_stateless_open", "the fresh protocol object of a modern HTTP request"],
  ["http_stateless_release", "…and freeing it"],
  ["http_modern_status", "the HTTP status of a modern answer (http_modern.c; its json_loadb included)"],
  ["http_session_feed", "a legacy request's session (lookup, then the protocol's handling)"],
];

export const valgrindFound = () =>
  ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].some(existsSync) && ["/usr/bin/callgrind_annotate", "/usr/local/bin/callgrind_annotate"].some(existsSync);

// Total instructions and inclusive instructions per function of the
// taskbox binary and of libjansson (its exported functions have names),
// from a callgrind output file. A function whose code was partly inlined
// from a header may have a second, smaller entry under that header's
// name: the first (largest) is taken.
function counts(file) {
  const total = Number((/^summary:\s*(\d+)/m.exec(readFileSync(file, "utf8")) || [])[1]);
  const r = spawnSync("callgrind_annotate", ["--inclusive=yes", "--threshold=100", "--auto=no", file], {
    encoding: "utf8",
    maxBuffer: 64 << 20,
    env: { PATH: SYSTEM_PATH },
  });
  const fns = {};
  for (const line of (r.stdout || "").split("\n")) {
    const m = /^\s*([\d,]+) \([^)]*\)\s+\S*?:([A-Za-z_][\w.]*) \[(.*)\]$/.exec(line);
    if (m && /taskbox$|libjansson/.test(m[3]) && !(m[2] in fns)) fns[m[2]] = Number(m[1].replace(/,/g, ""));
  }
  return { total, fns };
}

// One case under callgrind: `kind` is stdio-legacy, stdio-modern,
// http-legacy or http-modern; `op` get_task or baseline (legacy ping,
// modern server/discover); n requests one after another.
async function profiled(bin, env, dir, kind, op, n, getTask, token) {
  const out = join(dir, `callgrind.${kind}.${op}.${n}.out`);
  const vg = ["valgrind", "--tool=callgrind", `--callgrind-out-file=${out}`];
  if (kind.startsWith("stdio")) {
    const modern = kind === "stdio-modern";
    const s = await rawStdio([...vg, bin, "serve"], env, { initialize: !modern });
    const call = op === "get_task"
      ? () => s.rpc("tools/call", modern ? { ...getTask, _meta: META } : getTask, 600000)
      : modern ? () => s.rpc("server/discover", { _meta: META }, 600000) : () => s.rpc("ping", undefined, 600000);
    for (let i = 0; i < n; i++) await call();
    await s.close();
  } else {
    const srv = await listen("taskbox (callgrind)", [...vg, bin, "serve", "--http", "127.0.0.1:0"], { ...env, TASKBOX_HTTP_TOKEN: token }, 120000);
    const conn = connection(new URL(srv.url).origin);
    try {
      let req;
      if (kind === "http-legacy") {
        const sess = new HttpSession(srv.url, token);
        await sess.open(conn);
        req = op === "get_task" ? legacyRequest(sess, "tools/call", getTask) : legacyRequest(sess, "ping");
      } else {
        req = op === "get_task" ? modernRequest(srv.url, token, "tools/call", getTask) : modernRequest(srv.url, token, "server/discover");
      }
      for (let i = 0; i < n; i++) await req.send(conn);
    } finally {
      await conn.close();
      await srv.stop();
    }
  }
  if (!existsSync(out)) throw new Error(`callgrind wrote no ${out}`);
  return counts(out);
}

// Every case: per request, total instructions and each function's.
export async function profileEnvelope(bin, env, dir, getTask, token, log) {
  const out = {};
  for (const kind of ["stdio-legacy", "stdio-modern", "http-legacy", "http-modern"])
    for (const op of ["get_task", "baseline"]) {
      const ts = performance.now();
      const a = await profiled(bin, env, dir, kind, op, SMALL, getTask, token);
      const b = await profiled(bin, env, dir, kind, op, SMALL + PROFILE_N, getTask, token);
      const per = (x, y) => (Number.isFinite(x) && Number.isFinite(y) ? (y - x) / PROFILE_N : 0);
      const fns = {};
      for (const [fn] of PROFILE_FUNCTIONS) fns[fn] = per(a.fns[fn] ?? 0, b.fns[fn] ?? 0);
      out[`${kind} ${op}`] = { total: per(a.total, b.total), fns };
      log(`callgrind ${kind} ${op}: ${Math.round(out[`${kind} ${op}`].total)} instructions per request (${((performance.now() - ts) / 1000).toFixed(1)} s)`);
    }
  return out;
}
