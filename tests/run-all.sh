#!/bin/bash
# Every test of taskbox, from a clean checkout: the npm test clients,
# autoreconf, a gcc build whose unit tests and server run under valgrind,
# an ASan+UBSan build, make distcheck, clang-format, and the shipping tests
# (the Debian packages, the systemd service, the image, the Kubernetes
# manifests, the README's commands). The last line is
# "N passed, M failed" (and ", K skipped" when some were), summed over the
# automake test logs; a stage that fails without a failing test (a build,
# a valgrind finding in a server log, distcheck, formatting) counts as one
# failure. Exits nonzero on any failure.
#
#   tests/run-all.sh            every stage
#   tests/run-all.sh gcc format only these stages
#
# Adding a stage: write a function stage_NAME that returns nonzero on
# failure (call count_tests DIR for a build dir whose tests it ran) and
# add NAME to STAGES.
set -uo pipefail

STAGES="npm autoreconf gcc asan distcheck format package"

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
builds=$src/build
jobs=${JOBS:-2}
passed=0 failed=0 skipped=0
failed_stages=()

# Adds the results of the .trs files under dir to the totals; sets
# last_failed to the number of failed tests found.
count_tests() {
	local dir=$1 p f s
	p=$(find "$dir" -name '*.trs' -exec cat {} + 2>/dev/null |
		grep -Ec '^:test-result: (PASS|XFAIL)')
	f=$(find "$dir" -name '*.trs' -exec cat {} + 2>/dev/null |
		grep -Ec '^:test-result: (FAIL|XPASS|ERROR)')
	s=$(find "$dir" -name '*.trs' -exec cat {} + 2>/dev/null |
		grep -Ec '^:test-result: SKIP')
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	last_failed=$f
}

stage_npm() {
	local lock=$src/tests/package-lock.json
	local stamp=$src/tests/node_modules/.package-lock.json
	if [ -f "$stamp" ] && [ ! "$lock" -nt "$stamp" ]; then
		echo "tests/node_modules is up to date"
		return 0
	fi
	(cd "$src/tests" && npm ci --ignore-scripts --no-audit --no-fund)
}

stage_autoreconf() {
	(cd "$src" && autoreconf -fi)
}

# Prints the slowest tests of build dir dir, from each test's .log (born
# when the test started) and .trs (written when it ended).
slowest_tests() {
	local dir=$1 trs log
	find "$dir" -name '*.trs' | while read -r trs; do
		log=${trs%.trs}.log
		[ -f "$log" ] || continue
		echo "$(($(stat -c %Y "$trs") - $(stat -c %W "$log"))) ${log#"$dir"/}"
	done | sort -rn | head -n 12 | sed 's/^/  slowest: /; s/ \([^ ]*\)$/ s \1/'
}

# The tests of the build dir's Makefile (its TESTS, as make check runs
# them), minus the space-separated names in $1.
tests_except() {
	local skip=" $1 " t out=""
	for t in $(printf 'print-tests:\n\t@echo $(TESTS)\n' |
		make -s -f Makefile -f - print-tests); do
		case $skip in *" $t "*) continue ;; esac
		out="$out $t"
	done
	echo "$out"
}

# LeakSanitizer's own stop-the-world tracer sometimes crashes as a process
# exits ("Tracer caught signal 11", then "LeakSanitizer has encountered a
# fatal error"): a fault of the sanitizer runtime under load, not a leak
# report, and one the same test does not meet again. Each failed test of
# build dir dir whose log shows it runs once more, whole; the log of the
# first attempt is printed and the second result stands. Returns 0 when no
# test of dir failed after that.
rerun_lsan_crashes() {
	local dir=$1 t again=""
	for t in $(cd "$dir" && tests_except ""); do
		local log=$dir/${t%.*}.log
		if ! grep -qs '^:test-result: \(FAIL\|ERROR\)' "${log%.log}.trs" ||
			! grep -qs 'LeakSanitizer has encountered a fatal error' "$log"; then
			continue
		fi
		echo "LeakSanitizer's tracer crashed in $t; running it again:"
		grep -B2 -A4 'Tracer caught signal' "$log" | head -n 20 | sed 's/^/  | /'
		again="$again $t"
	done
	[ -n "$again" ] || return 1
	(cd "$dir" && make -j"$jobs" check TESTS="$again") || true
	local bad
	bad=$(find "$dir" -name '*.trs' -exec cat {} + 2>/dev/null |
		grep -Ec '^:test-result: (FAIL|XPASS|ERROR)')
	[ "$bad" -eq 0 ]
}

