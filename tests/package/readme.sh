#!/bin/bash
# The README's two commands, as written, in a root shell without sudo: the
# first (set-up, then the demo) is run; the second's set-up is the first's
# and its main job is this whole test run, so it is only checked to be what
# .ci/run runs. Then tests/install-deps.sh's way to root: run by a user
# that is not root, it runs itself again through sudo, and without sudo it
# says so and exits 2.
#
#   readme.sh SRC WORK     TASKBOX_BUILDDIR: a build the demo may reuse
set -uo pipefail
src=$1 work=$2
. "$src/tests/package/lib.sh"

first=$(awk '/^```sh$/ { on = 1; next } on && /^```$/ { exit } on' "$src/README.md" | sed -n 1p)
second=$(awk '/^```sh$/ { on = 1; next } on && /^```$/ { exit } on' "$src/README.md" | sed -n 2p)
echo "  README: $first"
echo "  README: $second"
check "the README's first command has no sudo" sh -c "! echo '$first' | grep -qw sudo"
check "the README's second command is .ci/run's" sh -c \
	"[ '$second' = 'tests/install-deps.sh && tests/run-all.sh' ] && grep -qx 'tests/install-deps.sh' '$src/.ci/run' && grep -qx 'exec tests/run-all.sh' '$src/.ci/run'"

# A root shell without sudo: a sudo on PATH that is not found.
nosudo=$work/nosudo
mkdir -p "$nosudo"
printf '#!/bin/sh\necho "sudo: command not found" >&2\nexit 127\n' >"$nosudo/sudo"
chmod +x "$nosudo/sudo"
if (cd "$src" && env PATH="$nosudo:$PATH" bash -c "$first") >"$work/readme-first.log" 2>&1; then
	pass "the README's first command, as root without sudo"
else
	tail -n 30 "$work/readme-first.log" | sed 's/^/  | /'
	fail "the README's first command, as root without sudo"
fi
grep -q '^== Done\.$' "$work/readme-first.log" || fail "the demo ran to its end"

# Not root: through sudo when there is one, else a clear refusal.
user=65534
stub=$work/sudo-stub
rm -rf "$stub"
mkdir -p "$stub"
ln -s "$(command -v id)" "$stub/id"
chmod 755 "$work" "$stub"
printf '#!/bin/sh\necho "$@" >"%s/sudo-args"\n' "$stub" >"$stub/sudo"
chmod 755 "$stub/sudo"
touch "$stub/sudo-args" && chown "$user" "$stub/sudo-args"
setpriv --reuid=$user --regid=$user --clear-groups env PATH="$stub" \
	"$src/tests/install-deps.sh" --build >/dev/null 2>&1
check "not root: install-deps.sh runs itself again through sudo ($(cat "$stub/sudo-args"))" \
	[ "$(cat "$stub/sudo-args")" = "-- $src/tests/install-deps.sh --build" ]
rm "$stub/sudo"
msg=$(setpriv --reuid=$user --regid=$user --clear-groups env PATH="$stub" \
	"$src/tests/install-deps.sh" --build 2>&1)
rc=$?
check "not root and no sudo: exit 2, \"$msg\"" sh -c "[ $rc -eq 2 ] && echo '$msg' | grep -q 'run it as root'"
exit $((failures > 0))
