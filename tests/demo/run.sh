#!/bin/sh
# Runs the scripted demo session (tests/demo/session.mjs) against a build of
# taskbox, building one first when needed. Usage: tests/demo/run.sh
#   TASKBOX_BUILDDIR  a build directory to use (default: build/demo in the tree)
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${TASKBOX_BUILDDIR:-$top/build/demo}

if test ! -x "$build/taskbox" || test ! -d "$build/plugins/local/.libs"; then
	echo "demo: building taskbox in $build" >&2
	if test ! -x "$top/configure"; then
		(cd "$top" && autoreconf -fi) >&2
	fi
	mkdir -p "$build"
	(cd "$build" && { test -f Makefile || "$top/configure" -q; } &&
		make -j"$(nproc 2>/dev/null || echo 2)" >/dev/null) >&2
fi
if test ! -d "$top/tests/node_modules/@modelcontextprotocol/sdk"; then
	echo "demo: installing the MCP SDK client (npm ci)" >&2
	(cd "$top/tests" && npm ci --ignore-scripts --silent) >&2
fi

TASKBOX_BIN=$build/taskbox
TASKBOX_PLUGIN_PATH=$build/plugins/local/.libs
export TASKBOX_BIN TASKBOX_PLUGIN_PATH
exec node "$top/tests/demo/session.mjs"