# configure + make + make check in builds/NAME with the given configure
# flags; the environment of make check comes from the caller, and
# $check_skip names tests this stage leaves to another one.
build_and_check() {
	local name=$1
	shift
	rm -rf "${builds:?}/$name"
	mkdir -p "$builds/$name"
	(cd "$builds/$name" && "$src/configure" -q "$@" && make -j"$jobs") ||
		return 1
	if [ -n "${check_skip-}" ]; then
		(cd "$builds/$name" &&
			make -j"$jobs" check TESTS="$(tests_except "$check_skip")")
	else
		(cd "$builds/$name" && make -j"$jobs" check)
	fi
	local rc=$?
	if [ "$rc" -ne 0 ] && rerun_lsan_crashes "$builds/$name"; then
		rc=0
	fi
	count_tests "$builds/$name"
	slowest_tests "$builds/$name"
	if [ "$rc" -ne 0 ]; then
		local log
		for log in $(find "$builds/$name" -name '*.log' ! -name 'config.log' \
			-newer "$builds/$name/config.status" \
			-exec grep -l '^FAIL\|^ERROR' {} + 2>/dev/null |
			grep -v test-suite.log); do
			echo "failed: $log"
			failure_excerpt "$log"
		done
	fi
	return $rc
}

# Prints what a failed test's log says about the failure, at most 120
# lines: each failed node:test subtest (its "not ok" line and the YAML
# block after it), Criterion's failed assertions, or else the log's end.
failure_excerpt() {
	local log=$1
	if grep -q '^ *not ok' "$log"; then
		awk '/^ *not ok/ { on = 1 } on { print } on && /^ *\.\.\.$/ { on = 0 }' "$log"
	elif grep -q '\[FAIL\]' "$log"; then
		grep -B2 -A8 '\[FAIL\]\|\[----\]' "$log"
	else
		tail -n 60 "$log"
	fi | head -n 120 | sed 's/^/  | /'
}

# The suites that drive a real container engine. Their time is podman's
# (image pulls, container starts, execs), not the sanitizer's, so they run
# in one stage only: the asan stage, where ASan+UBSan watch the docker
# plugin and the server at a fraction of valgrind's cost per process.
ENGINE_TESTS="tests/docker/docker.sh tests/contract/docker.test.mjs tests/contract/docker-noinit.test.mjs"
ENGINE_TESTS="$ENGINE_TESTS tests/contract/docker-modern.test.mjs"
ENGINE_TESTS="$ENGINE_TESTS tests/http/replicas-docker.test.mjs"
ENGINE_TESTS="$ENGINE_TESTS tests/docker/latency.test.mjs"
ENGINE_TESTS="$ENGINE_TESTS tests/docker/nopython.test.mjs"
ENGINE_TESTS="$ENGINE_TESTS tests/http/tenancy-docker.test.mjs"
ENGINE_TESTS="$ENGINE_TESTS tests/contract/shared-watch-docker.test.mjs"

