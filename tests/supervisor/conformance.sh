#!/bin/sh
# Runs the supervisor conformance suite (conformance.py beside this file)
# with python3. $TB_SUPERVISOR selects the implementation under test.
here=$(dirname "$0")
exec python3 "$here/conformance.py" "$@"
