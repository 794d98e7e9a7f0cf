#!/bin/sh
# Runs the taskbox benchmarks and writes bench/results/RESULTS.md and
# bench/results/latency.png.
#
#   bench/run.sh
#
# What it needs and does:
# - node and npm; installs the pinned MCP SDK client and DesktopCommander into
#   bench/node_modules (npm ci --ignore-scripts: no install scripts, so no
#   telemetry and no downloads of their own);
# - gnuplot for the chart (installs Debian's gnuplot-nox when run as root);
# - builds taskbox in $BENCH_BUILD_DIR (default: a directory under $TMPDIR)
#   unless $TASKBOX_BIN names a built binary, the C echo loop bench/echo.c,
#   bench/stamp.c (the wait figure's clock) and bench/seen.c (the remote
#   wake-up's record in place).
# - then bench/http.mjs: taskbox's Streamable HTTP transport beside the SDK's
#   own HTTP server (bench/peer/), and the cost of parked waits;
# - then bench/modern.mjs: MCP 2026-07-28 requests against legacy ones on the
#   same binary (stdio and HTTP), and through haproxy (/usr/sbin/haproxy)
#   against direct; writes bench/results/modern.md and modern.json.
# - then bench/remote.mjs: the docker and e2b providers' calls against one
#   raw request to the same backend, with no added latency and with 50 ms
#   (a podman engine from tests/docker/engine.sh, behind its latency proxy,
#   and the E2B fake with --latency-ms); writes bench/results/remote.md and
#   remote.json.
# - then bench/k8s.mjs: the k8s provider's calls (kind pod and kind sandbox)
#   against one raw pods/exec of `true` and one REST GET on the loopback fake
#   kube-apiserver (tests/k8s/fake_apiserver.py, pods built on
#   tests/k8s/rootfs.sh's root under $BENCH_BUILD_DIR); it needs root and
#   skips, saying why, otherwise; writes bench/results/k8s.md and k8s.json.
# - after each of those two, bench/waits.mjs: 1,000 waiting get_tasks over
#   10 sandboxes on each of their providers (docker and e2b, then k8s kind
#   pod and kind sandbox), against the same on the local provider in the
#   same run; writes bench/results/waits.md and waits.json.
# Environment: TASKBOX_BIN, TASKBOX_PLUGIN_PATH, BENCH_BUILD_DIR, BENCH_RUNS
# (measured runs, default 5), BENCH_RESULTS (default bench/results), CC,
# BENCH_ONLY (stdio, http, modern, remote or k8s: run that part alone;
# default all),
# BENCH_HTTP_RUNS (default 3), BENCH_HTTP_WAITS (parked waits, default 1000),
# BENCH_MODERN_RUNS (default 3), BENCH_MODERN_CALLS (stdio calls per side,
# op and run, default 2000), BENCH_MODERN_SLICES (default 4),
# BENCH_REMOTE_RUNS (default 3), BENCH_REMOTE_CALLS, BENCH_REMOTE_STARTS,
# BENCH_REMOTE_WAITS, BENCH_REMOTE_LATENCIES (default 0,50) and
# BENCH_REMOTE_PROVIDERS (default docker,e2b): see bench/remote.mjs;
# BENCH_K8S_RUNS (default 3), BENCH_K8S_CALLS, BENCH_K8S_STARTS and
# BENCH_K8S_KINDS (default pod,sandbox): see bench/k8s.mjs;
# BENCH_SCENARIO (with BENCH_ONLY=remote or k8s: "calls" runs remote.mjs or
# k8s.mjs alone, "waits" bench/waits.mjs alone; default both),
# BENCH_WAITS_SANDBOXES, BENCH_WAITS_PER, BENCH_WAITS_QUIET,
# BENCH_WAITS_TIMEOUT, BENCH_WAITS_WAKE: see bench/waits.mjs.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
build=${BENCH_BUILD_DIR:-${TMPDIR:-/tmp}/taskbox-bench-build}
jobs=$(nproc 2>/dev/null || echo 2)

say() { printf 'bench: %s\n' "$*" >&2; }

for tool in node npm cc; do
	command -v "$tool" >/dev/null || {
		say "$tool is required"
		exit 1
	}
done

