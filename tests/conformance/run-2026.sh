#!/bin/sh
# The official MCP conformance suite, 0.2.0-alpha.12 (npm alias
# conformance-2026), with the scenarios MCP 2026-07-28 requires
# (--requirements 2026-07-28: the stateless revision, each request
# enveloped in _meta), against taskbox's own Streamable HTTP endpoint:
# `taskbox serve --http 127.0.0.1:0 --test-tools`. run.sh runs 0.1.16 on
# the legacy era beside it.
#
# Scenarios and checks for capabilities taskbox does not offer are listed
# in expected-failures-2026.yml. Any other failure or warning, a listed
# one that passes, or a server that does not exit cleanly on SIGTERM (a
# valgrind or sanitizer finding changes its exit code) fails this test.
# The suite judges its scored scenarios against that list itself;
# baseline-2026.mjs judges every scenario it ran, the unscored ones
# (tasks-* extension, pending header scenarios) too.
#
# The suite sends no Authorization header, so this server runs without
# TASKBOX_HTTP_TOKEN (on loopback). It runs on the built-in default config
# with its state in a scratch folder: a scenario may call the first listed
# tool (create_sandbox) with no arguments, and the sandboxes it makes are
# killed before the server stops.
#
# The suite's build asks for Node >= 22 only for fs.globSync, which no
# server scenario calls: fs-globsync.mjs stands in for it on Node 20.
#
# Environment: TASKBOX_BIN (required), TASKBOX_SRCDIR (default: this
# script's ../..), TASKBOX_TEST_WRAPPER (optional prefix, e.g. valgrind).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${TASKBOX_SRCDIR:-$here/../..}
suite=$srcdir/tests/node_modules/conformance-2026/dist/index.js

if [ -z "${TASKBOX_BIN:-}" ]; then
	echo "conformance-2026: TASKBOX_BIN is not set" >&2
	exit 99
fi
if ! command -v node >/dev/null 2>&1 || [ ! -f "$suite" ]; then
	echo "conformance-2026: skipped: needs node and tests/node_modules" \
		"(cd tests && npm ci --ignore-scripts)" >&2
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/taskbox-conformance-2026.XXXXXX") || exit 99
name=conformance-2026
# shellcheck source=tests/conformance/serve.sh
. "$here/serve.sh"
mkdir -p "$work/state" "$work/config" || exit 99
serve_start -u TASKBOX_HTTP_TOKEN -u TASKBOX_CONFIG \
	XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/config"

cd "$work" || exit 99
node --import "$here/fs-globsync.mjs" "$suite" server --url "$url" \
	--requirements 2026-07-28 \
	--expected-failures "$here/expected-failures-2026.yml" \
	-o "$work/results" >"$work/suite.out" 2>&1
rc=$?
cat "$work/suite.out"
node "$here/baseline-2026.mjs" "$here/expected-failures-2026.yml" \
	"$work/results" "$work/suite.out"
brc=$?
[ $rc -ne 0 ] || rc=$brc

# Kill the sandboxes the scenarios made (state/taskbox/INSTANCE/ID).
node --input-type=module - "$url" "$work/state/taskbox" <<'EOF' || rc=1
import { existsSync, readdirSync } from "node:fs";
const [url, dir] = process.argv.slice(2);
const ids = [];
for (const inst of existsSync(dir) ? readdirSync(dir) : [])
  for (const id of readdirSync(`${dir}/${inst}`))
    if (/^[0-9a-f]{32}$/.test(id)) ids.push(`${inst}:${id}`);
const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {} };
for (const [n, id] of ids.entries()) {
  const res = await fetch(url, { method: "POST", body: JSON.stringify({
    jsonrpc: "2.0", id: n, method: "tools/call",
    params: { name: "kill_sandbox", arguments: { sandbox_id: id }, _meta: meta } }),
    headers: { "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call",
      "mcp-name": "kill_sandbox" } });
  const text = await res.text();
  if (!text.includes('"destroyed":true')) {
    console.error(`conformance-2026: kill_sandbox ${id}: ${res.status} ${text}`);
    process.exitCode = 1;
  }
}
EOF

serve_stop $rc