# The contract suite over Streamable HTTP (SDK v1 and v2 clients) on every
# provider: one stage (asan) runs it, as it runs the engine tests. Under
# valgrind the gcc stage covers the HTTP transport with the transport,
# sessions, Inspector, parked-wait and conformance tests instead, at a
# fraction of the time (a contract run over HTTP takes about 400 s there).
HTTP_PROVIDER_TESTS="tests/contract/local-http.test.mjs tests/contract/local-http-v2.test.mjs"
HTTP_PROVIDER_TESTS="$HTTP_PROVIDER_TESTS tests/contract/docker-http.test.mjs tests/contract/docker-http-v2.test.mjs"
HTTP_PROVIDER_TESTS="$HTTP_PROVIDER_TESTS tests/contract/e2b-http.test.mjs tests/contract/e2b-http-v2.test.mjs"
# The SDK v2 client in MCP 2026-07-28 over HTTP.
HTTP_PROVIDER_TESTS="$HTTP_PROVIDER_TESTS tests/contract/local-http-modern.test.mjs"
HTTP_PROVIDER_TESTS="$HTTP_PROVIDER_TESTS tests/contract/docker-http-modern.test.mjs tests/contract/e2b-http-modern.test.mjs"
# Three replicas and haproxy (tests/http/replicas.mk).
HTTP_PROVIDER_TESTS="$HTTP_PROVIDER_TESTS tests/http/replicas.test.mjs"
# Whose sandbox over HTTP on e2b (tests/http/tenancy-suite.mjs); local runs
# in both stages, docker and k8s with their engine and apiserver tests.
HTTP_PROVIDER_TESTS="$HTTP_PROVIDER_TESTS tests/http/tenancy-e2b.test.mjs tests/http/tenancy-replicas.test.mjs"
# 200 waits on two sandboxes sharing two watch verbs, on e2b: as docker's
# (60 waits there) and k8s's, once (the gcc stage runs tests/e2b/remote-watch.test.mjs).
HTTP_PROVIDER_TESTS="$HTTP_PROVIDER_TESTS tests/contract/shared-watch-e2b.test.mjs"

# The fuzz runs build their own clang target with ASan and UBSan, whatever
# the stage, and run it outside valgrind: one stage (asan) runs them.
FUZZ_TESTS="tests/fuzz/run.sh tests/fuzz/tools.sh tests/e2b/fuzz.sh tests/k8s/fuzz.sh"

# The k8s provider's contract suite against the fake apiserver (about 5.5
# and 2 min), and the kubectl judge of that fake (no C code of ours runs in
# it): one stage (asan) runs them, as it runs the engine tests.
K8S_TESTS="tests/contract/k8s.test.mjs tests/contract/k8s-sandbox.test.mjs"
K8S_TESTS="$K8S_TESTS tests/contract/k8s-nopython.test.mjs"
K8S_TESTS="$K8S_TESTS tests/k8s/kubectl-judge.sh tests/http/tenancy-k8s.test.mjs"
K8S_TESTS="$K8S_TESTS tests/contract/shared-watch-k8s.test.mjs"

# The OAuth token table starts two servers and sends a thousand forged
# tokens: minutes under valgrind. One stage (asan) runs it; the gcc stage
# runs the verifier's unit tests under valgrind.
OAUTH_TESTS="tests/http/oauth-tokens.test.mjs"
# The SDK clients' OAuth flow against oidc-provider: what it adds is the
# clients' side (metadata, registration, PKCE, step-up); the server's part
# of it, a JWT of that authorization server checked against its JWKS, runs
# under valgrind in tests/http/principals.test.mjs. Over a minute under
# valgrind on a busy 2-core machine: the asan stage runs it.
OAUTH_TESTS="$OAUTH_TESTS tests/http/oauth-flow.test.mjs"
# Tests whose time is their own sleeps (slow clients held against the
# server's deadlines), not the server's work: one stage (gcc, under
# valgrind) runs them.
GCC_ONLY_TESTS="tests/http/slowloris.test.mjs"
# The supervisor conformance suite on python3 runs no C code of ours but
# the native supervisor as the second implementation of its mixed tests,
# which conformance-native.sh runs under the sanitizers with the roles
# swapped; the static copy is built without sanitizers. One stage (gcc)
# runs these two; conformance-native.sh runs in both.
GCC_ONLY_TESTS="$GCC_ONLY_TESTS tests/supervisor/conformance.sh tests/supervisor/conformance-static.sh"

