#!/bin/sh
# The root filesystem the fake kube-apiserver bases every pod on
# (fake_apiserver.py --rootfs OUTDIR), built like the docker test image
# (tests/docker/engine.sh build_image): busybox-static applets, the host's
# python3 with the libraries it links and its stdlib, /etc/passwd and group,
# /tmp 1777, /home/user owned by 1000.
#
#   rootfs.sh OUTDIR
#
# Builds once: an OUTDIR holding .complete is left as it is. Exits 77 (skip)
# when busybox is missing and cannot be installed (not root).
set -eu

die() {
	echo "rootfs.sh: $*" >&2
	exit 1
}

[ $# -eq 1 ] || die "usage: rootfs.sh OUTDIR"
out=$1
[ -f "$out/.complete" ] && exit 0

if ! command -v busybox >/dev/null 2>&1; then
	[ "$(id -u)" = 0 ] || { echo "rootfs.sh: busybox missing and not root: skipping" >&2; exit 77; }
	apt-get install -y busybox-static >/dev/null 2>&1 ||
		{ apt-get update >/dev/null 2>&1 && apt-get install -y busybox-static >/dev/null 2>&1; } ||
		die "cannot install busybox-static"
fi

root=$out.tmp.$$
rm -rf "$root"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/root" "$root/home/user" \
	"$root/proc" "$root/sys" "$root/dev" "$root/usr/bin" "$root/usr/local/bin" \
	"$root/var/tmp"
chmod 1777 "$root/tmp" "$root/var/tmp"
chmod 700 "$root/root"
chown 1000:1000 "$root/home/user"
bb=$(command -v busybox)
cp "$bb" "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
# The system's python3 (not a pyenv or venv shim on PATH), as engine.sh does.
py=$(readlink -f /usr/bin/python3) || die "no /usr/bin/python3"
[ -x "$py" ] || die "no /usr/bin/python3"
cp "$py" "$root/usr/bin/python3"
stdlib=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
# The libraries both link (none for busybox-static), and those the stdlib's
# extension modules link (libssl for ssl, libffi for ctypes, ...).
for lib in $({
	ldd "$py"
	ldd "$bb" || true
	for so in "$stdlib"/lib-dynload/*.so; do ldd "$so" || true; done
} 2>/dev/null |
	awk '/=>/ { print $3 } /^\t\// { print $1 }' | sort -u); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
# Its stdlib, where it looks for it (/usr/lib/python3.N).
mkdir -p "$root$(dirname "$stdlib")"
tar -C "$(dirname "$stdlib")" --exclude "$(basename "$stdlib")/test" \
	--exclude '__pycache__' -cf - "$(basename "$stdlib")" |
	tar -C "$root$(dirname "$stdlib")" -xf -
cat >"$root/etc/passwd" <<EOF
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000:user:/home/user:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$root/etc/group" <<EOF
root:x:0:
user:x:1000:
nogroup:x:65534:
EOF
printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >"$root/etc/hosts"
: >"$root/.complete"
# A concurrent build that finished first wins; ours goes.
[ -f "$out/.complete" ] && exit 0
rm -rf "$out"
mv "$root" "$out"
trap - EXIT
