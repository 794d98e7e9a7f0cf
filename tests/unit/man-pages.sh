#!/bin/sh
# The man pages format without a single groff warning, and taskbox(1)
# names every subcommand, option and environment variable that the
# command line's own help texts name. Skipped without groff.
set -u

src=${TASKBOX_SRCDIR:?run through make check}
bin=${TASKBOX_BIN:?run through make check}
if ! command -v groff >/dev/null 2>&1; then
	echo "SKIP: groff is not installed"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

for page in "$src/docs/taskbox.1" "$src/docs/taskbox-provider.3"; do
	status=0
	groff -man -Tutf8 -ww -z "$page" >"$tmp/warnings" 2>&1 || status=$?
	if [ "$status" -ne 0 ] || [ -s "$tmp/warnings" ]; then
		echo "FAIL: groff -man -ww -z ${page#"$src"/} (exit $status):"
		sed 's/^/  | /' "$tmp/warnings"
		fail=1
	else
		echo "ok: ${page#"$src"/} formats without a warning"
	fi
done

# The page as plain text: no bold, underline or overstrike.
groff -man -Tascii -P-cbou "$src/docs/taskbox.1" >"$tmp/taskbox.txt" 2>/dev/null
for sub in "" serve providers check-config help; do
	# shellcheck disable=SC2086
	"$bin" help $sub >>"$tmp/help.txt" || fail=1
done
words=$(grep -oE -- '--[a-z][a-z-]*|\$[A-Z_]+' "$tmp/help.txt" | tr -d '$' | sort -u)
for word in serve providers check-config help $words; do
	if grep -qF -- "$word" "$tmp/taskbox.txt"; then
		echo "ok: taskbox(1) names $word"
	else
		echo "FAIL: taskbox --help names $word, taskbox(1) does not"
		fail=1
	fi
done
# What taskbox is today, said by both: the two transports, the four
# providers, the service.
for word in stdio "Streamable HTTP" local docker e2b k8s systemd taskbox.socket; do
	for text in "$tmp/help.txt" "$tmp/taskbox.txt"; do
		if ! tr '\n' ' ' <"$text" | tr -s ' ' | grep -qF -- "$word"; then
			echo "FAIL: ${text##*/} does not say $word"
			fail=1
		fi
	done
done
exit $fail
