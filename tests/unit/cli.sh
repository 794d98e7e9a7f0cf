#!/bin/sh
# The command line: help, version, usage errors and their exit codes,
# check-config and providers against the fake plugins.
set -u

bin=${TASKBOX_BIN:?run through make check}
fakes=${TASKBOX_FAKEPLUGIN_DIR:?run through make check}
srcdir=${TASKBOX_SRCDIR:?run through make check}
# The ABI minor this build speaks, from the one public header.
minor=$(sed -n 's/^#define TASKBOX_ABI_MINOR \([0-9]*\)$/\1/p' \
	"$srcdir/include/taskbox/provider.h")
[ -n "$minor" ] || { echo "FAIL: no TASKBOX_ABI_MINOR in provider.h"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset TASKBOX_CONFIG TASKBOX_PLUGIN_PATH
XDG_CONFIG_HOME=$tmp/xdg
export XDG_CONFIG_HOME
fail=0

# expect CODE PATTERN CMD...: runs CMD, checks its exit code and that its
# stdout+stderr match the extended regex PATTERN.
expect() {
	want=$1 pattern=$2
	shift 2
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL: $* exited $got, want $want"
		sed 's/^/  | /' "$tmp/out"
		fail=1
	elif ! grep -Eq -- "$pattern" "$tmp/out"; then
		echo "FAIL: $* output lacks /$pattern/"
		sed 's/^/  | /' "$tmp/out"
		fail=1
	else
		echo "ok: $*"
	fi
}

expect 0 '^Usage: taskbox' "$bin" --help
expect 0 '4  a configured provider instance failed to load' "$bin" --help
# What taskbox is today: both transports, four providers, the service.
expect 0 'Streamable HTTP' "$bin" --help
expect 0 'k8s \(Pods in a Kubernetes cluster\)' "$bin" --help
expect 0 'taskbox.socket and taskbox.service' "$bin" --help
expect 0 'LISTEN_FDS' "$bin" serve --help
expect 0 "^taskbox [0-9]+\\.[0-9]+\\.[0-9]+ \\(provider ABI 1\\.$minor\\)\$" \
	"$bin" --version
expect 0 '^Usage: taskbox providers' "$bin" help providers
expect 0 '^Usage: taskbox providers' "$bin" providers --help
expect 0 '^Usage: taskbox check-config' "$bin" check-config --help
expect 0 '^Usage: taskbox \[serve\]' "$bin" serve -h
expect 2 'no subcommand "frobnicate"' "$bin" frobnicate
expect 2 'no subcommand "frobnicate"' "$bin" help frobnicate
expect 2 'unknown option "--nope"' "$bin" providers --nope
expect 2 'option "--config" needs a value' "$bin" providers --config
expect 2 '--workers must be an integer 1..256, not "0"' "$bin" --workers 0
expect 2 '--log-level must be error, warn, info or debug' \
	"$bin" --log-level loud providers
expect 2 'options of serve, not of providers' "$bin" providers --test-tools
expect 2 'unexpected argument "x"' "$bin" providers x

cat >"$tmp/good.json" <<'JSON'
{"default": "work",
 "providers": {"work": {"plugin": "fake_good", "settings": {}},
               "box": {"plugin": "fake_good", "settings": {"image": "x"},
                       "watches": 8}},
 "mask": {"values_from_env": ["DEPLOY_TOKEN"]}}
JSON
cat >"$tmp/bad.json" <<'JSON'
{"default": "nope",
 "providers": {"box": {"plugin": 5, "token": "abc", "supervisor": "native",
                       "watches": 2000}},
 "mask": {"values_from_env": ["ghp-123"]}}
JSON
expect 0 'good.json: ok: 2 instances, default "work"' \
	"$bin" check-config "$tmp/good.json" --plugin-dir "$fakes"
expect 0 'good.json: ok' "$bin" check-config --config "$tmp/good.json" \
	--plugin-dir "$fakes"
expect 0 'good.json: ok' env TASKBOX_CONFIG="$tmp/good.json" \
	TASKBOX_PLUGIN_PATH="$fakes" "$bin" check-config
expect 0 '^\(built-in default\): ok: 1 instance, default "local"' \
	"$bin" check-config
expect 3 '^\$\.providers\.box\.plugin: must be a string' \
	"$bin" check-config "$tmp/bad.json"
expect 3 '^\$\.providers\.box\.token: unknown key' \
	"$bin" check-config "$tmp/bad.json"
expect 3 '^\$\.providers\.box\.supervisor: must be "auto", "static" or "python3"' \
	"$bin" check-config "$tmp/bad.json"
expect 3 '^\$\.providers\.box\.watches: must be an integer 0\.\.1024' \
	"$bin" check-config "$tmp/bad.json"
expect 3 '^\$\.default: must name an instance' \
	"$bin" check-config "$tmp/bad.json"
expect 3 '^\$\.mask\.values_from_env\[0\]: must be an environment variable' \
	"$bin" check-config "$tmp/bad.json"
expect 3 'missing.json: cannot open' "$bin" check-config "$tmp/missing.json"
expect 3 'invalid JSON' sh -c "echo '{' >'$tmp/broken.json' &&
	'$bin' check-config '$tmp/broken.json'"
expect 3 'must be a string' "$bin" providers --config "$tmp/bad.json"

# providers: every fake plugin listed, each rejection with its reason.
expect 0 "ok +work \\(default\\): plugin fake_good 1\\.0, ABI 1\\.$minor" \
	"$bin" providers --config "$tmp/good.json" --plugin-dir "$fakes"
# Which supervisor each instance's tasks use: where the provider does not
# declare TASKBOX_FEATURE_HOST_EXEC, a copy of the static one where it runs
# in the sandbox, else python3; the build's native one on the local
# provider. The static supervisor is built beside taskbox where a static
# libc links.
if [ -x "$(dirname "$bin")/taskbox-supervisor-static" ]; then
	copy='a copy of /.*/taskbox-supervisor-static where it runs in the sandbox, else python3'
else
	copy='python3 \(this taskbox has no static supervisor\)'
fi
expect 0 "ok +work \\(default\\): plugin fake_good .*, supervisor $copy\$" \
	"$bin" providers --config "$tmp/good.json" --plugin-dir "$fakes"
# The waits each instance watches in its sandboxes at once, where the host
# cannot see their processes: its "watches", 64 unless set.
expect 0 "ok +work \\(default\\): plugin fake_good .*, 64 watches, supervisor " \
	"$bin" providers --config "$tmp/good.json" --plugin-dir "$fakes"
expect 0 "ok +box: plugin fake_good .*, 8 watches, supervisor " \
	"$bin" providers --config "$tmp/good.json" --plugin-dir "$fakes"
# "watches" on a provider that sees its tasks' processes (local) has no
# effect: check-config, providers and serve say so, and go on.
cat >"$tmp/localwatches.json" <<'JSON'
{"default": "l", "providers": {"l": {"plugin": "local", "watches": 8}}}
JSON
unused='\$\.providers\.l\.watches: has no effect with plugin local: the server sees'
expect 0 "^warning: $unused" "$bin" check-config "$tmp/localwatches.json"
expect 0 'ok +l \(default\): plugin local .*, "watches" unused \(it sees the processes\), supervisor ' \
	env -u TASKBOX_SUPERVISOR "$bin" providers --config "$tmp/localwatches.json"
expect 0 "^taskbox: warn: $unused" sh -c "echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}' |
	'$bin' --config '$tmp/localwatches.json' >/dev/null"
# "supervisor": "static": the copy from the first verb on, or python3 with
# the reason where this build has no static supervisor.
cat >"$tmp/static.json" <<'JSON'
{"default": "s", "providers": {"s": {"plugin": "fake_good", "supervisor": "static"}}}
JSON
if [ -n "$copy" ]; then
	chosen='supervisor a copy of /.*/taskbox-supervisor-static$'
else
	chosen='supervisor python3 \("static" asked, but this taskbox has no static supervisor\)$'
fi
expect 0 "ok +s \\(default\\): plugin fake_good .*, $chosen" \
	"$bin" providers --config "$tmp/static.json" --plugin-dir "$fakes"
# "supervisor": "python3": python3 everywhere, the local provider too.
cat >"$tmp/python3.json" <<'JSON'
{"default": "p", "providers": {"p": {"plugin": "fake_good", "supervisor": "python3"}}}
JSON
cat >"$tmp/python3-local.json" <<'JSON'
{"default": "l", "providers": {"l": {"plugin": "local", "supervisor": "python3"}}}
JSON
expect 0 'ok +p \(default\): plugin fake_good .*, supervisor python3 \("supervisor": "python3"\)$' \
	"$bin" providers --config "$tmp/python3.json" --plugin-dir "$fakes"
expect 0 'ok +l \(default\): plugin local .*, supervisor python3 \("supervisor": "python3"\)$' \
	env -u TASKBOX_SUPERVISOR "$bin" providers --config "$tmp/python3-local.json"
expect 0 'ok +local \(default\): plugin local [^,]*, ABI [^,]*, [^,]*, supervisor /.*/taskbox-supervisor$' \
	env -u TASKBOX_SUPERVISOR "$bin" providers
for reason in \
	'fake_major\.la: ABI major 2, host speaks 1' \
	"fake_minor\\.la: ABI minor $((minor + 1)) is newer" \
	'fake_short\.la: struct_size [0-9]+ is shorter than' \
	'fake_nullop\.la: required op exec is NULL' \
	'fake_badname\.la: descriptor name "other_name" does not match' \
	'fake_nosym\.la: no taskbox_provider_entry_v1 symbol' \
	"ok +fake_good +1\\.0 +ABI 1\\.$minor +.*/fake_good\\.la" \
	'ok +fake_initfail '; do
	expect 0 "$reason" "$bin" providers --config "$tmp/good.json" \
		--plugin-dir "$fakes"
done
cat >"$tmp/initfail.json" <<'JSON'
{"default": "a", "providers": {"a": {"plugin": "fake_initfail"}}}
JSON
expect 4 'failed +a \(default\): instance "a": .*fake_initfail\.la: init failed \(TASKBOX_E_INVALID\): settings\.endpoint: required' \
	"$bin" providers --config "$tmp/initfail.json" --plugin-dir "$fakes"
cat >"$tmp/missing-plugin.json" <<'JSON'
{"default": "a", "providers": {"a": {"plugin": "nonesuch"}}}
JSON
expect 4 'plugin "nonesuch" not found' \
	"$bin" providers --config "$tmp/missing-plugin.json"
expect 0 'ok +fake_good' env TASKBOX_PLUGIN_PATH="/nonexistent:$fakes" \
	"$bin" providers --config "$tmp/good.json"

# check-config finds each instance's plugin as serve would: a missing or
# rejected plugin is named by its field, exit 4; --start also runs each
# plugin's init on its settings.
expect 4 '^\$\.providers\.a\.plugin: plugin "nonesuch" not found' \
	"$bin" check-config "$tmp/missing-plugin.json"
expect 4 'missing-plugin\.json: 1 instance would not load \(search path ' \
	"$bin" check-config "$tmp/missing-plugin.json"
expect 4 '^\$\.providers\.w\.plugin: plugin "no_such_plugin" not found' \
	sh -c "echo '{\"providers\":{\"w\":{\"plugin\":\"no_such_plugin\"}},\"default\":\"w\"}' >'$tmp/w.json' &&
	'$bin' check-config '$tmp/w.json'"
expect 4 'good.json: 2 instances would not load' \
	"$bin" check-config "$tmp/good.json"
cat >"$tmp/major.json" <<'JSON'
{"default": "a", "providers": {"a": {"plugin": "fake_major"}}}
JSON
expect 4 '^\$\.providers\.a\.plugin: .*fake_major\.la: ABI major 2, host speaks 1' \
	"$bin" check-config "$tmp/major.json" --plugin-dir "$fakes"
expect 0 'initfail\.json: ok: 1 instance' \
	"$bin" check-config "$tmp/initfail.json" --plugin-dir "$fakes"
expect 4 '^\$\.providers\.a\.settings: instance "a": .*fake_initfail\.la: init failed \(TASKBOX_E_INVALID\): settings\.endpoint: required' \
	"$bin" check-config --start "$tmp/initfail.json" --plugin-dir "$fakes"
expect 0 'good\.json: ok: 2 instances, default "work", each started and stopped' \
	"$bin" check-config --start "$tmp/good.json" --plugin-dir "$fakes"
cat >"$tmp/local-bad.json" <<'JSON'
{"default": "w", "providers": {"w": {"plugin": "local", "settings": {"bogus": 1}}}}
JSON
expect 0 'local-bad\.json: ok' "$bin" check-config "$tmp/local-bad.json"
expect 4 "^\\\$\.providers\.w\.settings: .*unknown setting 'bogus'" \
	"$bin" check-config "$tmp/local-bad.json" --start
expect 2 '--start is an option of check-config, not of providers' \
	"$bin" providers --start

# A token source that is configured and names no token is a start-up
# error naming the source (never an open server); a loopback server with
# no token source at all says once that it is unauthenticated.
cat >"$tmp/tok-empty.json" <<JSON
{"default": "l", "providers": {"l": {"plugin": "local"}},
 "http": {"token_file": "$tmp/tokens-empty"}}
JSON
printf '# nobody yet\n\n' >"$tmp/tokens-empty"
expect 3 '^\$\.http\.token_file \(.*tokens-empty\): names no token' \
	timeout 20 "$bin" serve --config "$tmp/tok-empty.json" --http 127.0.0.1:0
cat >"$tmp/tok-env.json" <<'JSON'
{"default": "l", "providers": {"l": {"plugin": "local"}},
 "http": {"token_env": "TB_CLI_TEST_UNSET_TOKEN"}}
JSON
expect 3 '^\$\.http\.token_env: \$TB_CLI_TEST_UNSET_TOKEN is not set' \
	timeout 20 env -u TB_CLI_TEST_UNSET_TOKEN "$bin" serve --config "$tmp/tok-env.json" \
	--http 127.0.0.1:0
expect 3 '^the token \(\$TASKBOX_HTTP_TOKEN\): names no token' \
	timeout 20 env TASKBOX_HTTP_TOKEN=, "$bin" serve --http 127.0.0.1:0
printf 'secret-one alice\nsecret-one bob\n' >"$tmp/tokens-twice"
cat >"$tmp/tok-twice.json" <<JSON
{"default": "l", "providers": {"l": {"plugin": "local"}},
 "http": {"token_file": "$tmp/tokens-twice"}}
JSON
expect 3 'tokens-twice\): line 2: a token given before is given again' \
	timeout 20 "$bin" serve --config "$tmp/tok-twice.json" --http 127.0.0.1:0
if grep -q secret-one "$tmp/out"; then
	echo "FAIL: the duplicate token's error shows the token"
	fail=1
fi
expect 0 'warn: unauthenticated: no token source is configured, so every request is served as principal local' \
	sh -c "'$bin' serve --http 127.0.0.1:0 & p=\$!; sleep 1; kill \$p; wait \$p"

# serve's default workers follow the open-file limit, 8 to 32 (an eighth
# of what the limit leaves for calls and waits); --workers wins.
expect 0 'serving MCP on stdio with up to 8 workers' \
	sh -c "ulimit -n 1024 && exec '$bin' serve --log-level info </dev/null"
if [ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 4096 ]; then
	expect 0 'serving MCP on stdio with up to 32 workers' \
		sh -c "ulimit -n 4096 && exec '$bin' serve --log-level info </dev/null"
	expect 0 'serving MCP on stdio with up to 5 workers' \
		sh -c "ulimit -n 4096 && exec '$bin' serve --workers 5 --log-level info </dev/null"
else
	echo "skipped: the default workers under 4096 descriptors (hard limit $(ulimit -Hn))"
fi

exit $fail
