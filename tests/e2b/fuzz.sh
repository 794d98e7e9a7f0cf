#!/bin/sh
# Builds the libFuzzer target over the decoder of envd's process stream
# with clang (-fsanitize=fuzzer,address,undefined) from the plugin's
# sources and runs it for a bounded time over the seeds in
# tests/e2b/corpus. A crash, a hang, a leak or a sanitizer report fails it.
#
# Environment: TASKBOX_SRCDIR and TASKBOX_BUILDDIR (set by `make check`;
# the build dir supplies config.h), FUZZ_SECONDS (default 20), CLANG
# (default clang).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${TASKBOX_SRCDIR:-$here/../..}
builddir=${TASKBOX_BUILDDIR:-}
seconds=${FUZZ_SECONDS:-20}
cc=${CLANG:-clang}

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "fuzz: skipped: $cc not found" >&2
	exit 77
fi
if [ -z "$builddir" ] || [ ! -f "$builddir/config.h" ]; then
	echo "fuzz: TASKBOX_BUILDDIR must name a configured build" >&2
	exit 99
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/taskbox-e2b-fuzz.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

plugin=$srcdir/plugins/e2b
# shellcheck disable=SC2046
$cc -g -O1 -std=c11 -D_GNU_SOURCE \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I"$builddir" -I"$srcdir/include" \
	$(pkg-config --cflags jansson libcurl) \
	-o "$work/fuzz" "$here/fuzz_process_stream.c" \
	"$plugin/process_stream.c" "$plugin/connect_frame.c" \
	$(pkg-config --libs jansson) || exit 99

mkdir "$work/corpus"
cd "$work" || exit 99
"$work/fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-max_len=65536 -print_final_stats=1 -error_exitcode=1 \
	-timeout_exitcode=1 -artifact_prefix="$work/" \
	"$work/corpus" "$here/corpus" 2>"$work/log"
rc=$?
tail -n 20 "$work/log" >&2
if [ $rc -ne 0 ]; then
	for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* \
		"$work"/oom-*; do
		[ -f "$f" ] || continue
		echo "fuzz: finding $(basename "$f"), base64:" >&2
		base64 "$f" >&2
	done
fi
exit $rc