# The clients, installed once per lockfile.
stamp="$here/node_modules/.bench-lockfile"
if ! cmp -s "$here/package-lock.json" "$stamp" 2>/dev/null; then
	say "installing the pinned clients (npm ci --ignore-scripts)"
	(cd "$here" && npm ci --ignore-scripts --no-audit --no-fund >&2)
	cp "$here/package-lock.json" "$stamp"
fi

# gnuplot for the chart.
if ! command -v gnuplot >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		say "installing gnuplot-nox"
		apt-get install -y -q gnuplot-nox >&2 ||
			{ apt-get update -q >&2 && apt-get install -y -q gnuplot-nox >&2; }
	else
		say "gnuplot is missing: the chart will not be drawn"
	fi
fi

mkdir -p "$build"

# taskbox, unless given.
if [ -z "${TASKBOX_BIN:-}" ]; then
	if [ ! -x "$top/configure" ]; then
		say "autoreconf"
		(cd "$top" && autoreconf -fi >&2)
	fi
	if [ ! -f "$build/Makefile" ]; then
		say "configuring taskbox in $build"
		(cd "$build" && "$top/configure" -q >&2)
	fi
	say "building taskbox in $build"
	make -C "$build" -j"$jobs" >&2
	TASKBOX_BIN=$build/taskbox
	if [ -z "${TASKBOX_PLUGIN_PATH:-}" ]; then
		for dir in "$build"/plugins/*/.libs; do
			[ -d "$dir" ] || continue
			TASKBOX_PLUGIN_PATH=${TASKBOX_PLUGIN_PATH:+$TASKBOX_PLUGIN_PATH:}$dir
		done
	fi
fi
[ -x "$TASKBOX_BIN" ] || {
	say "TASKBOX_BIN=$TASKBOX_BIN is not an executable"
	exit 1
}

# The physical floor for a round trip.
BENCH_ECHO_BIN=$build/bench-echo
${CC:-cc} -O2 -std=c11 -Wall -Wextra -o "$BENCH_ECHO_BIN" "$here/echo.c"
# The last command of the tasks whose exit the wait figure times.
BENCH_STAMP_BIN=$build/bench-stamp
${CC:-cc} -O2 -std=c11 -Wall -Wextra -o "$BENCH_STAMP_BIN" "$here/stamp.c"

# The moment a remote wake-up's record is put in place.
BENCH_SEEN_BIN=$build/bench-seen
${CC:-cc} -O2 -std=c11 -Wall -Wextra -o "$BENCH_SEEN_BIN" "$here/seen.c"

export TASKBOX_BIN BENCH_ECHO_BIN BENCH_STAMP_BIN BENCH_SEEN_BIN
export TASKBOX_PLUGIN_PATH=${TASKBOX_PLUGIN_PATH:-}
only=${BENCH_ONLY:-}
case $only in
'' | stdio | http | modern | remote | k8s) ;;
*)
	say "BENCH_ONLY=$only: stdio, http, modern, remote or k8s"
	exit 1
	;;
esac
scenario=${BENCH_SCENARIO:-}
case $scenario in
'' | calls | waits) ;;
*)
	say "BENCH_SCENARIO=$scenario: calls or waits"
	exit 1
	;;
esac
calls() { [ "$scenario" != waits ]; }
waits() { [ "$scenario" != calls ]; }
say "taskbox: $TASKBOX_BIN; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "$scenario" ] && { [ -z "$only" ] || [ "$only" = stdio ]; }; then node "$here/bench.mjs"; fi
if [ -z "$scenario" ] && { [ -z "$only" ] || [ "$only" = http ]; }; then node "$here/http.mjs"; fi
if [ -z "$scenario" ] && { [ -z "$only" ] || [ "$only" = modern ]; }; then node "$here/modern.mjs"; fi
if [ -z "$only" ] || [ "$only" = remote ]; then
	if calls; then node "$here/remote.mjs"; fi
	if waits; then BENCH_WAITS_PROVIDERS=docker,e2b node "$here/waits.mjs"; fi
fi
if [ -z "$only" ] || [ "$only" = k8s ]; then
	if calls; then TASKBOX_SRCDIR=$top TASKBOX_BUILDDIR=$build node "$here/k8s.mjs"; fi
	if waits; then
		TASKBOX_SRCDIR=$top TASKBOX_BUILDDIR=$build \
			BENCH_WAITS_PROVIDERS=k8s-pod,k8s-sandbox node "$here/waits.mjs"
	fi
fi
