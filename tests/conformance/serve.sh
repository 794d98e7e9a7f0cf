# Sourced by run.sh and run-2026.sh: the taskbox server the conformance
# suite runs against, and its end. Set before sourcing: $name (for
# messages) and $work (a scratch directory, removed at exit).
#
#   serve_start [env arguments...]
#       starts `taskbox serve --http 127.0.0.1:0 --test-tools` (after
#       $TASKBOX_TEST_WRAPPER, if any) under env with the given arguments
#       (NAME=VALUE, -u NAME), its stderr in $work/server.log; sets
#       server_pid and url once the server names its URL (up to 120 s:
#       valgrind starts slowly); exits 99 when it does not.
#   serve_stop RC
#       stops it with SIGTERM and exits: RC, or 1 when the server did not
#       exit cleanly (a valgrind or sanitizer finding changes its exit
#       code), printing the server's last words on a failure.

server_pid=
serve_cleanup() {
	if [ -n "$server_pid" ]; then
		kill -KILL "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap serve_cleanup EXIT
trap 'exit 130' INT TERM

serve_start() {
	# shellcheck disable=SC2086
	env "$@" ${TASKBOX_TEST_WRAPPER:-} "$TASKBOX_BIN" serve \
		--http 127.0.0.1:0 --test-tools 2>"$work/server.log" &
	server_pid=$!
	tries=0
	url=
	while [ -z "$url" ]; do
		url=$(sed -n 's|.*listening on \(http://[^ ]*\).*|\1|p' \
			"$work/server.log" | head -n 1)
		[ -n "$url" ] && break
		tries=$((tries + 1))
		if [ $tries -ge 1200 ] || ! kill -0 "$server_pid" 2>/dev/null; then
			echo "$name: the server did not start" >&2
			cat "$work/server.log" >&2
			exit 99
		fi
		sleep 0.1
	done
}

serve_stop() {
	rc=$1
	kill -TERM "$server_pid"
	wait "$server_pid"
	src=$?
	server_pid=
	if [ "$rc" -ne 0 ] || [ $src -ne 0 ]; then
		[ $src -eq 0 ] || echo "$name: the server exited $src after SIGTERM" >&2
		echo "$name: failed; the server said:" >&2
		tail -n 50 "$work/server.log" >&2
		[ "$rc" -ne 0 ] || rc=1
	fi
	exit "$rc"
}
