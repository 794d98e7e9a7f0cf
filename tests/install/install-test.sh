#!/bin/sh
# Installs the build into a temporary root, builds the example plugin
# examples/dirbox out of tree with its own Makefile (nothing from taskbox
# but the installed header, found with `pkg-config --cflags
# taskbox-provider`), and has the installed taskbox list it, start it, and
# serve MCP with it: a sandbox is created, runs commands, writes and reads a
# file, times a command out and is destroyed.
set -eu

builddir=${TASKBOX_BUILDDIR:?run through make check}
srcdir=${TASKBOX_SRCDIR:?run through make check}
cc=${TASKBOX_CC:-cc}
root=$(mktemp -d)
serve_pid=
cleanup() {
	[ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null || :
	rm -rf "$root"
}
trap cleanup EXIT
# fail MESSAGE: on stderr, which also leaves command substitutions.
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

${MAKE:-make} -s -C "$builddir" install DESTDIR="$root/dest" >"$root/install.log" 2>&1 || {
	cat "$root/install.log"
	fail "make install"
}

# Where the build's prefix landed inside the temporary root.
pc=$(find "$root/dest" -name taskbox-provider.pc | head -n 1)
bin=$(find "$root/dest" -path '*/bin/taskbox' | head -n 1)
header=$(find "$root/dest" -path '*/include/taskbox/provider.h' | head -n 1)
supervisor=$(find "$root/dest" -path '*/libexec/taskbox/taskbox-supervisor' | head -n 1)
man1=$(find "$root/dest" -path '*/share/man/man1/taskbox.1' | head -n 1)
man3=$(find "$root/dest" -path '*/share/man/man3/taskbox-provider.3' | head -n 1)
for f in "$pc" "$bin" "$header" "$supervisor" "$man1" "$man3"; do
	[ -n "$f" ] || fail "make install left out a file"
done
echo "installed: $bin, $header, $pc, $man1, $man3"

PKG_CONFIG_PATH=$(dirname "$pc")
PKG_CONFIG_SYSROOT_DIR="$root/dest"
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
echo "pkg-config --cflags taskbox-provider: $(pkg-config --cflags taskbox-provider)"

# The example as a user gets it: a copy outside both trees (the source
# tree is read-only under distcheck), built with its own Makefile.
cp -R "$srcdir/examples/dirbox" "$root/dirbox"
chmod -R u+w "$root/dirbox"
rm -f "$root/dirbox/dirbox.so"
${MAKE:-make} -C "$root/dirbox" CC="$cc" >"$root/build.log" 2>&1 || {
	cat "$root/build.log"
	fail "the example plugin examples/dirbox did not build"
}
cat "$root/build.log"
grep -q -- '-Werror' "$root/build.log" || fail "the example was built without -Werror"
cd "$root/dirbox"

unset TASKBOX_PLUGIN_PATH TASKBOX_CONFIG
cat >"$root/config.json" <<JSON
{"default": "box", "providers": {"box": {"plugin": "dirbox", "settings": {"root": "$root/sandboxes"}}}}
JSON
cat >"$root/bad.json" <<JSON
{"default": "box", "providers": {"box": {"plugin": "dirbox", "settings": {"root": "$root/sandboxes", "rot": "x"}}}}
JSON

status=0
"$bin" providers --config "$root/config.json" --plugin-dir . >"$root/out" 2>&1 || status=$?
cat "$root/out"
[ "$status" -eq 0 ] || fail "taskbox providers exited $status"
minor=$(sed -n 's/^#define TASKBOX_ABI_MINOR \([0-9]*\)$/\1/p' \
	"$srcdir/include/taskbox/provider.h")
[ -n "$minor" ] || fail "no TASKBOX_ABI_MINOR in provider.h"
grep -Eq "^  ok +dirbox +1\\.0 +ABI 1\\.$minor +\\./dirbox\\.so\$" "$root/out" ||
	fail "the dirbox plugin was not listed as loaded"
grep -Eq '^  ok +box \(default\): plugin dirbox 1\.0' "$root/out" ||
	fail "the dirbox instance did not start"

status=0
"$bin" check-config "$root/config.json" --start --plugin-dir . >"$root/out" 2>&1 || status=$?
cat "$root/out"
[ "$status" -eq 0 ] || fail "check-config --start exited $status"
[ -d "$root/sandboxes" ] || fail "init did not make the root directory"

status=0
"$bin" check-config "$root/bad.json" --start --plugin-dir . >"$root/out" 2>&1 || status=$?
cat "$root/out"
[ "$status" -eq 4 ] || fail "check-config --start of an unknown setting exited $status, not 4"
grep -q "unknown setting 'rot'" "$root/out" || fail "the unknown setting was not named"

# The installed server on a fifo; its answers go to a file.
mkfifo "$root/to-server"
"$bin" serve --config "$root/config.json" --plugin-dir . \
	<"$root/to-server" >"$root/from-server" 2>"$root/serve.log" &
serve_pid=$!
exec 3>"$root/to-server"

send() {
	printf '%s\n' "$1" >&3
}
# answer ID: waits up to 30 s for the response to request ID; prints it.
answer() {
	tries=0
	while ! grep -Eq "\"id\":$1[,}]" "$root/from-server"; do
		tries=$((tries + 1))
		if [ "$tries" -gt 300 ] || ! kill -0 "$serve_pid" 2>/dev/null; then
			cat "$root/serve.log" "$root/from-server" >&2
			fail "no answer to request $1"
		fi
		sleep 0.1
	done
	grep -E "\"id\":$1[,}]" "$root/from-server"
}
# call ID TOOL ARGUMENTS: a tools/call; prints the response.
call() {
	send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}"
	answer "$1"
}
# expect RESPONSE TEXT...: each fixed TEXT is in the response.
expect() {
	response=$1
	shift
	for text in "$@"; do
		case $response in
		*"$text"*) ;;
		*) echo "$response"; fail "response lacks $text" ;;
		esac
	done
}