stage_gcc() {
	local logs=$builds/gcc-vg-logs rc=0
	rm -rf "$logs"
	mkdir -p "$logs"
	TASKBOX_TEST_WRAPPER="$src/tests/vg --server" \
		TASKBOX_VG_LOGDIR=$logs \
		check_skip="$ENGINE_TESTS $HTTP_PROVIDER_TESTS $FUZZ_TESTS $K8S_TESTS $OAUTH_TESTS" \
		build_and_check gcc || rc=1
	# Valgrind's findings in the servers the integration tests started.
	local bad
	bad=$(grep -l 'ERROR SUMMARY: [1-9]' "$logs"/*.log 2>/dev/null)
	if [ -n "$bad" ]; then
		echo "valgrind found errors in the server:"
		for f in $bad; do
			echo "--- $f"
			cat "$f"
		done
		rc=1
	fi
	echo "$(find "$logs" -name '*.log' | wc -l) server runs under valgrind"
	return $rc
}

# The asan stage's time is mostly the container engine's: a docker contract
# run keeps a 2-core machine about a third busy, waiting on podman's execs.
# Three tests at a time overlap those waits ($ASAN_JOBS overrides it).
stage_asan() {
	local jobs=${ASAN_JOBS:-3}
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
		check_skip="$GCC_ONLY_TESTS" \
		build_and_check asan --enable-sanitizers
}

stage_distcheck() {
	[ -f "$builds/gcc/Makefile" ] ||
		(mkdir -p "$builds/gcc" && cd "$builds/gcc" &&
			"$src/configure" -q) || return 1
	# The gcc stage ran these unit tests under valgrind already.
	(cd "$builds/gcc" && TASKBOX_VG=off make -j"$jobs" distcheck)
}

# The shipping tests (tests/package/run.sh): their time is mostly waiting
# (apt downloads, podman, systemd booting) but for the package build, so
# when the asan stage runs too, this stage starts with it and overlaps it
# (see the loop below). Each PASS/FAIL line counts as a test.
stage_package() {
	local out=$builds/package.out rc
	TASKBOX_BUILDDIR=$builds/gcc "$src/tests/package/run.sh" "$builds/package" \
		>"$out" 2>&1
	rc=$?
	cat "$out"
	[ "$rc" -eq 77 ] && { skipped=$((skipped + 1)); return 0; }
	passed=$((passed + $(grep -c '^PASS: ' "$out")))
	failed=$((failed + $(grep -c '^FAIL: ' "$out")))
	return $rc
}

stage_format() {
	local files
	files=$(cd "$src" && git ls-files '*.c' '*.h')
	[ -n "$files" ] || return 0
	# shellcheck disable=SC2086
	(cd "$src" && clang-format --dry-run -Werror $files)
}

selected=${*:-$STAGES}
for name in $selected; do
	if ! declare -F "stage_$name" >/dev/null; then
		echo "run-all: no stage \"$name\" (stages: $STAGES)" >&2
		exit 2
	fi
done
# With both asan and package selected, package runs beside asan: started
# with it, in the background, its output and result taken at the end.
package_bg=
case " $selected " in
*" asan "*" package "* | *" package "*" asan "*)
	selected=$(echo " $selected " | sed 's/ package / /')
	package_bg=1
	;;
esac
for name in $selected; do
	if [ "$name" = asan ] && [ -n "$package_bg" ]; then
		package_start=$(date +%s)
		(
			passed=0 failed=0 skipped=0
			stage_package >"$builds/package.stage" 2>&1
			echo "$? $passed $failed $skipped" >"$builds/package.result"
		) &
		package_pid=$!
	fi
	echo "=== $name"
	start=$(date +%s)
	last_failed=0
	before=$failed
	if "stage_$name"; then
		echo "=== $name: ok ($(($(date +%s) - start)) s)"
	else
		echo "=== $name: FAILED ($(($(date +%s) - start)) s)"
		failed_stages+=("$name")
		[ "$failed" -gt "$before" ] || failed=$((failed + 1))
	fi
done

if [ -n "$package_bg" ]; then
	echo "=== package (beside asan)"
	wait "$package_pid"
	cat "$builds/package.stage"
	read -r rc p f s <"$builds/package.result"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	if [ "$rc" -eq 0 ]; then
		echo "=== package: ok ($(($(stat -c %Y "$builds/package.result") - package_start)) s, beside asan)"
	else
		echo "=== package: FAILED ($(($(stat -c %Y "$builds/package.result") - package_start)) s, beside asan)"
		failed_stages+=(package)
		[ "$f" -gt 0 ] || failed=$((failed + 1))
	fi
fi
[ ${#failed_stages[@]} -eq 0 ] || echo "failed stages: ${failed_stages[*]}"
summary="$passed passed, $failed failed"
[ "$skipped" -eq 0 ] || summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
