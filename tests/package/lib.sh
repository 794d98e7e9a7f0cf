# Shared by the package tests (sourced): results, ports, the podman of the
# test engine. Each check prints "PASS: what" or "FAIL: what" (tests/
# run-all.sh counts them); a FAIL sets $failures.
failures=0

pass() { echo "PASS: $*"; }
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}
# check WHAT COMMAND...: PASS when the command succeeds.
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
die() {
	echo "FAIL: $*"
	exit 1
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The mirror apt already uses, for mmdebstrap (nothing when none is found:
# mmdebstrap then uses its default).
debian_mirror() {
	local m
	m=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
	[ -n "$m" ] || m=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
	echo "$m"
}

# podman on the test engine's state (tests/docker/engine.sh) in $engine.
pm() {
	CONTAINERS_CONF="$engine/containers.conf" podman --root "$engine/storage" \
		--runroot "$engine/run" --tmpdir "$engine/libpod" "$@"
}

# wait_for SECONDS COMMAND...: until the command succeeds; 1 on timeout.
wait_for() {
	local n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" 2>/dev/null && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}
