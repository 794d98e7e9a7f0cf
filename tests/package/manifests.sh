#!/bin/bash
# deploy/kubernetes: kubectl's client-side dry run of every manifest with
# its schema validation on (--validate=strict), against a stub of the API
# server as no cluster is here (discovery.py: it maps the kinds and serves
# the OpenAPI document of upstream's definitions, from the npm package
# kubernetes-models in tests/node_modules), and a copy with a misspelt
# field refused by name, so the validation is seen to run; the properties
# the deployment promises (replicas, probes on /healthz, a non-root user, a
# read-only root, resource requests, a Service that selects the pods), the
# ConfigMap's config accepted by the packaged taskbox's check-config, and
# the Role against the requests the k8s provider made (image.sh's log).
#
#   manifests.sh SRC WORK
set -uo pipefail
src=$1 work=$2
. "$src/tests/package/lib.sh"

stub_pid=
cleanup() { [ -z "$stub_pid" ] || kill "$stub_pid" 2>/dev/null; }
trap cleanup EXIT
dir=$src/deploy/kubernetes

kubectl=
for k in /usr/lib/google-cloud-sdk/bin/kubectl.1.33 /usr/lib/google-cloud-sdk/bin/kubectl.1.32 \
	"$(command -v kubectl 2>/dev/null)"; do
	[ -n "$k" ] && [ -x "$k" ] && kubectl=$k && break
done
if [ -z "$kubectl" ]; then
	echo "SKIP: no kubectl: the manifests' dry run"
else
	rm -f "$work/stub.port"
	python3 "$src/tests/package/discovery.py" "$work/stub.port" "$src/tests/node_modules" &
	stub_pid=$!
	wait_for 10 test -s "$work/stub.port" ||
		die "the API stub starts (it needs kubernetes-models in tests/node_modules)"
	kc() { "$kubectl" --server "http://127.0.0.1:$(cat "$work/stub.port")" "$@"; }
	if kc kustomize "$dir" >"$work/manifests.yaml" 2>"$work/kustomize.log" &&
		kc apply --dry-run=client --validate=strict -o json -f "$work/manifests.yaml" \
			>"$work/manifests.json" 2>"$work/dry-run.log"; then
		pass "kubectl kustomize and apply --dry-run=client --validate=strict ($("$kubectl" version --client -o json |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])'))"
	else
		cat "$work/kustomize.log" "$work/dry-run.log" | sed 's/^/  | /'
		fail "kubectl kustomize and apply --dry-run=client --validate=strict"
	fi
	# The same with the Deployment's replicas misspelt: refused, by name.
	sed 's/^  replicas:/  replcas:/' "$work/manifests.yaml" >"$work/misspelt.yaml"
	if ! kc apply --dry-run=client --validate=strict -f "$work/misspelt.yaml" \
		>/dev/null 2>"$work/misspelt.log" &&
		grep -q 'unknown field "replcas" in io.k8s.api.apps.v1.DeploymentSpec' "$work/misspelt.log"; then
		pass "kubectl's validation refuses a misspelt field ($(grep -o 'unknown field "replcas" in [[:alnum:].]*' "$work/misspelt.log"))"
	else
		sed 's/^/  | /' "$work/misspelt.log"
		fail "kubectl's validation refuses a misspelt field (replcas in the Deployment)"
	fi
fi

# What the manifests promise, read from the YAML itself.
python3 - "$dir" "$work/configmap-config.json" <<'PY' && pass "the Deployment, Service and ConfigMap keep their promises" || fail "the Deployment, Service and ConfigMap keep their promises"
import glob, json, sys, yaml
docs = [d for f in sorted(glob.glob(sys.argv[1] + "/*.yaml")) if not f.endswith("kustomization.yaml")
        for d in yaml.safe_load_all(open(f)) if d]
by = {}
for d in docs:
    by.setdefault(d["kind"], []).append(d)
need = ["Namespace", "ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Secret", "Deployment", "Service"]
missing = [k for k in need if k not in by]
assert not missing, "missing kinds: %s" % missing
dep = by["Deployment"][0]
spec, pod = dep["spec"], dep["spec"]["template"]["spec"]
assert spec["replicas"] >= 2, "replicas"
assert pod["serviceAccountName"] == by["ServiceAccount"][0]["metadata"]["name"]
assert pod["securityContext"]["runAsNonRoot"] is True, "runAsNonRoot"
c = pod["containers"][0]
assert c["securityContext"]["readOnlyRootFilesystem"] is True, "readOnlyRootFilesystem"
assert c["securityContext"]["allowPrivilegeEscalation"] is False
for probe in ("readinessProbe", "livenessProbe"):
    assert c[probe]["httpGet"]["path"] == "/healthz", probe
assert c["resources"]["requests"]["cpu"] and c["resources"]["requests"]["memory"], "requests"
labels = dep["spec"]["template"]["metadata"]["labels"]
svc = by["Service"][0]
assert all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()), "Service selector"
assert svc["spec"]["ports"][0]["targetPort"] in [p["name"] for p in c["ports"]], "targetPort"
port = c["ports"][0]["containerPort"]
cfg = json.loads(by["ConfigMap"][0]["data"]["config.json"])
assert cfg["http"]["listen"].endswith(":%d" % port), "listen port"
sa = by["ServiceAccount"][0]["metadata"]
rb = by["RoleBinding"][0]
assert rb["subjects"][0]["name"] == sa["name"] and rb["subjects"][0]["namespace"] == sa["namespace"]
assert rb["roleRef"]["name"] == by["Role"][0]["metadata"]["name"]
ns = cfg["providers"]["kube"]["settings"]["namespace"]
assert by["Role"][0]["metadata"]["namespace"] == ns, "the Role is in the sandboxes' namespace"
mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
assert cfg["http"]["token_file"].startswith(mounts["tokens"] + "/"), "token_file on the Secret's mount"
json.dump(cfg, open(sys.argv[2], "w"))
PY

x=$work/deb-x
rm -rf "$x"
dpkg-deb -x "$work"/debs/taskbox_*.deb "$x"
plugins=$(dirname "$(find "$x" -name k8s.so | head -n 1)")
check "the ConfigMap's config passes the packaged taskbox's check-config" \
	"$x/usr/bin/taskbox" check-config "$work/configmap-config.json" --plugin-dir "$plugins"
check "deploy/systemd/config.json passes check-config" \
	"$x/usr/bin/taskbox" check-config "$src/deploy/systemd/config.json" --plugin-dir "$plugins"
check "deploy/container/config.json passes check-config" \
	"$x/usr/bin/taskbox" check-config "$src/deploy/container/config.json" --plugin-dir "$plugins"

if [ -s "$work/k8s-requests.json" ]; then
	python3 "$src/tests/package/rbac.py" "$dir/rbac.yaml" "$work/k8s-requests.json" | sed 's/^/  rbac: /'
	check "the Role grants exactly what the k8s provider used" \
		python3 "$src/tests/package/rbac.py" "$dir/rbac.yaml" "$work/k8s-requests.json"
else
	fail "the Role's check: no request log from the k8s provider (image.sh)"
fi
exit $((failures > 0))
