#!/bin/sh
# The libFuzzer run over tool arguments (tests/fuzz/fuzz_tools.c): the
# protocol core, the tools, the tasks layer, the provider host and the
# local provider, built from source by tests/fuzz/run.sh, over the seeds in
# tests/fuzz/tools_corpus for 30 s (FUZZ_SECONDS overrides). A crash, a
# hang, a leak, a sanitizer report or a process left behind fails it.
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${TASKBOX_SRCDIR:-$here/../..}
builddir=${TASKBOX_BUILDDIR:-}
core=$srcdir/core

if [ -z "$builddir" ] || [ ! -f "$builddir/core/supervisor/supervisor_source.c" ]; then
	echo "fuzz: TASKBOX_BUILDDIR must name a built tree" >&2
	exit 99
fi
# The local provider is compiled in: a plugin on the path (the asan build's,
# with gcc's ASan runtime) must not be loaded into clang's.
unset TASKBOX_PLUGIN_PATH
# shellcheck disable=SC2046
sh "$srcdir/tests/fuzz/run.sh" tools 30 "$here/tools_corpus" "jansson libcrypto" -- \
	-I"$core" -DTB_PKGLIBEXECDIR='"/nonexistent"' \
	-DPKGLIBDIR='"/nonexistent"' "$here/fuzz_tools.c" \
	$(ls "$core"/base/*.c "$core"/protocol/*.c "$core"/tools/*.c \
		"$core"/tasks/*.c "$core"/host/*.c "$core"/supervisor/*.c \
		"$srcdir"/plugins/local/*.c "$srcdir"/plugins/common/*.c \
		2>/dev/null) \
	"$builddir/core/supervisor/supervisor_source.c" -lltdl -lpthread -lm
rc=$?
# What a sandbox started must be gone with it. Destroy signals a sandbox's
# reaper and returns (reaper.c): on a loaded machine it may take a moment
# to exit, so a process counts as left behind only when it is still there
# 5 s later.
leftovers() {
	{
		grep -lsz 'taskbox-fuzz-tool[s]' /proc/[0-9]*/cmdline
		find /proc/[0-9]* -maxdepth 1 -name cwd -lname '*taskbox-fuzz-tools.*'
	} 2>/dev/null | head -n 5
}
i=0
while [ -n "$(leftovers)" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
left=$(leftovers)
if [ -n "$left" ]; then
	echo "fuzz: processes left behind: $left" >&2
	for f in $left; do
		d=${f%/*}
		echo "  ${d#/proc/}: $(tr '\0' ' ' <"$d/cmdline" 2>/dev/null | cut -c1-200)" >&2
	done
	rc=1
fi
exit $rc
