#!/bin/sh
# A real Docker-compatible engine for the docker provider's tests: podman's
# Docker API service on a unix socket, with every bit of its state (storage,
# runtime files, the socket, the config, the log) in one directory, and a
# test image built locally from host files (no registry).
#
#   engine.sh start DIR           start the service and build the image
#   engine.sh env DIR             print DOCKER_HOST=..., TASKBOX_DOCKER_IMAGE=...
#                                 and TASKBOX_DOCKER_IMAGE_NOPYTHON=... (the
#                                 same image without python3)
#   engine.sh service-stop DIR    stop the service only (containers live on)
#   engine.sh service-start DIR   start the service again on the same state
#   engine.sh proxy DIR           serve the engine on loopback tcp too: plain,
#                                 and TLS with client certificates (socat);
#                                 prints TASKBOX_DOCKER_TCP=tcp://..., and
#                                 TASKBOX_DOCKER_TLS=tcp://... with
#                                 TASKBOX_DOCKER_TLS_DIR=DIR/tls (ca.pem,
#                                 cert.pem, key.pem)
#   engine.sh latency DIR MS      serve the engine on a second unix socket
#                                 that delays each chunk a client sends by
#                                 MS milliseconds (latency-proxy.mjs, node);
#                                 prints DOCKER_HOST=unix://... for it
#   engine.sh stop DIR            remove every container, stop, unmount, delete
#
# TASKBOX_ENGINE_NO_INIT=1 at start: an engine without an init binary.
#
# Exit 77 (skip) only when podman is absent and cannot be installed (not
# root); any other failure prints the engine's own error and exits 1.
set -eu

IMAGE=localhost/taskbox-test:latest
IMAGE_NOPYTHON=localhost/taskbox-test:nopython

die() {
	echo "engine.sh: $*" >&2
	exit 1
}

usage="usage: engine.sh start|env|proxy|service-stop|service-start|stop DIR, or engine.sh latency DIR MS"
case $# in
2) ;;
3) [ "$1" = latency ] || die "$usage" ;;
*) die "$usage" ;;
esac
cmd=$1
dir=$2

pm() {
	CONTAINERS_CONF="$dir/containers.conf" podman --root "$dir/storage" \
		--runroot "$dir/run" --tmpdir "$dir/libpod" "$@"
}

# The engine and the image's parts: podman, runc, busybox-static.
ensure_podman() {
	command -v podman >/dev/null 2>&1 && command -v runc >/dev/null 2>&1 &&
		command -v busybox >/dev/null 2>&1 && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "engine.sh: podman, runc or busybox missing and not root: skipping" >&2
		exit 77
	fi
	pkgs="podman runc busybox-static"
	# shellcheck disable=SC2086
	apt-get install -y $pkgs >"$dir/apt.log" 2>&1 ||
		{ apt-get update >>"$dir/apt.log" 2>&1 &&
			apt-get install -y $pkgs >>"$dir/apt.log" 2>&1; } ||
		die "cannot install $pkgs: $(tail -n 3 "$dir/apt.log")"
}

# With TASKBOX_ENGINE_NO_INIT=1 the engine has no init binary: podman's
# init_path (read from [engine] only) names a file that does not exist, as
# on a machine without catatonit.
write_conf() {
	hard=$(ulimit -Hn)
	init_path_line=
	[ "${TASKBOX_ENGINE_NO_INIT:-0}" = 1 ] &&
		init_path_line="init_path = \"$dir/no-such-init/catatonit\""
	cat >"$dir/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$hard:$hard", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$dir/events.log"
exit_command_delay = 60
${init_path_line}
EOF
}

service_start() {
	rm -f "$dir/engine.sock"
	CONTAINERS_CONF="$dir/containers.conf" setsid podman \
		--root "$dir/storage" --runroot "$dir/run" --tmpdir "$dir/libpod" \
		system service --time=0 "unix://$dir/engine.sock" \
		</dev/null >>"$dir/service.log" 2>&1 &
	echo $! >"$dir/service.pid"
	i=0
	while [ $i -lt 100 ]; do
		if curl -sf --unix-socket "$dir/engine.sock" \
			http://localhost/_ping >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$(cat "$dir/service.pid")" 2>/dev/null ||
			die "the engine exited: $(tail -n 5 "$dir/service.log")"
		sleep 0.1
		i=$((i + 1))
	done
	die "the engine did not answer in 10 s: $(tail -n 5 "$dir/service.log")"
}

