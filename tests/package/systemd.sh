#!/bin/bash
# The service as systemd runs it: a container booted with systemd as its
# init (podman, from the clean Debian 12 root), where the package is
# installed and `systemctl enable --now taskbox.socket` is the one command.
# A client's first connection starts the service (socket activation); it
# is active and was ready (Type=notify); the tokens come from a credential
# (LoadCredential=); a stop is clean and within its budget; a task started
# before a restart is reached after it. The units pass systemd-analyze
# verify; systemd-analyze security's table is printed.
#
#   systemd.sh SRC WORK ENGINE   (ENGINE: tests/docker/engine.sh's state,
#                                 holding the image localhost/taskbox-debian)
set -uo pipefail
src=$1 work=$2 engine=$3
. "$src/tests/package/lib.sh"

name=taskbox-systemd-$$
cleanup() { pm rm -f -t 0 "$name" >/dev/null 2>&1; }
trap cleanup EXIT
node=$src/tests/package/session.mjs
sx() { pm exec "$name" "$@"; }
sxi() { pm exec -i "$name" "$@"; }

# Host network: apt reaches the mirror, the client reaches the port.
pm run -d --name "$name" --network=host --systemd=always \
	localhost/taskbox-debian:latest /sbin/init >"$work/systemd-run.log" 2>&1 ||
	{ sed 's/^/  | /' "$work/systemd-run.log"; die "podman boots a container with systemd"; }
booted() {
	case $(sx systemctl is-system-running 2>/dev/null) in
	running | degraded) return 0 ;;
	*) return 1 ;;
	esac
}
wait_for 60 booted || { sx systemctl --failed; die "systemd boots in the container"; }
pass "systemd boots in a podman container ($(sx systemctl is-system-running))"

deb=$(cd "$work/debs" && ls taskbox_*.deb)
pm cp "$work/debs/$deb" "$name:/tmp/$deb"
sx sh -c "apt-get update -qq && cd /tmp && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./$deb" \
	>"$work/systemd-apt.log" 2>&1 ||
	{ tail -n 20 "$work/systemd-apt.log" | sed 's/^/  | /'; die "apt-get install ./$deb under systemd"; }
check "the package made the system user taskbox" sx id taskbox
states=$(sx systemctl is-active taskbox.socket taskbox.service | tr '\n' ' ')
check "the service is not started by the install ($states)" [ "$states" = "inactive inactive " ]

out=$(sx systemd-analyze verify --man=no /lib/systemd/system/taskbox.socket \
	/lib/systemd/system/taskbox.service 2>&1)
[ -z "$out" ] || echo "$out" | sed 's/^/  | /'
check "systemd-analyze verify: no complaint" [ -z "$out" ]
sx systemd-analyze security --no-pager taskbox.service >"$work/security.txt" 2>&1
sed 's/^/  security: /' "$work/security.txt"

# A free port (the host's network is shared) and a token, as an operator
# would: a drop-in for the socket, a root-only file as the credential.
port=$(free_port)
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
sx mkdir -p /etc/systemd/system/taskbox.socket.d /etc/systemd/system/taskbox.service.d
printf '[Socket]\nListenStream=\nListenStream=127.0.0.1:%s\n' "$port" |
	sxi sh -c 'cat >/etc/systemd/system/taskbox.socket.d/port.conf'
printf '[Service]\nLoadCredential=http-tokens:/etc/taskbox/http-tokens\n' |
	sxi sh -c 'cat >/etc/systemd/system/taskbox.service.d/tokens.conf'
printf '%s\n' "$token" | sxi sh -c 'umask 077 && cat >/etc/taskbox/http-tokens'

check "systemctl enable --now taskbox.socket" sx systemctl enable --now taskbox.socket
state=$(sx systemctl is-active taskbox.service)
check "the service waits for a connection ($state)" [ "$state" = inactive ]

code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' --data '{}' "http://127.0.0.1:$port/mcp")
check "the first connection starts the service; no token: 401 (got $code)" [ "$code" = 401 ]
show() { sx systemctl show taskbox.service -p "$1" --value; }
check "systemctl show: active, running, Type=notify (so it said READY=1)" \
	sh -c "[ \"$(show ActiveState)/$(show SubState)/$(show Type)\" = active/running/notify ]"

ids=$(TASKBOX_TEST_TOKEN=$token timeout 120 node "$node" http "http://127.0.0.1:$port/mcp" start)
check "a client session with the credential's token starts a task ($ids)" [ -n "$ids" ]

start=$(date +%s%N)
sx systemctl stop taskbox.service
ms=$((($(date +%s%N) - start) / 1000000))
budget=$(($(show TimeoutStopUSec | sed 's/s$//') * 1000))
check "the service stops on SIGTERM in $ms ms (budget ${budget} ms)" [ "$ms" -lt "$budget" ]
check "it stopped cleanly: Result=$(show Result), status $(show ExecMainStatus)" \
	sh -c "[ \"$(show Result)\" = success ] && [ \"$(show ExecMainStatus)\" = 0 ]"
sx journalctl -u taskbox.service --no-pager -o cat 2>/dev/null | tail -n 8 | sed 's/^/  journal: /'

check "systemctl restart taskbox.service" sx systemctl restart taskbox.service
check "the task started before the restart is reached after it" \
	env TASKBOX_TEST_TOKEN="$token" timeout 120 node "$node" http "http://127.0.0.1:$port/mcp" finish $ids
sx systemctl stop taskbox.socket taskbox.service
exit $((failures > 0))
