#!/bin/bash
# The container image: the Containerfile built with podman on the clean
# Debian 12 root tagged debian:bookworm-slim (so the Containerfile keeps
# its conventional FROM), then run as its non-root user with the docker
# provider (the test engine's socket mounted, its group added) and with
# the k8s provider in in_cluster mode (a service account's token, CA and
# namespace at the standard path, KUBERNETES_SERVICE_HOST/PORT naming the
# Kubernetes fake). A client session runs a task through each. The fake's
# request log is kept for the Role's check (WORK/k8s-requests.json).
#
#   image.sh SRC WORK ENGINE   (ENGINE: tests/docker/engine.sh's state)
set -uo pipefail
src=$1 work=$2 engine=$3
. "$src/tests/package/lib.sh"

image=localhost/taskbox:test
fake_pid=
cleanup() {
	pm rm -f -t 0 taskbox-img-docker-$$ taskbox-img-k8s-$$ >/dev/null 2>&1
	[ -z "$fake_pid" ] || kill "$fake_pid" 2>/dev/null
	[ -d "$work/fake" ] &&
		python3 "$src/tests/k8s/fake_apiserver.py" --state "$work/fake/state" --cleanup >/dev/null 2>&1
}
trap cleanup EXIT
node=$src/tests/package/session.mjs

ctx=$work/image-context
rm -rf "$ctx"
mkdir -p "$ctx/deploy/container"
cp "$src/Containerfile" "$ctx/"
cp "$src/deploy/container/config.json" "$ctx/deploy/container/"
cp "$work"/debs/taskbox_*.deb "$ctx/"
start=$(date +%s)
if pm build --network=host -t "$image" -f "$ctx/Containerfile" "$ctx" \
	>"$work/image-build.log" 2>&1; then
	pass "podman build of the Containerfile ($(($(date +%s) - start)) s)"
else
	tail -n 30 "$work/image-build.log" | sed 's/^/  | /'
	die "podman build of the Containerfile"
fi
user=$(pm image inspect -f '{{.Config.User}}' "$image")
check "the image runs as a user that is not root ($user)" \
	sh -c "[ -n '$user' ] && [ '$user' != root ] && [ '$user' != 0 ]"

# ---- docker provider: the engine's socket, group-owned as docker's is.
sock=$engine/engine.sock
gid=8415
chgrp "$gid" "$sock" && chmod 660 "$sock"
port=$(free_port)
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
cat >"$work/docker-config.json" <<JSON
{"default": "box",
 "providers": {"box": {"plugin": "docker", "settings": {
   "host": "unix:///run/engine.sock", "image": "localhost/taskbox-test:latest"}}},
 "http": {"listen": "127.0.0.1:$port"}}
JSON
pm run -d --name taskbox-img-docker-$$ --network=host --group-add "$gid" \
	-v "$sock:/run/engine.sock" -v "$work/docker-config.json:/etc/taskbox/config.json:ro" \
	-e TASKBOX_HTTP_TOKEN="$token" "$image" >/dev/null ||
	die "podman run of the image with the docker provider"
wait_for 20 curl -sf "http://127.0.0.1:$port/healthz" >/dev/null ||
	{ pm logs taskbox-img-docker-$$ | sed 's/^/  | /'; fail "the image serves /healthz"; }
check "the image with the docker provider: a session runs a task in a container" \
	env TASKBOX_TEST_TOKEN="$token" timeout 180 node "$node" http "http://127.0.0.1:$port/mcp" run
pm rm -f -t 5 taskbox-img-docker-$$ >/dev/null 2>&1

# ---- k8s provider, in_cluster, against the Kubernetes fake over TLS.
rootfs=$work/k8s-rootfs
flock "$rootfs.lock" sh "$src/tests/k8s/rootfs.sh" "$rootfs" || die "the fake's pod root"
rm -rf "$work/fake"
mkdir -p "$work/fake/sa"
satoken=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
python3 "$src/tests/k8s/fake_apiserver.py" --state "$work/fake/state" \
	--ready-file "$work/fake/ready.json" --tls --rootfs "$rootfs" --lifetime 900 \
	--token "$satoken" >"$work/fake/log" 2>&1 &
fake_pid=$!
wait_for 20 test -s "$work/fake/ready.json" || die "the Kubernetes fake starts"
ready() { python3 -c "import json,sys; print(json.load(open('$work/fake/ready.json'))['$1'])"; }
fport=$(ready port)
cp "$(ready ca)" "$work/fake/sa/ca.crt"
printf '%s' "$satoken" >"$work/fake/sa/token"
printf 'taskbox-sandboxes' >"$work/fake/sa/namespace"
chmod 644 "$work"/fake/sa/*
port=$(free_port)
cat >"$work/k8s-config.json" <<JSON
{"default": "kube",
 "providers": {
   "kube": {"plugin": "k8s", "settings": {"in_cluster": true,
     "templates": {"default": {"image": "python:3.12-slim"}}}},
   "kubesb": {"plugin": "k8s", "settings": {"in_cluster": true, "kind": "sandbox",
     "templates": {"default": {"image": "python:3.12-slim"}}}}},
 "http": {"listen": "127.0.0.1:$port"}}
JSON
pm run -d --name taskbox-img-k8s-$$ --network=host \
	-v "$work/fake/sa:/var/run/secrets/kubernetes.io/serviceaccount:ro" \
	-v "$work/k8s-config.json:/etc/taskbox/config.json:ro" \
	-e KUBERNETES_SERVICE_HOST=127.0.0.1 -e KUBERNETES_SERVICE_PORT="$fport" \
	-e TASKBOX_HTTP_TOKEN="$token" "$image" >/dev/null ||
	die "podman run of the image with the k8s provider"
wait_for 20 curl -sf "http://127.0.0.1:$port/healthz" >/dev/null ||
	{ pm logs taskbox-img-k8s-$$ | sed 's/^/  | /'; fail "the image serves /healthz"; }
check "the image with the k8s provider in_cluster: a session runs a task in a Pod" \
	env TASKBOX_TEST_TOKEN="$token" timeout 180 node "$node" http "http://127.0.0.1:$port/mcp" run kube
check "the image with the k8s provider in_cluster: a session runs a task in a Sandbox" \
	env TASKBOX_TEST_TOKEN="$token" timeout 180 node "$node" http "http://127.0.0.1:$port/mcp" run kubesb
pm rm -f -t 5 taskbox-img-k8s-$$ >/dev/null 2>&1
curl -sf --cacert "$work/fake/sa/ca.crt" -H "Authorization: Bearer $satoken" \
	"https://127.0.0.1:$fport/fake/log" >"$work/k8s-requests.json" ||
	fail "the Kubernetes fake's request log"
exit $((failures > 0))