service_stop() {
	[ -f "$dir/service.pid" ] || return 0
	pid=$(cat "$dir/service.pid")
	kill "$pid" 2>/dev/null || true
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$dir/service.pid" "$dir/engine.sock"
}

# The root filesystem: busybox-static applets, the host's python3 with the
# libraries it links and its stdlib, a minimal passwd and group.
build_image() {
	root="$dir/rootfs"
	rm -rf "$root"
	mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/root" \
		"$root/home/user" "$root/proc" "$root/sys" "$root/dev" "$root/usr/bin"
	chmod 1777 "$root/tmp"
	chmod 700 "$root/root"
	chown 1000:1000 "$root/home/user"
	bb=$(command -v busybox) || die "busybox-static is not installed"
	cp "$bb" "$root/bin/busybox"
	for applet in $("$root/bin/busybox" --list); do
		[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
	done
	py=$(readlink -f /usr/bin/python3)
	cp "$py" "$root/usr/bin/python3"
	# The libraries both link (none for busybox-static).
	for lib in $({ ldd "$py"; ldd "$bb" || true; } 2>/dev/null |
		awk '/=>/ { print $3 } /^\t\// { print $1 }' | sort -u); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	mkdir -p "$root/usr/lib"
	tar -C /usr/lib --exclude "python$ver/test" --exclude '__pycache__' \
		-cf - "python$ver" | tar -C "$root/usr/lib" -xf -
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
	tar -C "$root" -cf "$dir/rootfs.tar" .
	tar -C "$root" --exclude ./usr/bin/python3 --exclude "./usr/lib/python$ver" \
		-cf "$dir/rootfs-nopython.tar" .
	rm -rf "$root"
	pm import --change 'CMD ["/bin/sh"]' \
		--change 'ENV PATH=/usr/bin:/bin' \
		"$dir/rootfs.tar" "$IMAGE" >"$dir/import.log" 2>&1 ||
		die "podman import failed: $(tail -n 5 "$dir/import.log")"
	pm import --change 'CMD ["/bin/sh"]' \
		--change 'ENV PATH=/usr/bin:/bin' \
		"$dir/rootfs-nopython.tar" "$IMAGE_NOPYTHON" >"$dir/import.log" 2>&1 ||
		die "podman import failed: $(tail -n 5 "$dir/import.log")"
	rm -f "$dir/rootfs.tar" "$dir/rootfs-nopython.tar"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A CA, a server certificate for localhost and a client certificate.
make_certs() {
	t="$dir/tls"
	mkdir -p "$t"
	(
		cd "$t" &&
			openssl req -x509 -newkey rsa:2048 -nodes -days 2 \
				-subj /CN=taskbox-test-ca -keyout ca-key.pem -out ca.pem &&
			openssl req -newkey rsa:2048 -nodes -subj /CN=localhost \
				-keyout server-key.pem -out server.csr &&
			printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext &&
			openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem \
				-CAcreateserial -days 2 -extfile san.ext -out server.pem &&
			openssl req -newkey rsa:2048 -nodes -subj /CN=client \
				-keyout key.pem -out client.csr &&
			openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem \
				-CAcreateserial -days 2 -out cert.pem
	) >"$dir/openssl.log" 2>&1 ||
		die "cannot make test certificates: $(tail -n 3 "$dir/openssl.log")"
}

proxy() {
	if ! command -v socat >/dev/null 2>&1; then
		[ "$(id -u)" = 0 ] || { echo "engine.sh: socat missing" >&2; exit 77; }
		apt-get install -y socat >"$dir/apt.log" 2>&1 ||
			die "cannot install socat: $(tail -n 3 "$dir/apt.log")"
	fi
	make_certs
	plain=$(free_port)
	tls=$(free_port)
	setsid socat "TCP-LISTEN:$plain,bind=127.0.0.1,reuseaddr,fork" \
		"UNIX-CONNECT:$dir/engine.sock" </dev/null >>"$dir/proxy.log" 2>&1 &
	echo $! >"$dir/proxy-plain.pid"
	setsid socat "OPENSSL-LISTEN:$tls,bind=127.0.0.1,reuseaddr,fork,cert=$dir/tls/server.pem,key=$dir/tls/server-key.pem,cafile=$dir/tls/ca.pem,verify=1" \
		"UNIX-CONNECT:$dir/engine.sock" </dev/null >>"$dir/proxy.log" 2>&1 &
	echo $! >"$dir/proxy-tls.pid"
	for port in $plain $tls; do
		i=0
		until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; do
			i=$((i + 1))
			[ $i -lt 50 ] || die "socat did not listen: $(tail -n 3 "$dir/proxy.log")"
			sleep 0.1
		done
	done
	echo "TASKBOX_DOCKER_TCP=tcp://127.0.0.1:$plain"
	echo "TASKBOX_DOCKER_TLS=tcp://localhost:$tls"
	echo "TASKBOX_DOCKER_TLS_DIR=$dir/tls"
}

proxy_stop() {
	for f in "$dir/proxy-plain.pid" "$dir/proxy-tls.pid"; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
		rm -f "$f"
	done
	return 0
}

# A latency proxy in front of the engine's socket, one per delay.
latency() {
	ms=$1
	case $ms in
	'' | *[!0-9]*) die "latency: MS must be a whole number of milliseconds" ;;
	esac
	command -v node >/dev/null 2>&1 || { echo "engine.sh: node missing" >&2; exit 77; }
	[ -S "$dir/engine.sock" ] || die "latency: no engine at $dir (start it first)"
	sock="$dir/latency-$ms.sock"
	if [ -S "$sock" ] && [ -f "$dir/latency-$ms.pid" ] &&
		kill -0 "$(cat "$dir/latency-$ms.pid")" 2>/dev/null; then
		echo "DOCKER_HOST=unix://$sock"
		return 0
	fi
	rm -f "$sock"
	setsid node "$(dirname "$0")/latency-proxy.mjs" "$sock" "$dir/engine.sock" "$ms" \
		</dev/null >>"$dir/latency.log" 2>&1 &
	echo $! >"$dir/latency-$ms.pid"
	i=0
	until [ -S "$sock" ]; do
		kill -0 "$(cat "$dir/latency-$ms.pid")" 2>/dev/null ||
			die "the latency proxy exited: $(tail -n 3 "$dir/latency.log")"
		i=$((i + 1))
		[ $i -lt 100 ] || die "the latency proxy did not listen: $(tail -n 3 "$dir/latency.log")"
		sleep 0.1
	done
	echo "DOCKER_HOST=unix://$sock"
}

latency_stop() {
	for f in "$dir"/latency-*.pid; do
		[ -f "$f" ] || continue
		kill "$(cat "$f")" 2>/dev/null || true
		rm -f "$f"
	done
	return 0
}

case $cmd in
proxy)
	proxy
	;;
