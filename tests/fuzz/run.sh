#!/bin/sh
# Builds a libFuzzer target with clang (-fsanitize=fuzzer,address,undefined)
# and runs it for a bounded time over a seed corpus. A crash, a hang (an
# input over 10 s), a leak or a sanitizer report fails it.
#
#   tests/fuzz/run.sh     the JSON-RPC reader and the MCP dispatcher, over
#                         the seeds in tests/fuzz/corpus, 60 s
#   tests/fuzz/run.sh NAME SECONDS CORPUS PACKAGES -- CLANG-ARGS...
#                         any target: its name, its default run time, its
#                         seed directory, the pkg-config packages it uses
#                         (space-separated) and the harness, sources and
#                         flags clang compiles
#
# Environment: TASKBOX_SRCDIR and TASKBOX_BUILDDIR (set by `make check`;
# the build dir supplies config.h), FUZZ_SECONDS (overrides the default
# run time), CLANG (default clang), FUZZ_REPRODUCE (a finding's file: run
# the target on it alone, with the sanitizer's whole report).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${TASKBOX_SRCDIR:-$here/../..}
builddir=${TASKBOX_BUILDDIR:-}
cc=${CLANG:-clang}

if [ $# -eq 0 ]; then
	core=$srcdir/core
	set -- jsonrpc 60 "$here/corpus" jansson -- -I"$core" \
		"$here/fuzz_jsonrpc.c" "$core/protocol/jsonrpc.c" "$core/protocol/mcp.c" \
		"$core/protocol/mcp_tools.c" "$core/tools/tools_registry.c" "$core/tools/schema.c" \
		"$core/tools/schema_check.c" "$core/protocol/tool_call.c" "$core/protocol/workers.c" \
		"$core/tools/test_tools.c" "$core/protocol/mcp_tasks.c" "$core/protocol/mcp_tasks_ext.c" \
		"$core/protocol/mcp_era.c" "$core/base/log.c" \
		"$core/tools/call.c" "$core/tools/task_backend.c" \
		"$core/protocol/mcp_stats.c" "$core/protocol/parker.c" \
		"$core/tools/tool_stats.c" "$core/base/metrics.c" \
		"$core/base/principal.c" "$core/base/audit.c" "$core/protocol/mcp_audit.c" \
		"$core/protocol/mcp_scope.c" \
		"$core/tasks/host_mask.c" -lpthread \
		-lm
fi
if [ $# -lt 5 ] || [ "$5" != -- ]; then
	echo "usage: $0 [NAME SECONDS CORPUS PACKAGES -- CLANG-ARGS...]" >&2
	exit 99
fi
name=$1 seconds=${FUZZ_SECONDS:-$2} seeds=$3 packages=$4
shift 5

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "fuzz: skipped: $cc not found" >&2
	exit 77
fi
if [ -z "$builddir" ] || [ ! -f "$builddir/config.h" ]; then
	echo "fuzz: TASKBOX_BUILDDIR must name a configured build" >&2
	exit 99
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/taskbox-fuzz-$name.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# shellcheck disable=SC2046,SC2086
$cc -g -O1 -std=c11 -D_GNU_SOURCE \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I"$builddir" -I"$srcdir/include" $(pkg-config --cflags $packages) \
	-o "$work/fuzz" "$@" $(pkg-config --libs $packages) || exit 99

if [ -n "${FUZZ_REPRODUCE:-}" ]; then
	"$work/fuzz" -runs=1 "$FUZZ_REPRODUCE"
	exit $?
fi
mkdir "$work/corpus"
cd "$work" || exit 99
# New inputs go to the scratch corpus; the seeds in the tree stay as they
# are. -error_exitcode and -timeout_exitcode make every finding fail.
"$work/fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-max_len=65536 -print_final_stats=1 -error_exitcode=1 \
	-timeout_exitcode=1 -artifact_prefix="$work/" \
	"$work/corpus" "$seeds" 2>"$work/log"
rc=$?
tail -n 25 "$work/log" >&2
if [ $rc -ne 0 ]; then
	for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* \
		"$work"/oom-*; do
		[ -f "$f" ] || continue
		echo "fuzz: finding $(basename "$f"), base64:" >&2
		base64 "$f" >&2
	done
fi
exit $rc
