#!/bin/sh
# The official MCP conformance suite against taskbox. The suite speaks
# Streamable HTTP only, so supergateway bridges it to `taskbox serve
# --test-tools` on a loopback port. Scenarios for capabilities taskbox does
# not offer are listed in expected-failures.yml; any other failure, or a
# listed scenario that passes, fails this test.
#
# Environment: TASKBOX_BIN (required), TASKBOX_SRCDIR (default: this
# script's ../..), TASKBOX_TEST_WRAPPER (optional prefix, e.g. valgrind).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${TASKBOX_SRCDIR:-$here/../..}
modules=$srcdir/tests/node_modules
gateway=$modules/supergateway/dist/index.js
suite=$modules/@modelcontextprotocol/conformance/dist/index.js

if [ -z "${TASKBOX_BIN:-}" ]; then
	echo "conformance: TASKBOX_BIN is not set" >&2
	exit 99
fi
if ! command -v node >/dev/null 2>&1 || [ ! -f "$gateway" ] ||
	[ ! -f "$suite" ]; then
	echo "conformance: skipped: needs node and tests/node_modules" \
		"(cd tests && npm ci --ignore-scripts)" >&2
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/taskbox-conformance.XXXXXX") || exit 99
gw_pid=
cleanup() {
	if [ -n "$gw_pid" ]; then
		kill "$gw_pid" 2>/dev/null
		wait "$gw_pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A free loopback port: the kernel picks one, the probe releases it.
port=$(node -e 'const s=require("net").createServer();
s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close();});')

node --import "$here/loopback.mjs" "$gateway" \
	--stdio "${TASKBOX_TEST_WRAPPER:-} $TASKBOX_BIN serve --test-tools" \
	--outputTransport streamableHttp --stateful --port "$port" \
	--logLevel none >"$work/gateway.log" 2>&1 &
gw_pid=$!

# Wait up to 30 s for the bridge to listen.
tries=0
until node -e 'require("net").connect(+process.argv[1],"127.0.0.1")
	.on("connect",()=>process.exit(0)).on("error",()=>process.exit(1));' \
	"$port"; do
	tries=$((tries + 1))
	if [ $tries -ge 300 ] || ! kill -0 "$gw_pid" 2>/dev/null; then
		echo "conformance: the bridge did not start" >&2
		cat "$work/gateway.log" >&2
		exit 99
	fi
	sleep 0.1
done

cd "$work" || exit 99
node --import "$here/fs-globsync.mjs" "$suite" server \
	--url "http://127.0.0.1:$port/mcp" --suite all \
	--expected-failures "$here/expected-failures.yml" -o "$work/results"
rc=$?
if [ $rc -ne 0 ]; then
	echo "conformance: failed (exit $rc); the bridge said:" >&2
	tail -n 50 "$work/gateway.log" >&2
fi
exit $rc
