#!/bin/sh
# The libFuzzer run over the k8s plugin's channel decoder (WebSocket
# messages of channel.k8s.io into stdout, stderr, the pid marker and the
# Status), built by tests/fuzz/run.sh from the plugin's sources, over the
# seeds in tests/k8s/corpus for 20 s (FUZZ_SECONDS overrides). A crash, a
# hang, a leak or a sanitizer report fails it.
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${TASKBOX_SRCDIR:-$here/../..}
plugin=$srcdir/plugins/k8s

exec sh "$srcdir/tests/fuzz/run.sh" k8s-channels 20 "$here/corpus" \
	"jansson libcurl" -- "$here/fuzz_channels.c" "$plugin/channels.c"
