#!/bin/sh
# Runs the supervisor conformance suite on the static native supervisor
# (taskbox-supervisor-static, what the host copies into sandboxes without
# python3), with the portable one as the second implementation on the same
# root. Not under valgrind: a static binary carries its own malloc, which
# memcheck cannot follow; the dynamic build of the same sources is checked
# under valgrind and the sanitizers by conformance-native.sh.
here=$(dirname "$0")
TB_NATIVE_PROGRAM=taskbox-supervisor-static
export TB_NATIVE_PROGRAM
unset TASKBOX_TEST_WRAPPER
exec sh "$here/conformance-native.sh" "$@"
