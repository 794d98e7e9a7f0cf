#!/bin/bash
# The fake kube-apiserver (tests/k8s/fake_apiserver.py) judged by the real
# kubectl: every kubectl 1.30+ found runs the same checks against the fake
# over TLS (token, client certificate, and the inline -data kubeconfig
# fields): create, get (Table, jsonpath, 404), exec (exit codes, stdout and
# stderr apart, stdin with EOF, large output, start failure, signal), cp both
# ways, a dd range read, Sandboxes (create, exec, strategic patch refused,
# suspend, resume, renew, expiry with Retain and Delete) and delete. One
# kubectl 1.27-1.29 (SPDY only) must get the fake's clear 400. Then the
# faults: 401, an injected 401/403/429/500, a dropped exec stream (the
# process lives on), an eviction, activeDeadlineSeconds, image pull errors,
# and the fake killed and started again on the same state and port.
#
# Each check prints "ok" or "FAIL" with its command; exits 1 on any FAIL,
# 77 (skip) only when no kubectl 1.30+ exists (or the fake cannot chroot:
# not root).
#
# TASKBOX_K8S_FAKE=path runs another fake (to see the judge fail on a broken
# one); TASKBOX_KUBECTL_DIR (default /usr/lib/google-cloud-sdk/bin) is where
# kubectl.1.NN live; TASKBOX_K8S_VERSIONS="30 33" limits the versions.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

