#!/bin/bash
# The shipping tests (tests/run-all.sh's package stage): the Debian
# packages built and linted, installed in a clean Debian 12 root, run by
# systemd in a booted container, the container image with the docker and
# k8s providers, the Kubernetes manifests, and the README's commands.
# Independent parts run side by side: the root (mmdebstrap) and the test
# engine start while the packages build; the install, systemd and image
# tests then share the machine, mostly waiting on apt and podman.
#
#   tests/package/run.sh [WORK]    WORK: scratch (default build/package)
# Prints "PASS: ..." and "FAIL: ..." lines; exits 1 on any FAIL.
set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-$src/build/package}
. "$src/tests/package/lib.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: the package tests need root (chroot, podman)"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
engine=$work/engine
t0=$(date +%s)
elapsed() { echo "$(($(date +%s) - t0)) s"; }
cleanup() {
	[ -d "$engine" ] && "$src/tests/docker/engine.sh" stop "$engine" >/dev/null 2>&1
}
trap cleanup EXIT

mirror=$(debian_mirror)
# shellcheck disable=SC2086
mmdebstrap --quiet --variant=minbase --include=systemd,systemd-sysv,dbus \
	bookworm "$work/root.tar" $mirror >"$work/mmdebstrap.log" 2>&1 &
mm_pid=$!
"$src/tests/docker/engine.sh" start "$engine" >"$work/engine.log" 2>&1 &
engine_pid=$!

"$src/tests/package/build.sh" "$src" "$work" || failures=$((failures + 1))
echo "  (packages built at $(elapsed))"
wait "$mm_pid" || { sed 's/^/  | /' "$work/mmdebstrap.log"; die "mmdebstrap of a Debian 12 root"; }
pass "mmdebstrap: a clean Debian 12 root ($(du -m "$work/root.tar" | cut -f1) MB)"
wait "$engine_pid" || { sed 's/^/  | /' "$work/engine.log"; die "the test engine starts"; }
[ -f "$work/debs/$(cd "$work/debs" 2>/dev/null && ls taskbox_*.deb 2>/dev/null | head -n 1)" ] ||
	die "no package to test"
pm import "$work/root.tar" localhost/taskbox-debian:latest >"$work/import.log" 2>&1 ||
	{ sed 's/^/  | /' "$work/import.log"; die "podman import of the Debian root"; }
pm tag localhost/taskbox-debian:latest docker.io/library/debian:bookworm-slim
echo "  (root and engine ready at $(elapsed))"

"$src/tests/package/install.sh" "$src" "$work" >"$work/install.out" 2>&1 &
p1=$!
"$src/tests/package/systemd.sh" "$src" "$work" "$engine" >"$work/systemd.out" 2>&1 &
p2=$!
"$src/tests/package/image.sh" "$src" "$work" "$engine" >"$work/image.out" 2>&1 &
p3=$!
for p in $p1 $p2 $p3; do wait "$p" || failures=$((failures + 1)); done
cat "$work/install.out" "$work/systemd.out" "$work/image.out"
echo "  (install, systemd and image tests done at $(elapsed))"

"$src/tests/package/manifests.sh" "$src" "$work" || failures=$((failures + 1))
"$src/tests/package/readme.sh" "$src" "$work" || failures=$((failures + 1))
echo "  (package tests done in $(elapsed))"
exit $((failures > 0))
