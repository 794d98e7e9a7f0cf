#!/bin/sh
# The docker provider's engine tests: starts a real engine (podman's Docker
# API service, see engine.sh) in a fresh directory, runs the Criterion
# program test_docker against it (under valgrind unless the build has
# sanitizers or valgrind is missing), and removes everything afterwards.
set -u

src=${TASKBOX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TASKBOX_BUILDDIR:-.}
engine_sh="$src/tests/docker/engine.sh"
prog="$build/tests/docker/test_docker"

dir=$(mktemp -d "${TMPDIR:-/tmp}/taskbox-engine.XXXXXX") || exit 99
# A second engine without an init binary, for the init setting's tests.
noinit=$(mktemp -d "${TMPDIR:-/tmp}/taskbox-engine-noinit.XXXXXX") || exit 99
trap 'sh "$engine_sh" stop "$dir"; sh "$engine_sh" stop "$noinit"' EXIT
trap 'exit 1' INT TERM

sh "$engine_sh" start "$dir"
rc=$?
[ $rc -eq 0 ] || exit $rc
TASKBOX_ENGINE_NO_INIT=1 sh "$engine_sh" start "$noinit"
rc=$?
[ $rc -eq 0 ] || exit $rc
eval "$(sh "$engine_sh" env "$noinit")"
TASKBOX_DOCKER_NOINIT_HOST=$DOCKER_HOST
export TASKBOX_DOCKER_NOINIT_HOST
eval "$(sh "$engine_sh" env "$dir")"
proxy=$(sh "$engine_sh" proxy "$dir")
rc=$?
[ $rc -eq 0 ] || exit $rc
eval "$proxy"
export DOCKER_HOST TASKBOX_DOCKER_IMAGE TASKBOX_DOCKER_TCP \
	TASKBOX_DOCKER_TLS TASKBOX_DOCKER_TLS_DIR
TASKBOX_DOCKER_ENGINE=$engine_sh
TASKBOX_DOCKER_ENGINE_DIR=$dir
TASKBOX_DOCKER_PLUGIN="$build/plugins/docker/.libs/docker.so"
export TASKBOX_DOCKER_ENGINE TASKBOX_DOCKER_ENGINE_DIR TASKBOX_DOCKER_PLUGIN

# One test at a time: one of them restarts the engine. Under valgrind the
# test's own children (Criterion re-executes itself) are followed, the
# engine script, curl and the engine are not.
if command -v valgrind >/dev/null 2>&1 &&
	! ldd "$TASKBOX_DOCKER_PLUGIN" | grep -q libasan; then
	valgrind -q --vgdb=no --error-exitcode=1 --leak-check=full \
		--errors-for-leak-kinds=definite --show-leak-kinds=definite \
		--num-callers=30 --trace-children=yes \
		--trace-children-skip='/bin/*,/usr/*,/sbin/*' \
		"$prog" --jobs 1 --verbose "$@"
else
	"$prog" --jobs 1 --verbose "$@"
fi
