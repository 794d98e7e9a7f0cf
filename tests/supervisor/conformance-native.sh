#!/bin/sh
# Runs the supervisor conformance suite on the native supervisor
# (taskbox-supervisor of the build), with the portable one as the second
# implementation on the same root.
#
# Behind $TASKBOX_TEST_WRAPPER (tests/vg --server in the valgrind stage)
# every verb runs under that wrapper. Valgrind follows fork without
# --trace-children, so the launcher, the middle process and the daemonised
# supervisor are all checked, each into its own log; only the command's
# exec of /bin/sh leaves valgrind. The logs are scanned here.
set -u
here=$(dirname "$0")
srcdir=${TASKBOX_SRCDIR:-$here/../..}
native=${TASKBOX_BUILDDIR:-.}/${TB_NATIVE_PROGRAM:-taskbox-supervisor}
if [ ! -x "$native" ]; then
	echo "conformance-native: $native is not built" >&2
	exit 99
fi
TB_SUPERVISOR_OTHER="python3 -I $srcdir/core/supervisor/taskbox_supervisor.py"
export TB_SUPERVISOR_OTHER
logs=$(mktemp -d "${TMPDIR:-/tmp}/taskbox-sup-logs.XXXXXX") || exit 99
# In a sanitizer build the daemonised supervisor's stderr is /dev/null:
# its reports go to files here instead.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$logs/asan"
UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$logs/ubsan"
TASKBOX_VG_LOGDIR=$logs
TB_SUPERVISOR="${TASKBOX_TEST_WRAPPER:+$TASKBOX_TEST_WRAPPER }$native"
export ASAN_OPTIONS UBSAN_OPTIONS TASKBOX_VG_LOGDIR TB_SUPERVISOR
status=0
python3 "$here/conformance.py" "$@" || status=$?
bad=$(grep -l 'ERROR SUMMARY: [1-9]' "$logs"/*.log 2>/dev/null || true)
for f in $bad "$logs"/asan.* "$logs"/ubsan.*; do
	[ -f "$f" ] || continue
	echo "conformance-native: $f:"
	cat "$f"
	status=1
done
echo "conformance-native: $(find "$logs" -name 'vg.*.log' | wc -l) supervisor processes under valgrind"
rm -rf "$logs"
exit "$status"
