#!/bin/sh
# `taskbox providers` lists the k8s plugin of this build as loadable, and
# `check-config --start` reports its init's refusal by setting name.
set -u

bin=${TASKBOX_BIN:?run through make check}
build=${TASKBOX_BUILDDIR:?run through make check}
dir=$build/plugins/k8s/.libs
tmp=$(mktemp -d "${TMPDIR:-/tmp}/taskbox-k8s-providers.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

out=$(env -u TASKBOX_PLUGIN_PATH "$bin" providers --plugin-dir "$dir" 2>&1)
if ! printf '%s\n' "$out" | grep -Eq '^  ok +k8s +[^ ]+ +ABI 1\.[0-9]+ '; then
	echo "providers does not list k8s as ok:" >&2
	printf '%s\n' "$out" >&2
	fail=1
fi

cat >"$tmp/config.json" <<JSON
{"default": "kube", "providers": {"kube": {"plugin": "k8s",
 "settings": {"kubeconfig": "$tmp/no-such-kubeconfig"}}}}
JSON
out=$(env -u TASKBOX_PLUGIN_PATH "$bin" check-config "$tmp/config.json" \
	--start --plugin-dir "$dir" 2>&1)
rc=$?
if [ "$rc" -ne 4 ] ||
	! printf '%s\n' "$out" | grep -q 'settings.kubeconfig: cannot read'; then
	echo "check-config --start: rc $rc, expected 4 naming settings.kubeconfig:" >&2
	printf '%s\n' "$out" >&2
	fail=1
fi
exit $fail
