#!/bin/bash
# The package in a clean Debian 12 root (root.tar, made by mmdebstrap):
# `apt-get install ./taskbox_*.deb` pulls in what it depends on; taskbox
# --version, providers and an SDK client session on the local provider
# work there; the server takes a socket from systemd-socket-activate (the
# LISTEN_FDS protocol, outside systemd); `apt-get purge taskbox` leaves no
# file behind.
#
#   install.sh SRC WORK    (WORK/root.tar and WORK/debs from run.sh)
set -uo pipefail
src=$1 work=$2
. "$src/tests/package/lib.sh"

root=$work/root
sa_pid=
cleanup() {
	[ -z "$sa_pid" ] || kill "$sa_pid" 2>/dev/null
	for m in proc dev/pts; do umount "$root/$m" 2>/dev/null; done
	rm -rf "$root"
}
trap cleanup EXIT
rm -rf "$root"
mkdir -p "$root"
tar -C "$root" -xf "$work/root.tar" || die "unpack the Debian root"
mount -t proc proc "$root/proc" || die "mount /proc in the root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

# What the root holds before, as paths (the runtime's own scratch aside).
list_files() {
	(cd "$root" && find . -xdev \( -path ./proc -o -path ./tmp -o -path ./var/cache \
		-o -path ./var/lib/apt -o -path ./var/log -o -path ./var/lib/dpkg \
		-o -path ./root -o -path ./run \) -prune -o -print) | sort
}
deb=$(cd "$work/debs" && ls taskbox_*.deb)
cp "$work/debs/$deb" "$root/tmp/"
# What apt-get install ./taskbox_*.deb pulls in, installed first, so that
# the root before taskbox and after its purge can be compared file by file.
in_root sh -c "apt-get update -qq && cd /tmp && apt-get install -s ./$deb" \
	>"$work/apt-simulate.log" 2>&1 || { tail -n 20 "$work/apt-simulate.log"; die "apt-get install -s ./$deb"; }
deps=$(awk '$1 == "Inst" && $2 != "taskbox" { print $2 }' "$work/apt-simulate.log" | tr '\n' ' ')
echo "  pulled in: $deps"
check "apt-get install ./$deb pulls in libmicrohttpd12 (loaded with dlopen)" \
	sh -c "echo ' $deps ' | grep -q ' libmicrohttpd12 '"
# shellcheck disable=SC2086
in_root apt-get install -y -qq $deps >"$work/apt-deps.log" 2>&1 ||
	{ tail -n 20 "$work/apt-deps.log" | sed 's/^/  | /'; die "apt-get install of the dependencies"; }
list_files >"$work/files-before"
if in_root sh -c "cd /tmp && apt-get install -y -qq ./$deb" >"$work/apt-install.log" 2>&1; then
	pass "apt-get install ./$deb in a clean Debian 12 root"
else
	tail -n 20 "$work/apt-install.log" | sed 's/^/  | /'
	die "apt-get install ./$deb"
fi

out=$(in_root taskbox --version 2>&1)
check "taskbox --version: $out" [ "${out#taskbox 0}" != "$out" ]
in_root taskbox providers >"$work/providers.log" 2>&1
rc=$?
sed 's/^/  | /' "$work/providers.log"
check "taskbox providers finds local, docker, e2b and k8s" \
	sh -c "[ $rc -eq 0 ] && grep -q 'docker' '$work/providers.log' && grep -q 'e2b' '$work/providers.log' && grep -q 'k8s' '$work/providers.log'"

node=$src/tests/package/session.mjs
check "an SDK client session on stdio, local provider" \
	node "$node" stdio "chroot $root env -i PATH=/usr/bin:/bin HOME=/root taskbox serve" run

# Socket activation outside systemd: systemd-socket-activate listens and
# starts taskbox at the first connection with the socket as descriptor 3.
port=$(free_port)
chroot "$root" env -i PATH=/usr/bin:/bin HOME=/root \
	systemd-socket-activate -l "127.0.0.1:$port" taskbox serve \
	>"$work/socket-activate.log" 2>&1 &
sa_pid=$!
wait_for 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" || fail "systemd-socket-activate listens"
check "a session over HTTP on the socket systemd-socket-activate passed (LISTEN_FDS)" \
	timeout 60 node "$node" http "http://127.0.0.1:$port/mcp" run
kill "$sa_pid" 2>/dev/null
wait "$sa_pid" 2>/dev/null
sa_pid=
grep -q 'listening on http://127.0.0.1:'"$port" "$work/socket-activate.log" ||
	sed 's/^/  | /' "$work/socket-activate.log"

# Purge, then compare with the root before the install: nothing new may
# remain.
in_root dpkg -L taskbox >"$work/taskbox-files"
if in_root apt-get purge -y -qq taskbox >"$work/apt-purge.log" 2>&1; then
	pass "apt-get purge taskbox"
else
	tail -n 20 "$work/apt-purge.log" | sed 's/^/  | /'
	fail "apt-get purge taskbox"
fi
list_files >"$work/files-after"
comm -13 "$work/files-before" "$work/files-after" >"$work/left-behind"
# The system user's entries stay, as Debian's users do.
grep -v -E '^\./etc/(passwd|group|shadow|gshadow)-?$|^\./etc/\.pwd\.lock$' \
	"$work/left-behind" >"$work/left-behind.strict"
if [ -s "$work/left-behind.strict" ]; then
	sed 's/^/  left: /' "$work/left-behind.strict"
	fail "apt-get purge taskbox leaves nothing behind"
else
	pass "apt-get purge taskbox leaves nothing behind ($(wc -l <"$work/taskbox-files") paths were installed)"
fi
exit $((failures > 0))
