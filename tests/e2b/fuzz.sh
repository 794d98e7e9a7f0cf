#!/bin/sh
# The libFuzzer run over the decoder of envd's process stream, built from
# the plugin's sources by tests/fuzz/run.sh, over the seeds in
# tests/e2b/corpus for 20 s (FUZZ_SECONDS overrides). A crash, a hang, a
# leak or a sanitizer report fails it.
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${TASKBOX_SRCDIR:-$here/../..}
plugin=$srcdir/plugins/e2b

exec sh "$srcdir/tests/fuzz/run.sh" e2b-process-stream 20 "$here/corpus" \
	"jansson libcurl" -- "$here/fuzz_process_stream.c" \
	"$plugin/process_stream.c" "$plugin/connect_frame.c"