send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"install-test","version":"1.0"}}}'
expect "$(answer 1)" '"protocolVersion":"2025-06-18"'
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'

r=$(call 2 create_sandbox '{}')
sandbox=$(printf '%s\n' "$r" | sed -n 's/.*"sandbox_id":"\(box:[0-9a-f]*\)".*/\1/p')
[ -n "$sandbox" ] || { echo "$r"; fail "create_sandbox gave no sandbox id"; }
home=$root/sandboxes/${sandbox#box:}
[ -d "$home" ] || fail "create made no directory $home"
home=$(cd "$home" && pwd -P)
record=$root/sandboxes/${sandbox#box:}.owner
[ -f "$record" ] || fail "create wrote no owner record $record beside the sandbox"
echo "ok: create_sandbox made $sandbox and its owner record"

r=$(call 3 run_command "{\"sandbox_id\":\"$sandbox\",\"command\":\"echo hi\"}")
expect "$r" '"isError":false' '"exit_code":0' '"stdout":"hi\n"'
echo "ok: run_command echo hi"

r=$(call 4 write_file "{\"sandbox_id\":\"$sandbox\",\"path\":\"sub/note.txt\",\"content\":\"written by the test\"}")
expect "$r" '"isError":false' '"bytes_written":19'
r=$(call 5 run_command "{\"sandbox_id\":\"$sandbox\",\"command\":\"cat sub/note.txt; echo; pwd; echo oops >&2; exit 3\"}")
expect "$r" '"isError":false' '"exit_code":3' "\"stdout\":\"written by the test\\n$home\\n\"" '"stderr":"oops\n"'
r=$(call 6 read_file "{\"sandbox_id\":\"$sandbox\",\"path\":\"sub/note.txt\",\"offset\":11,\"length\":3}")
expect "$r" '"isError":false' '"content":"the"' '"size":19' '"next_offset":14'
echo "ok: write_file, then run_command and read_file see the file"

r=$(call 7 run_command "{\"sandbox_id\":\"$sandbox\",\"command\":\"echo started; sleep 30\",\"timeout\":1}")
expect "$r" '"isError":false' '"timed_out":true' '"stdout":"started\n"'
echo "ok: run_command with a timeout is killed"

r=$(call 8 kill_sandbox "{\"sandbox_id\":\"$sandbox\"}")
expect "$r" '"isError":false' '"destroyed":true'
[ ! -e "$home" ] || fail "kill_sandbox left $home"
[ ! -e "$record" ] || fail "kill_sandbox left the owner record $record"
r=$(call 9 run_command "{\"sandbox_id\":\"$sandbox\",\"command\":\"true\"}")
expect "$r" '"isError":true'
echo "ok: kill_sandbox removed the sandbox"

exec 3>&-
status=0
wait "$serve_pid" || status=$?
serve_pid=
[ "$status" -eq 0 ] || { cat "$root/serve.log"; fail "taskbox serve exited $status"; }
echo "ok: the example plugin, built against the installed header, serves MCP"
