#!/bin/bash
# Installs, as root on Debian 12, every package that building taskbox and
# running all of its tests need, Recommends never relied on, then checks
# that each runtime piece the tests use is really there. Idempotent; quiet
# unless something fails; a missing piece is named on one line, exit 1.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: run as root (sudo $0)" >&2
	exit 2
fi
export DEBIAN_FRONTEND=noninteractive

# The build: compilers (libc6-dev's static libc for the static supervisor,
# which gcc only Recommends), autotools, the libraries taskbox links.
build_pkgs="gcc g++ libc6-dev make git xz-utils ca-certificates
	autoconf automake libtool autoconf-archive pkg-config
	libjansson-dev libcurl4-openssl-dev libltdl-dev libcriterion-dev
	libmicrohttpd-dev libyaml-dev libssl-dev libwslay-dev libjose-dev"
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

apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends \
	$build_pkgs $check_pkgs $test_pkgs >/dev/null
# Node.js and npm: Debian's packages only where the machine has none (a
# machine that ships another Node.js build conflicts with Debian's npm).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

# Each runtime piece the tests use, where the tests look for it.
missing=()
for cmd in gcc clang make autoreconf libtoolize pkg-config valgrind \
	clang-format python3 bwrap busybox podman runc conmon curl socat \
	openssl gnuplot groff node npm; do
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
for pc in jansson libcurl criterion libmicrohttpd yaml-0.1 libcrypto jose; do
	pkg-config --exists "$pc" || missing+=("pkg-config module $pc")
done
[ -f /usr/include/ltdl.h ] || missing+=("header ltdl.h (package libltdl-dev)")
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
