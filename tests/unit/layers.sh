#!/bin/sh
# The core's layers, top to bottom: a file includes headers of its own
# layer and of the layers below it, never of one above. Every #include "..."
# of every file under core/ is checked; each upward include is named with
# its file and line. The order is the flow of a request (docs/architecture.md).
set -u

src=${TASKBOX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
order="cli transport protocol tools tasks host base supervisor"

# The rank of a layer (0 is the top), or nothing for a name that is none.
rank() {
	i=0
	for l in $order; do
		[ "$l" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
}

bad=0 seen=0
for dir in "$src"/core/*/; do
	layer=$(basename "$dir")
	me=$(rank "$layer")
	if [ -z "$me" ]; then
		echo "FAIL: core/$layer/ is not a layer ($order)"
		bad=$((bad + 1))
		continue
	fi
	for f in $(find "$dir" -name '*.[ch]' | sort); do
		seen=$((seen + 1))
		grep -n '^#include "[a-z_]*/' "$f" | while IFS= read -r line; do
			target=$(echo "$line" | sed 's|^[0-9]*:#include "\([a-z_]*\)/.*|\1|')
			them=$(rank "$target")
			[ -n "$them" ] || continue
			if [ "$them" -lt "$me" ]; then
				echo "FAIL: ${f#"$src"/}:${line%%:*}: $layer includes $target, a layer above it: ${line#*:}"
			fi
		done
	done
done >"${TMPDIR:-/tmp}/layers.$$" 2>&1
cat "${TMPDIR:-/tmp}/layers.$$"
bad=$(grep -c '^FAIL' "${TMPDIR:-/tmp}/layers.$$")
rm -f "${TMPDIR:-/tmp}/layers.$$"
# A core file outside every layer folder is refused too.
for f in "$src"/core/*.[ch]; do
	[ -e "$f" ] || continue
	echo "FAIL: ${f#"$src"/} sits in no layer folder"
	bad=$((bad + 1))
done
if [ "$bad" -ne 0 ]; then
	echo "$bad upward include(s) or misplaced file(s)"
	exit 1
fi
echo "ok: every include under core/ goes down ($order)"
