#!/bin/sh
# The official MCP conformance suite against taskbox's own Streamable HTTP
# endpoint: `taskbox serve --http 127.0.0.1:0 --test-tools` (port 0: any
# free port; the server names its URL on stderr). Scenarios for
# capabilities taskbox does not offer are listed in expected-failures.yml;
# any other failure, or a listed scenario that passes, fails this test, and
# so does a server that does not exit cleanly on SIGTERM (a valgrind or
# sanitizer finding changes its exit code).
#
# The suite sends no Authorization header, so this server runs without
# TASKBOX_HTTP_TOKEN (on loopback); tests/http/*.test.mjs cover the tokens.
#
# Environment: TASKBOX_BIN (required), TASKBOX_SRCDIR (default: this
# script's ../..), TASKBOX_TEST_WRAPPER (optional prefix, e.g. valgrind).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${TASKBOX_SRCDIR:-$here/../..}
suite=$srcdir/tests/node_modules/@modelcontextprotocol/conformance/dist/index.js

if [ -z "${TASKBOX_BIN:-}" ]; then
	echo "conformance: TASKBOX_BIN is not set" >&2
	exit 99
fi
if ! command -v node >/dev/null 2>&1 || [ ! -f "$suite" ]; then
	echo "conformance: skipped: needs node and tests/node_modules" \
		"(cd tests && npm ci --ignore-scripts)" >&2
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/taskbox-conformance.XXXXXX") || exit 99
name=conformance
# shellcheck source=tests/conformance/serve.sh
. "$here/serve.sh"
serve_start -u TASKBOX_HTTP_TOKEN

cd "$work" || exit 99
node --import "$here/fs-globsync.mjs" "$suite" server --url "$url" \
	--suite all --expected-failures "$here/expected-failures.yml" \
	-o "$work/results"
rc=$?

serve_stop $rc