latency)
	[ $# -eq 3 ] || die "usage: engine.sh latency DIR MS"
	latency "$3"
	;;
start)
	mkdir -p "$dir"
	ensure_podman
	write_conf
	service_start
	build_image
	;;
env)
	echo "DOCKER_HOST=unix://$dir/engine.sock"
	echo "TASKBOX_DOCKER_IMAGE=$IMAGE"
	echo "TASKBOX_DOCKER_IMAGE_NOPYTHON=$IMAGE_NOPYTHON"
	;;
service-stop)
	service_stop
	;;
service-start)
	service_start
	;;
stop)
	[ -d "$dir" ] || exit 0
	proxy_stop
	latency_stop
	if [ -f "$dir/containers.conf" ]; then
		pm rm -af -t 0 >/dev/null 2>&1 || true
	fi
	service_stop
	# Exec monitors linger for exit_command_delay: end those of this
	# engine (their command lines name its directory).
	for p in /proc/[0-9]*; do
		case $(cat "$p/comm" 2>/dev/null) in
		conmon | podman | socat) ;;
		*) continue ;;
		esac
		if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "$dir/"; then
			kill -KILL "${p#/proc/}" 2>/dev/null || true
		fi
	done
	# Unmount whatever the engine left mounted under DIR, deepest first.
	awk -v d="$dir" 'index($2, d) == 1 { print $2 }' /proc/mounts |
		sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
	rm -rf "$dir"
	;;
*)
	die "unknown command $cmd"
	;;
esac