src=${TASKBOX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fake=${TASKBOX_K8S_FAKE:-$src/tests/k8s/fake_apiserver.py}
kdir=${TASKBOX_KUBECTL_DIR:-/usr/lib/google-cloud-sdk/bin}

# ---------------------------------------------------------------- kubectls
ws=()
for v in ${TASKBOX_K8S_VERSIONS:-30 31 32 33 34 35 36}; do
	[ -x "$kdir/kubectl.1.$v" ] && ws+=("$kdir/kubectl.1.$v")
done
if [ ${#ws[@]} -eq 0 ] && command -v kubectl >/dev/null 2>&1; then
	minor=$(kubectl version --client -o json 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["minor"].rstrip("+"))' 2>/dev/null)
	[ "${minor:-0}" -ge 30 ] 2>/dev/null && ws+=("$(command -v kubectl)")
fi
if [ ${#ws[@]} -eq 0 ]; then
	echo "SKIP: no kubectl 1.30 or later (WebSocket exec) in $kdir or on PATH: the fake kube-apiserver is not judged"
	exit 77
fi
spdy=""
for v in 29 28 27; do
	[ -x "$kdir/kubectl.1.$v" ] && { spdy=$kdir/kubectl.1.$v; break; }
done
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: the fake kube-apiserver chroots into its pod roots and needs root"
	exit 77
fi
for tool in python3 openssl curl busybox; do
	command -v $tool >/dev/null 2>&1 || { echo "FAIL: $tool is missing (tests/install-deps.sh)"; exit 1; }
done

# ---------------------------------------------------------------- set-up
tmp=$(mktemp -d "${TMPDIR:-/tmp}/taskbox-k8s-judge.XXXXXX") || exit 99
fakepid=""
cleanup() {
	[ -n "$fakepid" ] && kill "$fakepid" 2>/dev/null
	python3 "$fake" --state "$tmp/state" --cleanup 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

export HOME=$tmp/home KUBECONFIG=$tmp/state/kubeconfig
mkdir -p "$HOME"
TOKEN=judge-$RANDOM$RANDOM
port=0

start_fake() {
	rm -f "$tmp/ready"
	python3 "$fake" --state "$tmp/state" --ready-file "$tmp/ready" --tls \
		--token "$TOKEN" --lifetime 900 --rootfs "$tmp/rootfs" --port "$port" \
		>>"$tmp/fake.log" 2>&1 &
	fakepid=$!
	local i=0
	while [ ! -s "$tmp/ready" ]; do
		if ! kill -0 "$fakepid" 2>/dev/null || [ $i -ge 300 ]; then
			echo "FAIL: the fake did not start:"
			tail -n 20 "$tmp/fake.log"
			exit 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
	port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$tmp/ready")
	url=https://127.0.0.1:$port
	export url
}

t0=$(date +%s)
if ! sh "$src/tests/k8s/rootfs.sh" "$tmp/rootfs" >"$tmp/rootfs.log" 2>&1; then
	echo "FAIL: tests/k8s/rootfs.sh: $(tail -n 5 "$tmp/rootfs.log")"
	exit 1
fi
echo "# rootfs built in $(($(date +%s) - t0)) s"
start_fake
echo "# fake at $url (state $tmp/state)"

# ---------------------------------------------------------------- helpers
pass=0 fail=0
run() {
	out=$(timeout 60 bash -c "$1" 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
}
# check DESCRIPTION COMMAND EXPECTATION: runs COMMAND (bash), then evaluates
# EXPECTATION with $out, $err and $rc set.
check() {
	local t1 t2 took
	t1=$(date +%s%N)
	run "$2"
	t2=$(date +%s%N)
	took=$(((t2 - t1) / 100000000))
	took="[$((took / 10)).$((took % 10)) s]"
	if eval "$3"; then
		pass=$((pass + 1))
		echo "ok   $1 $took: $2"
	else
		fail=$((fail + 1))
		echo "FAIL $1 $took: $2"
		echo "     expected: $3 (rc=$rc)"
		printf '%s\n' "$out" | head -n 6 | sed 's/^/     out: /'
		printf '%s\n' "$err" | head -n 6 | sed 's/^/     err: /'
	fi
}
# wait_for SECONDS COMMAND EXPECTATION: runs COMMAND until EXPECTATION holds.
wait_for() {
	local end=$(($(date +%s) + $1))
	while :; do
		run "$2"
		eval "$3" && return 0
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.3
	done
}
api() { # METHOD PATH [JSON]: the control endpoint
	curl -sS --max-time 20 --cacert "$tmp/state/pki/ca.crt" -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' -X "$1" "$url$2" ${3:+--data "$3"}
}
ts() { date -u -d "+$1 seconds" +%Y-%m-%dT%H:%M:%SZ; }
has() { case $1 in *"$2"*) return 0 ;; esac; return 1; }
export TOKEN tmp
export -f api

pod_yaml() { # NAME [IMAGE] [EXTRA SPEC LINES]
	cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {app: judge, ver: "$1"}
spec:
  ${3:-restartPolicy: Never}
  containers:
  - name: main
    image: ${2:-busybox:1.36}
    env: [{name: GREETING, value: hello-from-spec}]
EOF
}
owner_yaml() { # NAME OWNER HASH
	cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {app: judge-owner, taskbox.dev/owner-hash: "$3"}
  annotations: {taskbox.dev/owner: "$2"}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox:1.36
EOF
}
sandbox_yaml() { # NAME SHUTDOWN POLICY
	cat <<EOF
apiVersion: agents.x-k8s.io/v1beta1
kind: Sandbox
metadata:
  name: $1
spec:
  shutdownTime: "$2"
  shutdownPolicy: $3
  podTemplate:
    metadata:
      labels: {app: judge-sandbox}
    spec:
      containers:
      - name: main
        image: busybox:1.36
EOF
}

head -c 3000000 /dev/urandom >"$tmp/blob"
big_md5=$(seq 1 200000 | md5sum | cut -d' ' -f1)
range_md5=$(dd if="$tmp/blob" iflag=skip_bytes,count_bytes skip=1000 count=4096 bs=65536 2>/dev/null | md5sum | cut -d' ' -f1)
blob_md5=$(md5sum <"$tmp/blob" | cut -d' ' -f1)

# ---------------------------------------------------------------- per version
for K in "${ws[@]}"; do
	v=${K##*kubectl.1.}
	case $v in */*) v=x ;; esac
	p=j$v sb=sb$v sbd=sbd$v
	echo "# $($K version --client 2>/dev/null | head -n 1)"
	pod_yaml "$p" >"$tmp/$p.yaml"
	check "create" "$K create -f $tmp/$p.yaml --validate=false" '[ $rc -eq 0 ] && has "$out" "pod/$p created"'
	check "list as a Table" "$K get pods" '[ $rc -eq 0 ] && printf "%s\n" "$out" | grep -Eq "^$p +1/1 +Running +0 "'
	check "get jsonpath" "$K get pod $p -o jsonpath='{.status.phase}'" '[ "$out" = Running ]'
	check "list with a label selector" "$K get pods -l ver=$p -o name" '[ "$out" = "pod/$p" ]'
	# Owners as taskbox records them: the exact owner in an annotation, a
	# hash of it in a label; the selector (equality, comma-joined) must pick
	# the one pod, chunked listing (limit, continue) must see every pod.
	owner_yaml "o$v" "alice@example.com" "67023fc4a7ff2a$v" >"$tmp/o$v.yaml"
	owner_yaml "m$v" "mallory" "0123456789abcd$v" >"$tmp/m$v.yaml"
	check "create pods with owner annotations and labels" \
		"$K create -f $tmp/o$v.yaml --validate=false && $K create -f $tmp/m$v.yaml --validate=false" '[ $rc -eq 0 ]'
	check "label selector on the owner hash" "$K get pods -l taskbox.dev/owner-hash=67023fc4a7ff2a$v -o name" \
		'[ "$out" = "pod/o$v" ]'
	check "comma-joined label selector" \
		"$K get pods -l app=judge-owner,taskbox.dev/owner-hash=0123456789abcd$v -o name" '[ "$out" = "pod/m$v" ]'
	check "the owner annotation round-trips" \
		"$K get pod o$v -o jsonpath='{.metadata.annotations.taskbox\.dev/owner}'" '[ "$out" = alice@example.com ]'
	check "chunked list (limit, continue) sees every pod" \
		"[ \$($K get pods --chunk-size=1 -o name | sort | tee $tmp/chunked | wc -l) -ge 3 ] && $K get pods --chunk-size=0 -o name | sort | cmp - $tmp/chunked && api GET /fake/log | grep -o 'continue=' | wc -l" \
		'[ $rc -eq 0 ] && [ "$out" -ge 2 ]'
	check "404" "$K get pod nope" '[ $rc -ne 0 ] && has "$err" "(NotFound): pods \"nope\" not found"'
	check "exec, token" "$K exec $p -- echo hi" '[ $rc -eq 0 ] && [ "$out" = hi ]'
	check "exec, client certificate" "$K --context=cert exec $p -- echo hi" '[ $rc -eq 0 ] && [ "$out" = hi ]'
	check "exec, CA and token inline (-data)" "$K --context=fake-data exec $p -- echo hi" '[ $rc -eq 0 ] && [ "$out" = hi ]'
	check "exec, CA and certificate inline (-data)" "$K --context=cert-data exec $p -- echo hi" '[ $rc -eq 0 ] && [ "$out" = hi ]'
	check "exit code 42" "$K exec $p -- sh -c 'exit 42'" '[ $rc -eq 42 ]'
	check "stdout and stderr apart" "$K exec $p -- sh -c 'echo o; echo e >&2'" \
		'[ $rc -eq 0 ] && [ "$out" = o ] && has "$err" e && ! has "$err" o'
	check "stdin and EOF (v5 CLOSE)" "printf 'a\nb\nc\n' | $K exec -i $p -- wc -l" '[ $rc -eq 0 ] && [ "$(echo $out)" = 3 ]'
	check "large output intact" "$K exec $p -- seq 1 200000 | md5sum" '[ $rc -eq 0 ] && has "$out" "$big_md5"'
	check "start failure" "$K exec $p -- nosuchcmd" '[ $rc -eq 1 ] && has "$err" "executable file not found in \$PATH"'
	check "signal 9 is 137" "$K exec $p -- sh -c 'kill -9 \$\$'" '[ $rc -eq 137 ]'
	check "env from the pod spec, cwd /, HOME" "$K exec $p -- sh -c 'echo \$GREETING \$(pwd) \$HOME'" \
		'[ "$out" = "hello-from-spec / /root" ]'
	check "python3 of the rootfs" "$K exec $p -- python3 -c 'print(6*7)'" '[ "$out" = 42 ]'
	check "cp to the pod" "$K exec $p -- mkdir -p /data && $K cp $tmp/blob $p:/data/blob" '[ $rc -eq 0 ]'
	check "cp from the pod, byte-equal" "$K cp $p:/data/blob $tmp/back$v && md5sum <$tmp/back$v" \
		'[ $rc -eq 0 ] && has "$out" "$blob_md5"'
	check "range read with dd" "$K exec $p -- dd if=/data/blob iflag=skip_bytes,count_bytes skip=1000 count=4096 bs=65536 | md5sum" \
		'has "$out" "$range_md5"'
	if command -v script >/dev/null 2>&1; then
		check "tty, resize" "script -qec \"stty cols 91 rows 17; $K exec -it $p -- sh -c 'test -t 0 && echo TTY; sleep 1; stty size'\" /dev/null" \
			'[ $rc -eq 0 ] && has "$out" TTY && has "$out" "17 91"'
	fi
	check "strategic merge patch of a pod" "$K patch pod $p -p '{\"metadata\":{\"labels\":{\"patched\":\"yes\"}}}' && $K get pod $p -o jsonpath='{.metadata.labels.patched}'" \
		'[ $rc -eq 0 ] && has "$out" yes'

	# Sandboxes
	sandbox_yaml "$sb" "$(ts 120)" Retain >"$tmp/$sb.yaml"
	sandbox_yaml "$sbd" "$(ts 4)" Delete >"$tmp/$sbd.yaml"
	check "sandbox create" "$K create -f $tmp/$sb.yaml --validate=false && $K create -f $tmp/$sbd.yaml --validate=false" \
		'[ $rc -eq 0 ] && has "$out" "sandbox.agents.x-k8s.io/$sb created"'
	wait_for 10 "$K get sandbox $sb -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}'" '[ "$out" = True ]'
	check "sandbox Ready" "$K get sandbox $sb -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}'" '[ "$out" = DependenciesReady ]'
	check "sandbox list as a Table" "$K get sandboxes" 'printf "%s\n" "$out" | grep -Eq "^$sb +True"'
	check "sandbox pod: owner, labels" "$K get pod $sb -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.labels.app}'" \
		'[ "$out" = Sandbox/judge-sandbox ]'
	check "sandbox exec" "$K exec $sb -- sh -c 'echo in-sandbox; echo x >/tmp/mark'" '[ "$out" = in-sandbox ]'
	check "sandbox strategic patch refused (415)" "$K patch sandbox $sb -p '{\"spec\":{\"operatingMode\":\"Suspended\"}}'" \
		'[ $rc -ne 0 ] && has "$err" "unknown format"'
	check "sandbox suspend" "$K patch sandbox $sb --type=merge -p '{\"spec\":{\"operatingMode\":\"Suspended\"}}'" '[ $rc -eq 0 ]'
	wait_for 10 "$K get sandbox $sb -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}'" '[ "$out" = SandboxSuspended ]'
	check "sandbox suspended: Ready reason, pod gone" "$K get sandbox $sb -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}' && $K get pod $sb" \
		'[ $rc -ne 0 ] && has "$out" SandboxSuspended && has "$err" NotFound'
	check "sandbox resume" "$K patch sandbox $sb --type=merge -p '{\"spec\":{\"operatingMode\":\"Running\"}}'" '[ $rc -eq 0 ]'
	wait_for 10 "$K exec $sb -- echo back" '[ "$out" = back ]'
	check "sandbox resumed with an empty root" "$K exec $sb -- sh -c 'echo back; cat /tmp/mark 2>/dev/null'" '[ "$out" = back ]'
	check "sandbox renew (shutdownTime)" "$K patch sandbox $sb --type=merge -p '{\"spec\":{\"shutdownTime\":\"$(ts 3)\"}}'" '[ $rc -eq 0 ]'
	wait_for 15 "$K get sandbox $sb -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}'" '[ "$out" = SandboxExpired ]'
	check "sandbox expired (Retain): SandboxExpired, pod gone" "$K get sandbox $sb -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}' && $K get pod $sb" \
		'[ $rc -ne 0 ] && [ "$out" = SandboxExpired ] && has "$err" NotFound'
	wait_for 15 "$K get sandbox $sbd" '[ $rc -ne 0 ]'
	check "sandbox expired (Delete): gone" "$K get sandbox $sbd" '[ $rc -ne 0 ] && has "$err" "sandboxes.agents.x-k8s.io \"$sbd\" not found"'
	check "sandbox delete" "$K delete sandbox $sb" '[ $rc -eq 0 ] && has "$out" "\"$sb\" deleted"'
	check "pod delete" "$K delete pod $p" '[ $rc -eq 0 ] && has "$out" "pod \"$p\" deleted"'
	check "pod gone" "$K get pod $p" '[ $rc -ne 0 ] && has "$err" NotFound'
done

K=${ws[${#ws[@]} - 1]}
echo "# SPDY clients and the rest with $K"

# ---------------------------------------------------------------- SPDY
pod_yaml f1 >"$tmp/f1.yaml"
check "create f1" "$K create -f $tmp/f1.yaml --validate=false" '[ $rc -eq 0 ]'
if [ -n "$spdy" ]; then
	check "SPDY kubectl ($(basename "$spdy")) gets get" "$spdy get pod f1 -o jsonpath='{.status.phase}'" '[ "$out" = Running ]'
	check "SPDY kubectl ($(basename "$spdy")) gets a clear 400" "$spdy exec f1 -- echo hi" \
		'[ $rc -ne 0 ] && has "$err" "SPDY/3.1 is not supported"'
fi
check "KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false gets a clear 400" "KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false $K exec f1 -- echo hi" \
	'[ $rc -ne 0 ] && has "$err" "SPDY/3.1 is not supported"'

# ---------------------------------------------------------------- faults
check "401 without credentials" "curl -sS --cacert $tmp/state/pki/ca.crt $url/api/v1/namespaces/default/pods" \
	'has "$out" "\"reason\": \"Unauthorized\"" && has "$out" "\"code\": 401"'
check "401 with a wrong token" "$K --token=wrong get pods" '[ $rc -ne 0 ] && has "$err" Unauthorized'
check "wrong CA fails the handshake" "$K --certificate-authority=$tmp/state/pki/client.crt get pods" \
	'[ $rc -ne 0 ] && has "$err" "certificate"'
check "watch: kubectl wait" "$K wait --for=condition=Ready pod/f1 --timeout=10s" '[ $rc -eq 0 ] && has "$out" "condition met"'
api POST /fake/faults '{"status": 401, "match": "^GET /api/v1/namespaces/default/pods/f1$", "count": 1}' >/dev/null
check "injected 401" "$K get pod f1" '[ $rc -ne 0 ] && has "$err" Unauthorized'
api POST /fake/faults '{"status": 403, "match": "/pods/f1/exec", "count": 10}' >/dev/null
check "injected 403 on pods/exec" "$K exec f1 -- echo hi" \
	'[ $rc -ne 0 ] && has "$err" "pods \"f1\" is forbidden: User \"taskbox-test\" cannot create resource \"pods/exec\" in API group \"\" in the namespace \"default\""'
api DELETE /fake/faults >/dev/null
check "exec after the faults are cleared" "$K exec f1 -- echo hi" '[ "$out" = hi ]'
api POST /fake/faults '{"status": 429, "match": "^GET /api/v1/namespaces/default/pods/f1$", "count": 2, "retry_after": 1}' >/dev/null
check "injected 429 twice: kubectl retries after Retry-After" "$K get pod f1 -o jsonpath='{.metadata.name}'" '[ $rc -eq 0 ] && [ "$out" = f1 ]'
check "the log shows the 429s" "api GET /fake/log | python3 -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin) if e[\"status\"] == 429))'" '[ "$out" = 2 ]'
api POST /fake/faults '{"status": 500, "match": "^GET /api/v1/namespaces/default/pods/f1$", "count": 1}' >/dev/null
check "injected 500" "$K get pod f1" '[ $rc -ne 0 ] && has "$err" "injected fault"'
api POST /fake/faults '{"drop_exec_after_bytes": 100000, "count": 1}' >/dev/null
check "exec stream dropped after 100000 bytes" "$K exec f1 -- sh -c 'seq 1 200000; sleep 1; echo done >/tmp/after-drop' | wc -c" \
	'[ "$(echo $out)" = 100000 ]'
wait_for 10 "$K exec f1 -- cat /tmp/after-drop" '[ "$out" = done ]'
check "the dropped exec's process lived on" "$K exec f1 -- cat /tmp/after-drop" '[ "$out" = done ]'
check "a background process outlives its exec" "$K exec f1 -- sh -c 'sleep 300 >/dev/null 2>&1 &' && api GET /fake/pods/default/f1/pids" \
	'[ $rc -eq 0 ] && [ "$out" != "[]" ]'
pids_before=$out

# down and back: the fake killed, started again on the same state and port
uid1=$($K get pod f1 -o jsonpath='{.metadata.uid}')
$K exec f1 -- sh -c 'echo kept >/tmp/kept' >/dev/null 2>&1
kill -9 "$fakepid"
wait "$fakepid" 2>/dev/null
check "apiserver down: kubectl fails" "$K get pod f1 --request-timeout=5s" '[ $rc -ne 0 ] && has "$err" "refused"'
start_fake
check "apiserver back: the pod, its UID" "$K get pod f1 -o jsonpath='{.metadata.uid}'" '[ -n "$out" ] && [ "$out" = "$uid1" ]'
check "apiserver back: kubectl get lists it" "$K get pods" 'printf "%s\n" "$out" | grep -Eq "^f1 +1/1 +Running"'
check "apiserver back: exec, files kept" "$K exec f1 -- cat /tmp/kept" '[ "$out" = kept ]'
check "apiserver back: processes kept" "api GET /fake/pods/default/f1/pids" '[ "$out" = "$pids_before" ]'

# the pod lost behind the client's back
pod_yaml f2 >"$tmp/f2.yaml"
$K create -f "$tmp/f2.yaml" --validate=false >/dev/null 2>&1
check "eviction: Failed/Evicted" "api POST /fake/evict/default/f2?keep=2 >/dev/null && $K get pod f2 -o jsonpath='{.status.phase}/{.status.reason}'" \
	'[ "$out" = Failed/Evicted ]'
check "eviction: no exec into a completed pod" "$K exec f2 -- echo hi" '[ $rc -ne 0 ] && has "$err" "completed pod"'
wait_for 10 "$K get pod f2" '[ $rc -ne 0 ]'
check "eviction: then gone" "$K get pod f2" '[ $rc -ne 0 ] && has "$err" NotFound'
pod_yaml f3 busybox "activeDeadlineSeconds: 2" >"$tmp/f3.yaml"
check "activeDeadlineSeconds" "$K create -f $tmp/f3.yaml --validate=false && sleep 3 && $K get pod f3 -o jsonpath='{.status.phase}/{.status.reason}'" \
	'[ "$out" = "pod/f3 created
Failed/DeadlineExceeded" ]'
pod_yaml f4 fake/pull-error:v1 >"$tmp/f4.yaml"
check "image pull error" "$K create -f $tmp/f4.yaml --validate=false >/dev/null && $K get pod f4 -o jsonpath='{.status.phase}/{.status.containerStatuses[0].state.waiting.reason}'" \
	'[ "$out" = Pending/ErrImagePull ]'
check "image pull error in the Table" "$K get pod f4" 'printf "%s\n" "$out" | grep -Eq "^f4 +0/1 +ErrImagePull"'
pod_yaml f5 fake/unschedulable >"$tmp/f5.yaml"
check "unschedulable" "$K create -f $tmp/f5.yaml --validate=false >/dev/null && $K get pod f5 -o jsonpath='{.status.phase}/{.status.conditions[?(@.type==\"PodScheduled\")].reason}'" \
	'[ "$out" = Pending/Unschedulable ]'
check "AlreadyExists" "$K create -f $tmp/f5.yaml --validate=false" '[ $rc -ne 0 ] && has "$err" "(AlreadyExists)"'
check "delete a pod with its processes" "$K delete pod f1 --grace-period=1 && sleep 2 && ! ls $tmp/state/pods/default/f1 2>/dev/null" '[ $rc -eq 0 ]'
check "no process left from f1" "python3 -c 'import json,os,sys; print([p for p in json.loads(sys.argv[1]) if os.path.exists(\"/proc/%d\" % p)])' '$pids_before'" \
	'[ "$out" = "[]" ]'

echo "# $pass passed, $fail failed ($(($(date +%s) - t0)) s)"
[ "$fail" -eq 0 ]
