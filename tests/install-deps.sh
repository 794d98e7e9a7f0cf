#!/bin/bash
# Installs, as root on Debian 12, every package that building taskbox and
# running all of its tests need. Idempotent; quiet unless something fails.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: run as root (sudo $0)" >&2
	exit 2
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
	gcc g++ make git xz-utils ca-certificates \
	autoconf automake libtool autoconf-archive pkg-config \
	libjansson-dev libcurl4-openssl-dev libltdl-dev libcriterion-dev \
	valgrind clang clang-format libclang-rt-14-dev \
	python3 bubblewrap podman runc busybox-static socat openssl \
	gnuplot-nox >/dev/null
# Node.js and npm: Debian's packages only where the machine has none (a
# machine that ships another Node.js build conflicts with Debian's npm).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
