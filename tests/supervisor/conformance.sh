#!/bin/sh
# Runs the supervisor conformance suite (conformance.py beside this file)
# with python3 on the portable supervisor ($TB_SUPERVISOR selects another
# implementation). The native one, when built, is the second implementation
# of the tests that mix both on one root.
here=$(dirname "$0")
native=${TASKBOX_BUILDDIR:-.}/taskbox-supervisor
if [ -z "${TB_SUPERVISOR_OTHER-}" ] && [ -x "$native" ]; then
	TB_SUPERVISOR_OTHER=$native
	export TB_SUPERVISOR_OTHER
fi
exec python3 "$here/conformance.py" "$@"
