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
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill -KILL "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck disable=SC2086
env -u TASKBOX_HTTP_TOKEN ${TASKBOX_TEST_WRAPPER:-} "$TASKBOX_BIN" serve \
	--http 127.0.0.1:0 --test-tools 2>"$work/server.log" &
server_pid=$!

# Wait up to 120 s (valgrind starts slowly) for the URL.
tries=0
url=
while [ -z "$url" ]; do
	url=$(sed -n 's|.*listening on \(http://[^ ]*\).*|\1|p' "$work/server.log" |
		head -n 1)
	[ -n "$url" ] && break
	tries=$((tries + 1))
	if [ $tries -ge 1200 ] || ! kill -0 "$server_pid" 2>/dev/null; then
		echo "conformance: the server did not start" >&2
		cat "$work/server.log" >&2
		exit 99
	fi
	sleep 0.1
done

# fs-globsync.mjs: the suite imports fs.globSync (Node 22) at start.
cd "$work" || exit 99
node --import "$here/fs-globsync.mjs" "$suite" server --url "$url" \
	--suite all --expected-failures "$here/expected-failures.yml" \
	-o "$work/results"
rc=$?

kill -TERM "$server_pid"
wait "$server_pid"
src=$?
server_pid=
if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
	[ $src -eq 0 ] || echo "conformance: the server exited $src after SIGTERM" >&2
	echo "conformance: failed; the server said:" >&2
	tail -n 50 "$work/server.log" >&2
	[ $rc -ne 0 ] || rc=1
fi
exit $rc
