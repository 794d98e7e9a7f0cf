#!/bin/bash
# Installs, on Debian 12, every package that building taskbox and running
# all of its tests need, Recommends never relied on, then checks that each
# runtime piece the tests use is really there. Idempotent; quiet unless
# something fails; a missing piece is named on one line, exit 1.
#
#   tests/install-deps.sh           the build and every test
#   tests/install-deps.sh --build   only what building taskbox needs
#
# As root it runs as it is; otherwise it runs itself again through sudo.
set -euo pipefail

mode=all
case ${1-} in
"") ;;
--build) mode=build ;;
*)
	echo "usage: tests/install-deps.sh [--build]" >&2
	exit 2
	;;
esac
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		exec sudo -- "$0" "$@"
	fi
	echo "install-deps: needs root, and there is no sudo: run it as root" >&2
	exit 2
fi
export DEBIAN_FRONTEND=noninteractive

# The build: compilers (libc6-dev's static libc for the static supervisor,
# which gcc only Recommends; binutils' objdump reads sonames), autotools,
# the libraries taskbox links or loads (libmicrohttpd, libsystemd), and
# Criterion, which configure requires for the unit tests.
build_pkgs="gcc g++ libc6-dev binutils make
	autoconf automake libtool autoconf-archive pkg-config
	libjansson-dev libcurl4-openssl-dev libltdl-dev libcriterion-dev
	libmicrohttpd-dev libsystemd-dev libyaml-dev libssl-dev libwslay-dev
	libjose-dev"
# The tests' checkout and distcheck tarball.
repo_pkgs="git xz-utils ca-certificates"
# The checks: valgrind, the sanitizer and fuzzer runtime, clang-format.
check_pkgs="valgrind clang clang-format libclang-rt-14-dev"
# The tests' real parts: the supervisor's fallback (python3), the local
# provider's isolation (bubblewrap), a Docker-API engine (podman with runc,
# conmon and its init binary catatonit, which podman only Recommends), the
# test image's userland (busybox-static), the tools the scripts call
# (curl, socat, openssl, procps), the bench's charts (gnuplot), the man
# pages' check (groff), the load balancer in front of replicas (haproxy).
test_pkgs="python3 bubblewrap procps
	podman runc conmon catatonit golang-github-containers-common
	busybox-static curl socat openssl gnuplot-nox groff-base haproxy"
# The package stage: the Debian package's build and lint (debhelper,
# lintian), a clean Debian 12 root (mmdebstrap), the units' checks and
# socket activation outside systemd (systemd: systemd-analyze,
# systemd-socket-activate), the manifests' checks (python3-yaml).
package_pkgs="debhelper dpkg-dev fakeroot lintian mmdebstrap systemd python3-yaml"

apt-get update -qq
if [ "$mode" = build ]; then
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $build_pkgs >/dev/null
	missing=()
	for cmd in gcc make autoreconf libtoolize pkg-config objdump; do
		command -v "$cmd" >/dev/null || missing+=("command $cmd")
	done
	for pc in jansson libcurl criterion libmicrohttpd libsystemd yaml-0.1 libcrypto jose; do
		pkg-config --exists "$pc" || missing+=("pkg-config module $pc")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "install-deps: missing after install: $(IFS=,; echo "${missing[*]}" | sed 's/,/, /g')" >&2
		exit 1
	fi
	exit 0
fi
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends \
	$build_pkgs $repo_pkgs $check_pkgs $test_pkgs $package_pkgs >/dev/null
# Node.js and npm: Debian's packages only where the machine has none (a
# machine that ships another Node.js build conflicts with Debian's npm).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

# Each runtime piece the tests use, where the tests look for it.
missing=()
for cmd in gcc clang make autoreconf libtoolize pkg-config valgrind \
	clang-format python3 bwrap busybox podman runc conmon curl socat \
	openssl gnuplot groff node npm dpkg-buildpackage dh lintian mmdebstrap \
	systemd-analyze systemd-socket-activate; do
	command -v "$cmd" >/dev/null || missing+=("command $cmd")
done
# haproxy is in /usr/sbin, which a non-root PATH may lack: the tests look
# there first.
[ -x /usr/sbin/haproxy ] || command -v haproxy >/dev/null ||
	missing+=("command haproxy (package haproxy)")
# podman runs containers with HostConfig.Init from this path (its
# init_path default); without it every create_sandbox fails.
[ -x /usr/libexec/podman/catatonit ] ||
	missing+=("podman's init binary /usr/libexec/podman/catatonit (package catatonit)")
for pc in jansson libcurl criterion libmicrohttpd libsystemd yaml-0.1 libcrypto jose; do
	pkg-config --exists "$pc" || missing+=("pkg-config module $pc")
done
[ -f /usr/include/ltdl.h ] || missing+=("header ltdl.h (package libltdl-dev)")
python3 -c 'import yaml' 2>/dev/null || missing+=("python3's yaml module (package python3-yaml)")
[ -f /usr/include/wslay/wslay.h ] ||
	missing+=("header wslay/wslay.h (package libwslay-dev)")
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; return (int)n * 0; }' |
	clang -x c -fsanitize=fuzzer,address -o /dev/null - 2>/dev/null; then
	missing+=("clang's libFuzzer runtime (package libclang-rt-14-dev)")
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: missing after install: $(IFS=,; echo "${missing[*]}" | sed 's/,/, /g')" >&2
	exit 1
fi
