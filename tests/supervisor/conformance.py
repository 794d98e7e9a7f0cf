#!/usr/bin/env python3
"""Conformance suite for a taskbox supervisor (docs/supervisor.md).

It drives the supervisor through its command line only, so any
implementation of the document can be tested: $TB_SUPERVISOR is the command
prefix (split like a shell would), by default
  <this python3> -I <srcdir>/core/supervisor/taskbox_supervisor.py
Each test works in its own temporary home directory.
"""
import base64
import ctypes
import fcntl
import itertools
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("TASKBOX_SRCDIR") or os.path.join(HERE, "..", "..")
SOURCE = os.path.join(SRCDIR, "core", "supervisor", "taskbox_supervisor.py")
PREFIX = shlex.split(os.environ.get("TB_SUPERVISOR", "")) or [
    sys.executable, "-I", SOURCE]
# A second implementation, for the tests that mix the two on one root.
OTHER = shlex.split(os.environ.get("TB_SUPERVISOR_OTHER", ""))
ROOT = ".taskbox/tasks"
MIB = 1048576
STATUS_KEYS = ["format", "task_id", "state", "command", "cwd", "timeout",
               "started_at", "finished_at", "exit_code", "supervisor_pid",
               "supervisor_start", "pgid", "pgid_start", "stdout_bytes",
               "stderr_bytes", "stdout_truncated", "stderr_truncated",
               "cancel_requested", "error", "stdin", "idempotency_key",
               "signal", "ended_by"]
TERMINAL = ("succeeded", "failed", "cancelled", "timed_out")
# Generous bounds for waiting on real processes (never speed assertions).
PATIENCE = 60.0
# fcntl(2): a pipe's capacity (Linux; Python 3.10 names it).
F_SETPIPE_SZ = 1031
# The heartbeat is rewritten at least every second: one read at any moment
# is at most this old (ms), scheduling included.
HEARTBEAT_MAX_AGE = 1500
# How far a fresh heartbeat may be from this process's clock (ms).
CLOCK_SLACK = 3000


def become_subreaper():
    """Orphaned supervisors become our children, so we can reap them even
    where PID 1 does not (PR_SET_CHILD_SUBREAPER)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def descendants(pid):
    """The pids of PID's descendants, from /proc."""
    parent = {}
    for name in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % name) as f:
                parent[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            pass
    found, todo = [], [pid]
    while todo:
        kids = [c for c, p in parent.items() if p == todo[-1]]
        todo.pop()
        found += kids
        todo += kids
    return found


def fd_kinds(pid):
    """What PID's descriptors point at (readlink of /proc/PID/fd/*)."""
    kinds = set()
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                kinds.add(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
            except OSError:
                pass
    except OSError:
        pass
    return kinds


def wchan(pid):
    """Where in the kernel PID sleeps (/proc/PID/wchan), or ""."""
    try:
        with open("/proc/%d/wchan" % pid) as f:
            return f.read()
    except OSError:
        return ""


def read_syscalls(pid):
    """PID's count of read system calls so far (/proc/PID/io syscr)."""
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            if line.startswith("syscr:"):
                return int(line.split()[1])
    raise AssertionError("no syscr in /proc/%d/io" % pid)


def reap_orphans():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def proc_stat(pid):
    """(state, pgrp, session, starttime) from /proc/PID/stat, or None."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            line = f.read()
    except OSError:
        return None
    fields = line[line.rindex(b")") + 2:].split()
    return (fields[0].decode(), int(fields[2]), int(fields[3]),
            int(fields[19]))


def alive(pid, start):
    """The host's liveness rule: /proc/PID/stat exists, its field 22 equals
    the recorded start, and the process is not a zombie."""
    stat = proc_stat(pid)
    return stat is not None and stat[3] == start and stat[0] not in "ZXx"


def running_pid(pid):
    stat = proc_stat(pid)
    return stat is not None and stat[0] not in "ZXx"


def group_members(pgid):
    members = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = proc_stat(int(name))
            if stat and stat[1] == pgid and stat[0] not in "ZXx":
                members.append(int(name))
    return members


def heavy_member(then, ignore_term=False):
    """A shell command that starts a member of its group holding 256 MiB and
    none of the task's pipes (after its SIGKILL the kernel takes a while to
    free that memory), waits until the member has its memory, then runs
    THEN."""
    code = "import signal, time; "
    if ignore_term:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    code += ("b = bytearray(256 << 20); open('big', 'w').close(); "
             "time.sleep(300)")
    return ("python3 -c \"%s\" </dev/null >/dev/null 2>&1 & "
            "while [ ! -e big ]; do sleep 0.01; done; %s" % (code, then))


def new_id():
    return os.urandom(16).hex()


class SupervisorCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="tb-sup-")
        self.home = os.path.realpath(self.tmp.name)
        self.env = dict(os.environ)
        self.pids_to_kill = []

    def tearDown(self):
        for pid in self.pids_to_kill:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for name in self.task_dirs():
            record = self.status(name)
            if record and record["state"] == "running":
                self.call("cancel", "--root", ROOT, "--id", name)
        reap_orphans()
        self.tmp.cleanup()

    # ---- driving the supervisor ----

    def run_cli(self, args, env=None, prefix=None, stdin=None):
        """Runs one verb (STDIN: bytes on its stdin, else /dev/null);
        returns (exit status, stdout, stderr). Safe in a thread: it asserts
        nothing."""
        proc = subprocess.run((prefix or PREFIX) + list(args), cwd=self.home,
                              env=env or self.env, input=stdin,
                              stdin=None if stdin is not None
                              else subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=PATIENCE)
        return proc.returncode, proc.stdout, proc.stderr

    def call(self, *args, env=None, prefix=None, stdin=None):
        """Runs one verb; returns (exit status, the one JSON object)."""
        code, out, _ = self.run_cli(args, env=env, prefix=prefix,
                                    stdin=stdin)
        lines = out.decode("utf-8").splitlines()
        self.assertEqual(len(lines), 1, "one JSON line expected, got %r"
                         % out)
        obj = json.loads(lines[0])
        self.assertIsInstance(obj, dict)
        return code, obj

    def start(self, command, timeout=60, tid=None, cwd=None, env=None,
              extra=(), prefix=None):
        """Starts COMMAND (EXTRA: more options, e.g. --stdin pipe)."""
        tid = tid or new_id()
        args = ["start", "--root", ROOT, "--id", tid, "--timeout",
                str(timeout)]
        if cwd is not None:
            args += ["--cwd", cwd]
        code, record = self.call(*(args + list(extra) +
                                   ["--command", command]),
                                 env=env, prefix=prefix)
        self.assertEqual(code, 0, record)
        self.assertEqual(record["task_id"], tid)
        return record

    def write(self, tid, data=None, eof=False, prefix=None):
        """Runs the write verb; returns (exit status, its JSON object)."""
        args = ["write", "--root", ROOT, "--id", tid]
        if data is not None:
            args += ["--data", base64.b64encode(data).decode("ascii")]
        if eof:
            args += ["--eof", "1"]
        return self.call(*args, prefix=prefix)

    def wrote(self, tid, data=None, eof=False, prefix=None):
        """Writes DATA (all of it) to TID's stdin; returns the JSON object."""
        code, obj = self.write(tid, data, eof, prefix)
        self.assertEqual(code, 0, obj)
        self.assertEqual(obj, {"task_id": tid, "written": len(data or b""),
                               "eof": eof})
        return obj

    def refused(self, code_name, *args):
        code, obj = self.call(*args)
        self.assertNotEqual(code, 0, obj)
        self.assertEqual(obj.get("code"), code_name, obj)
        self.assertIsInstance(obj.get("error"), str)
        self.assertTrue(obj["error"])
        return obj

    # ---- reading its files ----

    def path(self, tid, name=""):
        return os.path.join(self.home, ROOT, tid, name)

    def task_dirs(self):
        try:
            return [n for n in os.listdir(os.path.join(self.home, ROOT))
                    if len(n) == 32]
        except FileNotFoundError:
            return []

    def status(self, tid):
        try:
            with open(self.path(tid, "status.json"), "rb") as f:
                return json.loads(f.read().decode("utf-8"))
        except FileNotFoundError:
            return None

    def log(self, tid, stream):
        with open(self.path(tid, stream), "rb") as f:
            return f.read()

    def heartbeat(self, tid):
        """(the heartbeat's milliseconds, this process's clock in ms when it
        was read); the file must hold one line of decimal digits."""
        with open(self.path(tid, "heartbeat"), "rb") as f:
            raw = f.read()
        now = time.time() * 1000
        self.assertRegex(raw, rb"\A[0-9]+\n\Z")
        return int(raw), now

    def assert_fresh(self, tid):
        """The heartbeat is recent: written within HEARTBEAT_MAX_AGE."""
        beat, now = self.heartbeat(tid)
        self.assertLessEqual(now - beat, HEARTBEAT_MAX_AGE)
        self.assertGreaterEqual(now - beat, -CLOCK_SLACK)
        return beat

    def wait_terminal(self, tid, pause=0.02):
        end = time.monotonic() + PATIENCE
        while time.monotonic() < end:
            record = self.status(tid)
            if record["state"] in TERMINAL:
                return record
            time.sleep(pause)
        self.fail("task %s did not finish" % tid)

    def run_task(self, command, **kwargs):
        record = self.start(command, **kwargs)
        return self.wait_terminal(record["task_id"])

    def wait_output(self, tid, needle, stream="stdout"):
        """Waits until the log STREAM of TID holds NEEDLE; returns the log."""
        end = time.monotonic() + PATIENCE
        while True:
            data = self.log(tid, stream)
            if needle in data:
                return data
            ended = self.status(tid)["state"] in TERMINAL
            if ended or time.monotonic() > end:
                data = self.log(tid, stream)
                if needle in data:
                    return data
                self.fail("%r never appeared in %s: %r" % (needle, stream,
                                                           data))
            time.sleep(0.02)

    def wait_gone(self, record):
        """Waits until the supervisor of RECORD is no longer alive."""
        end = time.monotonic() + PATIENCE
        while alive(record["supervisor_pid"], record["supervisor_start"]):
            self.assertLess(time.monotonic(), end)
            time.sleep(0.02)


class TestStart(SupervisorCase):
    def test_start_returns_running_with_verified_pids(self):
        record = self.start("sleep 30")
        tid = record["task_id"]
        self.assertEqual(record["state"], "running")
        self.assertEqual(record["format"], 1)
        self.assertIsNone(record["finished_at"])
        self.assertIsNone(record["exit_code"])
        self.assertTrue(alive(record["supervisor_pid"],
                              record["supervisor_start"]))
        self.assertTrue(alive(record["pgid"], record["pgid_start"]))
        leader = proc_stat(record["pgid"])
        sup = proc_stat(record["supervisor_pid"])
        self.assertEqual(leader[1], record["pgid"], "leads its own group")
        self.assertNotEqual(sup[1], record["pgid"])
        self.assertNotEqual(sup[2], os.getsid(0), "supervisor in new session")
        for fd in ("0", "1", "2"):
            self.assertEqual(os.readlink("/proc/%d/fd/%s" % (
                record["supervisor_pid"], fd)), "/dev/null")
        self.assertEqual(os.readlink("/proc/%d/fd/0" % record["pgid"]),
                         "/dev/null")
        for rel in (".taskbox", ROOT, os.path.join(ROOT, tid)):
            mode = os.stat(os.path.join(self.home, rel)).st_mode & 0o777
            self.assertEqual(mode, 0o700, rel)
        for name in ("status.json", "stdout", "stderr"):
            mode = os.stat(self.path(tid, name)).st_mode & 0o777
            self.assertEqual(mode & 0o077, 0, name)
        self.assertEqual(self.status(tid)["state"], "running")

    def test_embedded_form_python_dash_c(self):
        if os.environ.get("TB_SUPERVISOR"):
            self.skipTest("tests the portable source only")
        with open(SOURCE, "rb") as f:
            source = f.read()
        self.assertNotIn(b"\0", source)
        self.assertLess(len(source), 100 * 1024)
        prefix = [sys.executable, "-I", "-c", source.decode("utf-8")]
        tid = new_id()
        code, record = self.call("start", "--root", ROOT, "--id", tid,
                                 "--timeout", "60", "--command",
                                 "printf embedded", prefix=prefix)
        self.assertEqual(code, 0, record)
        final = self.wait_terminal(tid)
        self.assertEqual(final["state"], "succeeded")
        self.assertEqual(self.log(tid, "stdout"), b"embedded")

    def test_exit_codes_and_states(self):
        cases = [("exit 0", "succeeded", 0), ("exit 3", "failed", 3),
                 ("kill -KILL $$", "failed", 128 + 9),
                 ("kill -TERM $$", "failed", 128 + 15),
                 ("echo out; echo err >&2", "succeeded", 0)]
        for command, state, exit_code in cases:
            record = self.run_task(command)
            self.assertEqual(record["state"], state, command)
            self.assertEqual(record["exit_code"], exit_code, command)
            self.assertIsNone(record["error"])
            self.assertGreaterEqual(record["finished_at"],
                                    record["started_at"])
        self.assertEqual(self.log(record["task_id"], "stdout"), b"out\n")
        self.assertEqual(self.log(record["task_id"], "stderr"), b"err\n")
        self.assertEqual(record["stdout_bytes"], 4)
        self.assertEqual(record["stderr_bytes"], 4)

    def test_command_is_reaped_by_the_supervisor(self):
        record = self.run_task("sleep 0.2")
        end = time.monotonic() + PATIENCE
        while alive(record["supervisor_pid"], record["supervisor_start"]):
            self.assertLess(time.monotonic(), end)
            time.sleep(0.02)
        # Orphans are reparented to this process and not reaped yet: a shell
        # the supervisor failed to reap would show here as a zombie.
        stat = proc_stat(record["pgid"])
        self.assertTrue(stat is None or stat[0] != "Z", stat)

    def test_status_shape(self):
        record = self.run_task("printf 'a\\nb'")
        self.assertEqual(list(record.keys()), STATUS_KEYS)
        ints = ("format", "timeout", "started_at", "finished_at",
                "exit_code", "supervisor_pid", "supervisor_start", "pgid",
                "pgid_start", "stdout_bytes", "stderr_bytes")
        for key in ints:
            self.assertIs(type(record[key]), int, key)
        for key in ("stdout_truncated", "stderr_truncated",
                    "cancel_requested"):
            self.assertIs(type(record[key]), bool, key)
        self.assertEqual(record["command"], "printf 'a\\nb'")
        self.assertIsNone(record["cwd"])
        self.assertEqual(record["timeout"], 60)
        self.assertEqual(sorted(os.listdir(self.path(record["task_id"]))),
                         ["heartbeat", "status.json", "stderr", "stdout"])
        with open(self.path(record["task_id"], "status.json"), "rb") as f:
            raw = f.read()
        self.assertTrue(raw.endswith(b"\n"))
        self.assertEqual(raw.count(b"\n"), 1)

    def test_status_is_always_whole_while_replaced(self):
        record = self.start("trap '' TERM; sleep 30")
        tid = record["task_id"]
        seen, bad, stop = set(), [], threading.Event()

        def reader():
            # One read after stop too: the terminal record is then seen
            # however quickly the task ended.
            while True:
                last = stop.is_set()
                with open(self.path(tid, "status.json"), "rb") as f:
                    raw = f.read()
                try:
                    seen.add(json.loads(raw)["state"])
                except ValueError:
                    bad.append(raw)
                if last:
                    break

        thread = threading.Thread(target=reader)
        thread.start()
        try:
            self.call("cancel", "--root", ROOT, "--id", tid)
            self.wait_terminal(tid)
        finally:
            stop.set()
            thread.join()
        self.assertEqual(bad, [])
        self.assertIn("cancelled", seen)

    def test_cwd_and_spawn_failure(self):
        os.makedirs(os.path.join(self.home, "work", "sub"))
        record = self.run_task("pwd", cwd="work/sub")
        self.assertEqual(record["cwd"], "work/sub")
        self.assertEqual(self.log(record["task_id"], "stdout").decode(),
                         os.path.join(self.home, "work", "sub") + "\n")
        record = self.start("echo never", cwd="no/such/dir")
        if record["state"] == "running":
            record = self.wait_terminal(record["task_id"])
        self.assertEqual(record["state"], "failed")
        self.assertIsInstance(record["error"], str)
        self.assertIn("no/such/dir", record["error"])
        self.assertEqual(self.log(record["task_id"], "stdout"), b"")

    def test_stdin_is_dev_null(self):
        record = self.run_task("cat; echo done")
        self.assertEqual(record["state"], "succeeded")
        self.assertEqual(self.log(record["task_id"], "stdout"), b"done\n")

    def test_existing_id_is_refused(self):
        record = self.run_task("true")
        self.refused("exists", "start", "--root", ROOT, "--id",
                     record["task_id"], "--timeout", "5", "--command", "true")
        self.assertEqual(self.status(record["task_id"]), record)


class TestOutput(SupervisorCase):
    def test_ten_mib_per_stream_keeps_one_mib(self):
        command = ("head -c 10485760 /dev/zero | tr '\\0' a & "
                   "head -c 10485760 /dev/zero | tr '\\0' b >&2; wait")
        record = self.run_task(command)
        tid = record["task_id"]
        self.assertEqual(record["state"], "succeeded")
        self.assertEqual(record["stdout_bytes"], MIB)
        self.assertEqual(record["stderr_bytes"], MIB)
        self.assertTrue(record["stdout_truncated"])
        self.assertTrue(record["stderr_truncated"])
        self.assertEqual(self.log(tid, "stdout"), b"a" * MIB)
        self.assertEqual(self.log(tid, "stderr"), b"b" * MIB)

    def test_exactly_one_mib_is_not_truncated(self):
        record = self.run_task("head -c 1048576 /dev/zero | tr '\\0' c")
        self.assertEqual(record["stdout_bytes"], MIB)
        self.assertFalse(record["stdout_truncated"])
        self.assertFalse(record["stderr_truncated"])

    def test_one_byte_past_the_cap_is_truncated(self):
        # The byte past the cap is the whole of what is discarded.
        record = self.run_task("head -c 1048577 /dev/zero | tr '\\0' c")
        self.assertEqual(record["stdout_bytes"], MIB)
        self.assertTrue(record["stdout_truncated"])
        self.assertEqual(self.log(record["task_id"], "stdout"), b"c" * MIB)

    def test_secrets_are_masked(self):
        env = dict(self.env, MY_API_KEY="s3cr3t-value-123",
                   db_password="hunter22", Some_Secret_Thing="opensesame",
                   SHORT_TOKEN="abc", PLAIN_NAME="visible-value")
        command = ('printf "k=%s p=%s s=%s t=%s n=%s\\n" "$MY_API_KEY" '
                   '"$db_password" "$Some_Secret_Thing" "$SHORT_TOKEN" '
                   '"$PLAIN_NAME"; printf "%s\\n" "$db_password" >&2; '
                   ': s3cr3t-value-123')
        record = self.run_task(command, env=env)
        tid = record["task_id"]
        self.assertEqual(self.log(tid, "stdout"),
                         b"k=**** p=**** s=**** t=abc n=visible-value\n")
        self.assertEqual(self.log(tid, "stderr"), b"****\n")
        self.assertNotIn("s3cr3t-value-123", record["command"])
        self.assertIn(": ****", record["command"])
        self.assertEqual(record["stdout_bytes"], len(self.log(tid, "stdout")))

    def test_secret_split_across_two_writes_is_masked(self):
        env = dict(self.env, DEPLOY_TOKEN="tok-0123456789")
        command = ("printf 'before tok-01234'; sleep 0.3; "
                   "printf '56789 after'; printf 'tok-0123' >&2; sleep 0.3; "
                   "printf '456789' >&2")
        record = self.run_task(command, env=env)
        tid = record["task_id"]
        self.assertEqual(self.log(tid, "stdout"), b"before **** after")
        self.assertEqual(self.log(tid, "stderr"), b"****")

    def test_secret_inside_a_longer_secret(self):
        env = dict(self.env, OUTER_KEY="xx-inner-yy", INNER_KEY="inner")
        command = ("printf 'a xx-inn'; sleep 0.3; printf 'er-yy b inner c'; "
                   "sleep 0.3; printf ' xx-inner'")
        record = self.run_task(command, env=env)
        self.assertEqual(self.log(record["task_id"], "stdout"),
                         b"a **** b **** c xx-****")

    def test_partial_secret_at_end_is_kept(self):
        env = dict(self.env, DEPLOY_TOKEN="tok-0123456789")
        record = self.run_task("printf 'x tok-0123'", env=env)
        self.assertEqual(self.log(record["task_id"], "stdout"),
                         b"x tok-0123")


    def test_secret_split_at_every_byte(self):
        secret = "split-me-0123456789"
        env = dict(self.env, SPLIT_TOKEN=secret)
        parts = ["printf %%s '%s'; sleep 0.05; printf '%%s\\n' '%s'"
                 % (secret[:k], secret[k:]) for k in range(1, len(secret))]
        record = self.run_task("; ".join(parts), env=env)
        self.assertEqual(self.log(record["task_id"], "stdout"),
                         b"****\n" * (len(secret) - 1))

    def test_masked_output_past_the_cap(self):
        env = dict(self.env, BIG_SECRET="abcdefghij")
        # 4 MiB of "abcdefghij-" lines: masked, each is "****-".
        command = ("yes abcdefghij- | tr -d '\\n' | head -c 4194304; "
                   "printf tail-abcdefghij >&2")
        record = self.run_task(command, env=env)
        tid = record["task_id"]
        masked = b"****-" * (MIB // 5 + 1)
        self.assertEqual(record["stdout_bytes"], MIB)
        self.assertTrue(record["stdout_truncated"])
        self.assertEqual(self.log(tid, "stdout"), masked[:MIB])
        self.assertEqual(self.log(tid, "stderr"), b"tail-****")
        self.assertFalse(record["stderr_truncated"])

    def test_bytes_that_are_not_utf8_become_replacement_characters(self):
        tid = new_id()
        command = b"printf '\xff\xe2\x82 ok \xc3\xa9'"
        code, record = self.call("start", "--root", ROOT, "--id", tid,
                                 "--timeout", "60", "--command", command)
        self.assertEqual(code, 0, record)
        final = self.wait_terminal(tid)
        self.assertEqual(final["command"],
                         "printf '\ufffd\ufffd ok \u00e9'")
        self.assertEqual(self.log(tid, "stdout"), b"\xff\xe2\x82 ok \xc3\xa9")


class TestTimeoutAndCancel(SupervisorCase):
    def test_timeout_is_enforced_without_polling(self):
        record = self.start("sleep 30", timeout=1)
        tid = record["task_id"]
        supervisor = record["supervisor_pid"]
        end = time.monotonic() + PATIENCE
        while alive(supervisor, record["supervisor_start"]) and \
                time.monotonic() < end:
            time.sleep(0.1)  # watch /proc only; status.json is not read
        final = self.status(tid)
        self.assertEqual(final["state"], "timed_out")
        self.assertEqual(final["exit_code"], 128 + signal.SIGTERM)
        self.assertEqual(group_members(final["pgid"]), [])

    def test_timeout_kills_a_command_ignoring_term(self):
        record = self.run_task("trap '' TERM; sleep 30", timeout=1)
        self.assertEqual(record["state"], "timed_out")
        self.assertEqual(record["exit_code"], 128 + signal.SIGKILL)
        self.assertEqual(group_members(record["pgid"]), [])

    def test_cancel_term_honoured(self):
        record = self.start("sleep 30")
        tid = record["task_id"]
        code, final = self.call("cancel", "--root", ROOT, "--id", tid)
        self.assertEqual(code, 0, final)
        self.assertEqual(final["state"], "cancelled")
        self.assertTrue(final["cancel_requested"])
        self.assertEqual(final["exit_code"], 128 + signal.SIGTERM)
        self.assertEqual(final, self.status(tid))
        self.assertEqual(group_members(final["pgid"]), [])

    def test_cancel_term_ignored_gets_kill_within_wait(self):
        # The cancel must find the trap set: a TERM that comes before it
        # ends the shell, rightly, with 143.
        record = self.start("trap '' TERM; echo ready; sleep 30 & sleep 30; "
                            "wait")
        self.wait_output(record["task_id"], b"ready")
        code, final = self.call("cancel", "--root", ROOT, "--id",
                                record["task_id"], "--wait", "3")
        self.assertEqual(code, 0, final)
        self.assertEqual(final["state"], "cancelled")
        self.assertEqual(final["exit_code"], 128 + signal.SIGKILL)
        self.assertEqual(group_members(final["pgid"]), [])

    def test_cancel_finished_returns_saved_outcome_repeatedly(self):
        record = self.run_task("exit 7")
        for _ in range(2):
            code, again = self.call("cancel", "--root", ROOT, "--id",
                                    record["task_id"])
            self.assertEqual(code, 0)
            self.assertEqual(again, record)
        self.assertEqual(again["state"], "failed")
        self.assertFalse(again["cancel_requested"])

    def test_repeated_cancel_of_running_task(self):
        record = self.start("sleep 30")
        tid = record["task_id"]
        code, first = self.call("cancel", "--root", ROOT, "--id", tid,
                                "--wait", "0")
        self.assertEqual(code, 0, first)
        self.assertIn(first["state"], ("running", "cancelled"))
        code, second = self.call("cancel", "--root", ROOT, "--id", tid)
        self.assertEqual(second["state"], "cancelled")
        code, third = self.call("cancel", "--root", ROOT, "--id", tid)
        self.assertEqual(third, second)

    def test_completion_kills_same_group_descendants(self):
        record = self.run_task("sleep 300 & echo $! > bg.pid; exit 0")
        self.assertEqual(record["state"], "succeeded")
        with open(os.path.join(self.home, "bg.pid")) as f:
            background = int(f.read())
        reap_orphans()
        self.assertFalse(running_pid(background))
        self.assertEqual(group_members(record["pgid"]), [])

    def test_failure_kills_same_group_descendants(self):
        record = self.run_task("sleep 300 & sleep 300 & exit 4")
        self.assertEqual(record["exit_code"], 4)
        self.assertEqual(group_members(record["pgid"]), [])

    def test_a_member_slow_to_die_is_gone_before_the_final_record(self):
        # A member holding much memory is still exiting for milliseconds
        # after its SIGKILL (the kernel frees its pages first), and one that
        # holds no pipe of the task does not hold back the final drain
        # either; the record is read as soon as it is terminal.
        tid = self.start(heavy_member("exit 0"))["task_id"]
        record = self.wait_terminal(tid, pause=0.001)
        members = group_members(record["pgid"])
        self.assertEqual(record["state"], "succeeded")
        self.assertEqual(members, [])

    def test_own_session_escapes_but_group_is_clean(self):
        command = ("setsid sleep 300 > /dev/null 2>&1 & echo $! > esc.pid; "
                   "sleep 300 & exit 0")
        record = self.run_task(command)
        with open(os.path.join(self.home, "esc.pid")) as f:
            escaped = int(f.read())
        self.pids_to_kill.append(escaped)
        self.assertEqual(group_members(record["pgid"]), [])
        stat = proc_stat(escaped)
        if stat is not None and stat[0] not in "ZXx":
            self.assertNotEqual(stat[1], record["pgid"])

    def test_escapee_holding_the_pipe_does_not_block_completion(self):
        record = self.run_task("setsid sleep 300 & echo $! > esc.pid; "
                               "echo done")
        with open(os.path.join(self.home, "esc.pid")) as f:
            self.pids_to_kill.append(int(f.read()))
        self.assertEqual(record["state"], "succeeded")
        self.assertEqual(self.log(record["task_id"], "stdout"), b"done\n")

    def test_killed_supervisor_is_detectable(self):
        record = self.start("sleep 30")
        tid = record["task_id"]
        os.kill(record["supervisor_pid"], signal.SIGKILL)
        end = time.monotonic() + PATIENCE
        while alive(record["supervisor_pid"], record["supervisor_start"]):
            self.assertLess(time.monotonic(), end)
            time.sleep(0.02)
        reap_orphans()
        saved = self.status(tid)
        self.assertEqual(saved["state"], "running")
        self.assertFalse(alive(saved["supervisor_pid"],
                               saved["supervisor_start"]))
        self.refused("running", "remove", "--root", ROOT, "--id", tid)
        code, after = self.call("cancel", "--root", ROOT, "--id", tid)
        self.assertEqual(code, 0, after)
        self.assertIs(after.get("supervisor_gone"), True)
        self.assertEqual(after["state"], "running")
        reap_orphans()
        self.assertEqual(group_members(saved["pgid"]), [])
        code, removed = self.call("remove", "--root", ROOT, "--id", tid)
        self.assertEqual(code, 0, removed)

    def test_cancel_of_an_orphan_kills_and_outlives_its_whole_group(self):
        # The shell takes the TERM and goes; a member that ignores it still
        # gets the KILL, and (as above) is gone when the verb answers.
        record = self.start(heavy_member("wait", ignore_term=True))
        os.kill(record["supervisor_pid"], signal.SIGKILL)
        end = time.monotonic() + PATIENCE
        while alive(record["supervisor_pid"], record["supervisor_start"]):
            self.assertLess(time.monotonic(), end)
            time.sleep(0.02)
        code, after = self.call("cancel", "--root", ROOT, "--id",
                                record["task_id"])
        members = group_members(record["pgid"])
        self.assertEqual(code, 0, after)
        self.assertIs(after.get("supervisor_gone"), True)
        self.assertEqual(members, [])
        reap_orphans()


class TestHeartbeat(SupervisorCase):
    def test_heartbeat_beside_the_first_running_record(self):
        record = self.start("sleep 5")
        self.assertEqual(record["state"], "running")
        tid = record["task_id"]
        beat, now = self.heartbeat(tid)
        self.assertLess(abs(now - beat), CLOCK_SLACK)
        mode = os.stat(self.path(tid, "heartbeat")).st_mode & 0o777
        self.assertEqual(mode, 0o600)

    def test_heartbeat_advances_while_a_quiet_task_runs(self):
        tid = self.start("sleep 5")["task_id"]
        first, _ = self.heartbeat(tid)
        time.sleep(2.5)
        self.assertEqual(self.status(tid)["state"], "running")
        second = self.assert_fresh(tid)
        self.assertGreater(second, first)
        final = self.wait_terminal(tid)
        self.assertEqual(final["state"], "succeeded")
        names = os.listdir(self.path(tid))
        self.assertIn("heartbeat", names)
        self.assertNotIn("heartbeat.tmp", names)
        mode = os.stat(self.path(tid, "heartbeat")).st_mode & 0o777
        self.assertEqual(mode, 0o600)

    def test_heartbeat_advances_while_output_floods(self):
        tid = self.start("yes & yes >&2; wait")["task_id"]
        first, _ = self.heartbeat(tid)
        time.sleep(2.5)
        self.assertEqual(self.status(tid)["state"], "running")
        self.assertGreater(self.assert_fresh(tid), first)

    def test_heartbeat_advances_while_a_cancel_waits(self):
        tid = self.start("trap '' TERM; sleep 30")["task_id"]
        code, record = self.call("cancel", "--root", ROOT, "--id", tid,
                                 "--wait", "0")
        self.assertEqual(code, 0, record)
        time.sleep(1.2)  # within the 1.5 s before the group's SIGKILL
        if self.status(tid)["state"] == "running":
            self.assert_fresh(tid)
        self.assertEqual(self.wait_terminal(tid)["state"], "cancelled")

    def test_heartbeat_advances_during_the_final_drain(self):
        # The escapee holds the stdout pipe: after the shell exits the
        # supervisor drains for 2 s before its terminal record. It writes
        # its pid once it has left the group, which the shell waits for.
        command = ("setsid sh -c 'echo $$ > esc.pid; exec sleep 300' & "
                   "until [ -s esc.pid ]; do sleep 0.01; done; : > exiting")
        tid = self.start(command)["task_id"]
        end = time.monotonic() + PATIENCE
        while not os.path.exists(os.path.join(self.home, "exiting")):
            self.assertLess(time.monotonic(), end)
            time.sleep(0.01)
        with open(os.path.join(self.home, "esc.pid")) as f:
            self.pids_to_kill.append(int(f.read()))
        time.sleep(1.5)  # past a beat due in the drain, before its end
        self.assert_fresh(tid)
        self.assertEqual(self.status(tid)["state"], "running")
        self.assertEqual(self.wait_terminal(tid)["state"], "succeeded")

    def test_heartbeat_that_cannot_be_written_is_ignored(self):
        tid = self.start("sleep 2.5; echo done")["task_id"]
        beat = self.path(tid, "heartbeat")
        for _ in range(100):  # a beat may land between unlink and mkdir
            try:
                os.unlink(beat)
                os.mkdir(beat)  # the rename over it now fails
                break
            except (FileNotFoundError, FileExistsError):
                continue
        self.assertTrue(os.path.isdir(beat))
        final = self.wait_terminal(tid)
        self.assertEqual(final["state"], "succeeded")
        self.assertIsNone(final["error"])
        self.assertEqual(self.log(tid, "stdout"), b"done\n")
        self.assertNotIn("heartbeat.tmp", os.listdir(self.path(tid)))
        code, removed = self.call("remove", "--root", ROOT, "--id", tid)
        self.assertEqual(code, 0, removed)

    def test_killed_supervisor_heartbeat_stops(self):
        record = self.start("sleep 30")
        tid = record["task_id"]
        os.kill(record["supervisor_pid"], signal.SIGKILL)
        end = time.monotonic() + PATIENCE
        while alive(record["supervisor_pid"], record["supervisor_start"]):
            self.assertLess(time.monotonic(), end)
            time.sleep(0.02)
        last, _ = self.heartbeat(tid)
        time.sleep(1.5)
        self.assertEqual(self.heartbeat(tid)[0], last)
        self.assertEqual(self.status(tid)["state"], "running")
        code, listed = self.call("list", "--root", ROOT)
        self.assertEqual(code, 0, listed)
        self.assertEqual([t["task_id"] for t in listed["tasks"]], [tid])
        self.call("cancel", "--root", ROOT, "--id", tid)
        code, removed = self.call("remove", "--root", ROOT, "--id", tid)
        self.assertEqual(code, 0, removed)
        self.assertEqual(self.task_dirs(), [])


class TestLimitsAndRemove(SupervisorCase):
    def test_limit_of_128_and_remove(self):
        first = self.run_task("true")
        # Copies of a finished task fill the root faster than 126 starts;
        # every 32-hex directory counts, however it came to be.
        with open(self.path(first["task_id"], "status.json")) as f:
            template = json.load(f)
        for _ in range(126):
            tid = new_id()
            os.mkdir(self.path(tid), 0o700)
            template["task_id"] = tid
            with open(self.path(tid, "status.json"), "w") as f:
                f.write(json.dumps(template) + "\n")
        last = self.run_task("true")
        self.assertEqual(len(self.task_dirs()), 128)
        obj = self.refused("limit", "start", "--root", ROOT, "--id",
                           new_id(), "--timeout", "5", "--command", "true")
        self.assertIn("128", obj["error"])
        self.assertIn("remove", obj["error"])
        self.assertEqual(len(self.task_dirs()), 128)
        code, removed = self.call("remove", "--root", ROOT, "--id",
                                  last["task_id"])
        self.assertEqual(code, 0, removed)
        self.assertFalse(os.path.exists(self.path(last["task_id"])))
        self.run_task("true")
        self.assertEqual(len(self.task_dirs()), 128)

    def test_remove_refuses_running_and_unknown(self):
        record = self.start("sleep 30")
        tid = record["task_id"]
        self.refused("running", "remove", "--root", ROOT, "--id", tid)
        self.assertTrue(os.path.isdir(self.path(tid)))
        self.refused("not_found", "remove", "--root", ROOT, "--id", new_id())
        self.call("cancel", "--root", ROOT, "--id", tid)
        self.wait_terminal(tid)
        code, removed = self.call("remove", "--root", ROOT, "--id", tid)
        self.assertEqual(code, 0, removed)
        self.assertTrue(removed.get("removed"))
        self.assertEqual(self.task_dirs(), [])
        self.refused("not_found", "cancel", "--root", ROOT, "--id", tid)

    def test_list_newest_first(self):
        code, empty = self.call("list", "--root", ROOT)
        self.assertEqual((code, empty), (0, {"tasks": []}))
        ids = [self.run_task("true")["task_id"]]
        time.sleep(1.05)  # started_at has a one-second resolution
        ids.append(self.run_task("true")["task_id"])
        code, listed = self.call("list", "--root", ROOT)
        self.assertEqual(code, 0)
        self.assertEqual([t["task_id"] for t in listed["tasks"]],
                         ids[::-1])


class TestRecordKeys(SupervisorCase):
    """stdin, idempotency_key, signal and ended_by."""

    def test_defaults_while_running(self):
        record = self.start("sleep 30")
        self.assertEqual(list(record.keys()), STATUS_KEYS)
        self.assertEqual(record["stdin"], "null")
        self.assertIsNone(record["idempotency_key"])
        self.assertIsNone(record["signal"])
        self.assertIsNone(record["ended_by"])
        self.assertEqual(self.status(record["task_id"]), record)

    def test_normal_exits_end_by_exit_without_signal(self):
        for command, exit_code in (("exit 0", 0), ("exit 3", 3)):
            record = self.run_task(command)
            self.assertEqual(list(record.keys()), STATUS_KEYS)
            self.assertEqual(record["exit_code"], exit_code)
            self.assertEqual(record["ended_by"], "exit")
            self.assertIsNone(record["signal"])
            self.assertEqual(record["stdin"], "null")
            self.assertIsNone(record["idempotency_key"])

    def test_signal_names_the_signal_that_ended_the_shell(self):
        record = self.run_task("kill -9 $$")
        self.assertEqual(record["state"], "failed")
        self.assertEqual(record["exit_code"], 128 + 9)
        self.assertEqual(record["signal"], "SIGKILL")
        self.assertEqual(record["ended_by"], "exit")
        record = self.run_task("kill -USR1 $$")
        self.assertEqual(record["exit_code"], 128 + 10)
        self.assertEqual(record["signal"], "SIGUSR1")

    def test_a_shell_exiting_128_plus_n_reports_no_signal(self):
        # The inner shell is killed; the outer one exits with 137 itself.
        record = self.run_task("sh -c 'kill -9 $$'; exit $?")
        self.assertEqual(record["exit_code"], 128 + 9)
        self.assertIsNone(record["signal"])
        self.assertEqual(record["ended_by"], "exit")

    def test_cancel_ends_by_cancel(self):
        record = self.start("exec sleep 30")
        code, final = self.call("cancel", "--root", ROOT, "--id",
                                record["task_id"])
        self.assertEqual(code, 0, final)
        self.assertEqual(final["state"], "cancelled")
        self.assertEqual(final["ended_by"], "cancel")
        # /bin/sh became sleep (exec), which the group's SIGTERM ended.
        self.assertEqual(final["exit_code"], 128 + 15)
        self.assertEqual(final["signal"], "SIGTERM")

    def test_timeout_ends_by_timeout(self):
        record = self.run_task("exec sleep 30", timeout=1)
        self.assertEqual(record["state"], "timed_out")
        self.assertEqual(record["ended_by"], "timeout")
        self.assertEqual(record["signal"], "SIGTERM")
        record = self.run_task("trap '' TERM; sleep 30", timeout=1)
        self.assertEqual(record["ended_by"], "timeout")
        self.assertEqual(record["signal"], "SIGKILL")

    def test_cancel_after_the_timeout_keeps_timeout(self):
        # The shell outlives the timeout's TERM; the KILL follows 1.5 s
        # later. A cancel in between (or after) changes nothing.
        record = self.start("trap 'echo got-term' TERM; "
                            "while :; do sleep 0.1; done", timeout=1)
        tid = record["task_id"]
        self.wait_output(tid, b"got-term")
        self.call("cancel", "--root", ROOT, "--id", tid)
        final = self.wait_terminal(tid)
        self.assertEqual(final["state"], "timed_out")
        self.assertEqual(final["ended_by"], "timeout")
        self.assertEqual(final["signal"], "SIGKILL")

    def test_spawn_failure_ends_by_exit(self):
        record = self.start("echo never", cwd="no/such/dir")
        if record["state"] == "running":
            record = self.wait_terminal(record["task_id"])
        self.assertEqual(record["state"], "failed")
        self.assertEqual(record["ended_by"], "exit")
        self.assertIsNone(record["signal"])
        self.assertEqual(list(record.keys()), STATUS_KEYS)


class TestWrite(SupervisorCase):
    PIPE = ("--stdin", "pipe")

    def test_read_loop_answered_line_by_line(self):
        record = self.start('while read l; do echo "got $l"; done',
                            extra=self.PIPE)
        tid = record["task_id"]
        self.assertEqual(record["stdin"], "pipe")
        self.wrote(tid, b"a\n")
        self.assertEqual(self.wait_output(tid, b"got a\n"), b"got a\n")
        self.assertEqual(self.status(tid)["state"], "running")
        self.wrote(tid, b"b\n")
        self.wait_output(tid, b"got b\n")
        self.wrote(tid, b"", eof=True)
        final = self.wait_terminal(tid)
        self.assertEqual(final["state"], "succeeded")
        self.assertEqual(final["ended_by"], "exit")
        self.assertEqual(final["stdin"], "pipe")
        self.assertEqual(self.log(tid, "stdout"), b"got a\ngot b\n")

    def test_data_from_stdin(self):
        tid = self.start("cat", extra=self.PIPE)["task_id"]
        args = ("write", "--root", ROOT, "--id", tid, "--data", "-")
        code, obj = self.call(*args, stdin=b"x" * 65537)
        self.assertNotEqual(code, 0, obj)
        self.assertEqual(obj["code"], "invalid")
        self.assertIn("--data -", obj["error"])
        code, obj = self.call(*args, "--eof", "1", stdin=b"typed\n")
        self.assertEqual(code, 0, obj)
        self.assertEqual(obj, {"task_id": tid, "written": 6, "eof": True})
        self.assertEqual(self.wait_terminal(tid)["state"], "succeeded")
        self.assertEqual(self.log(tid, "stdout"), b"typed\n")

    def test_files_of_a_task_with_stdin(self):
        tid = self.start("cat", extra=self.PIPE)["task_id"]
        import stat as st
        for name in ("stdin", "control"):
            mode = os.lstat(self.path(tid, name)).st_mode
            self.assertTrue(st.S_ISFIFO(mode), name)
            self.assertEqual(mode & 0o777, 0o600, name)
        self.assertFalse(os.path.exists(self.path(tid, "stdin.eof")))
        self.wrote(tid, b"x", eof=True)
        self.assertEqual(os.stat(self.path(tid, "stdin.lock")).st_mode
                         & 0o777, 0o600)
        self.assertTrue(os.path.isfile(self.path(tid, "stdin.eof")))
        self.assertEqual(self.wait_terminal(tid)["state"], "succeeded")
        self.assertEqual(self.log(tid, "stdout"), b"x")

    def test_eof_with_the_last_bytes(self):
        tid = self.start("wc -l", extra=self.PIPE)["task_id"]
        self.wrote(tid, b"one\ntwo\n")
        self.wrote(tid, b"three\n", eof=True)
        self.assertEqual(self.wait_terminal(tid)["state"], "succeeded")
        self.assertEqual(self.log(tid, "stdout").strip(), b"3")

    def test_binary_bytes_round_trip(self):
        data = bytes(range(256)) * 16 + b"\0\r\n\x04\x03\xff"
        tid = self.start("cat > bin.out", extra=self.PIPE)["task_id"]
        self.wrote(tid, data[:1000])
        self.wrote(tid, data[1000:], eof=True)
        self.assertEqual(self.wait_terminal(tid)["state"], "succeeded")
        with open(os.path.join(self.home, "bin.out"), "rb") as f:
            self.assertEqual(f.read(), data)

    def test_64_kib_to_a_reader_completes(self):
        tid = self.start("wc -c", extra=self.PIPE)["task_id"]
        self.wrote(tid, b"z" * 65536)
        self.wrote(tid, b"z" * 65536, eof=True)
        self.assertEqual(self.wait_terminal(tid)["state"], "succeeded")
        self.assertEqual(self.log(tid, "stdout").strip(), b"131072")

    def test_a_command_that_never_reads_holds_the_writer_back(self):
        tid = self.start("sleep 30", extra=self.PIPE)["task_id"]
        asked = written = 0
        short = None
        for _ in range(16):  # 1 MiB: far more than the FIFO, relay and pipe
            code, obj = self.write(tid, b"w" * 65536)
            self.assertEqual(code, 0, obj)
            self.assertIs(obj["eof"], False)
            asked += 65536
            written += obj["written"]
            if obj["written"] < 65536:
                short = obj
                break
        self.assertIsNotNone(short, "the writer was never held back")
        self.assertLess(written, asked)
        self.assertGreaterEqual(written, 65536)
        # eof only when every byte was written.
        code, obj = self.write(tid, b"w" * 65536, eof=True)
        self.assertEqual(code, 0, obj)
        self.assertLess(obj["written"], 65536)
        self.assertIs(obj["eof"], False)
        self.assertFalse(os.path.exists(self.path(tid, "stdin.eof")))
        self.wrote(tid, b"", eof=True)
        self.assertEqual(self.status(tid)["state"], "running")

    def test_bytes_to_a_command_that_closed_stdin_are_dropped(self):
        # Nobody reads the pipe any more: the relay drops what comes.
        tid = self.start("exec 0<&-; sleep 30", extra=self.PIPE)["task_id"]
        end = time.monotonic() + PATIENCE
        while os.path.exists("/proc/%d/fd/0" % self.status(tid)["pgid"]):
            self.assertLess(time.monotonic(), end)
            time.sleep(0.02)
        for _ in range(8):
            self.wrote(tid, b"d" * 65536)
        self.wrote(tid, b"", eof=True)
        self.assertEqual(self.status(tid)["state"], "running")

    def test_write_after_eof_is_closed(self):
        tid = self.start("cat; sleep 30", extra=self.PIPE)["task_id"]
        self.wrote(tid, b"x\n", eof=True)
        self.wait_output(tid, b"x\n")
        obj = self.refused("closed", "write", "--root", ROOT, "--id", tid,
                           "--data", "eQ==")
        self.assertIn(tid, obj["error"])
        self.assertIn("eof", obj["error"])
        self.refused("closed", "write", "--root", ROOT, "--id", tid,
                     "--eof", "1")

    def test_write_refusals(self):
        plain = self.start("sleep 30")["task_id"]
        obj = self.refused("closed", "write", "--root", ROOT, "--id", plain,
                           "--data", "eQ==")
        self.assertIn("without stdin", obj["error"])
        ended = self.run_task("true", extra=self.PIPE)["task_id"]
        obj = self.refused("closed", "write", "--root", ROOT, "--id", ended,
                           "--data", "eQ==")
        self.assertIn("ended", obj["error"])
        self.refused("not_found", "write", "--root", ROOT, "--id", new_id(),
                     "--data", "eQ==")
        self.refused("not_found", "resize", "--root", ROOT, "--id",
                     new_id(), "--rows", "10", "--cols", "10")

    def test_write_to_a_task_whose_supervisor_is_gone(self):
        record = self.start("sleep 30", extra=self.PIPE)
        os.kill(record["supervisor_pid"], signal.SIGKILL)
        self.wait_gone(record)
        reap_orphans()
        obj = self.refused("closed", "write", "--root", ROOT, "--id",
                           record["task_id"], "--data", "eQ==")
        self.assertIn("gone", obj["error"])
        self.call("cancel", "--root", ROOT, "--id", record["task_id"])

    def test_bad_data_is_invalid(self):
        tid = self.start("cat", extra=self.PIPE)["task_id"]
        bad = ["eQ", "eQ=", "e===", "eQ==eQ==", "eQ==\n", " eQ==", "eQ=x",
               "e!==", "eQ-_", "eQ==" + "=", "\u00e9QQ=",
               base64.b64encode(b"x" * 65537).decode("ascii")]
        for value in bad:
            with self.subTest(data=value[:20]):
                obj = self.refused("invalid", "write", "--root", ROOT,
                                   "--id", tid, "--data", value)
                self.assertIn("--data", obj["error"])
        for value in ("2", "yes", ""):
            obj = self.refused("invalid", "write", "--root", ROOT, "--id",
                               tid, "--eof", value)
            self.assertIn("--eof", obj["error"])
        self.assertEqual(self.log(tid, "stdout"), b"")
        self.wrote(tid, b"")  # empty data is fine
        self.wrote(tid, b"x" * 65536)  # so is the most
        self.wrote(tid, None, eof=True)
        self.assertEqual(self.wait_terminal(tid)["stdout_bytes"], 65536)

    def test_concurrent_writers_do_not_interleave(self):
        tid = self.start("cat > out", extra=self.PIPE)["task_id"]
        size = 48 * 1024
        letters = b"abcdef"
        results = []

        def writer(letter):
            data = base64.b64encode(bytes([letter]) * size).decode("ascii")
            results.append(self.run_cli(["write", "--root", ROOT, "--id",
                                         tid, "--data", data]))

        threads = [threading.Thread(target=writer, args=(c,))
                   for c in letters]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for code, out, _ in results:
            self.assertEqual(code, 0, out)
            self.assertEqual(json.loads(out)["written"], size)
        self.wrote(tid, None, eof=True)
        self.assertEqual(self.wait_terminal(tid)["state"], "succeeded")
        with open(os.path.join(self.home, "out"), "rb") as f:
            data = f.read()
        runs = [(k, len(list(g))) for k, g in itertools.groupby(data)]
        self.assertEqual(sorted(runs), [(c, size) for c in letters])


class TestTerminal(SupervisorCase):
    def tty(self, command, rows=None, cols=None, env=None):
        extra = ["--stdin", "tty"]
        if rows is not None:
            extra += ["--rows", str(rows)]
        if cols is not None:
            extra += ["--cols", str(cols)]
        record = self.start(command, extra=extra, env=env)
        self.assertEqual(record["stdin"], "tty")
        return record["task_id"]

    def test_size_name_echo_and_line(self):
        tid = self.tty('stty size; tty; read x; echo "x=$x"', 30, 100)
        out = self.wait_output(tid, b"/dev/pts/")
        self.assertTrue(out.startswith(b"30 100\r\n"), out)
        self.wrote(tid, b"hi\n")
        final = self.wait_terminal(tid)
        self.assertEqual(final["state"], "succeeded")
        out = self.log(tid, "stdout")
        self.assertIn(b"\r\nhi\r\nx=hi\r\n", out)  # the echo, then the line
        self.assertEqual(self.log(tid, "stderr"), b"")
        self.assertEqual(final["stderr_bytes"], 0)

    def test_default_size_and_resize(self):
        tid = self.tty('stty size; while [ "$(stty size)" != "40 120" ]; '
                       'do sleep 0.05; done; echo resized; stty size')
        self.wait_output(tid, b"24 80\r\n")
        code, obj = self.call("resize", "--root", ROOT, "--id", tid,
                              "--rows", "40", "--cols", "120")
        self.assertEqual(code, 0, obj)
        self.assertEqual(obj, {"task_id": tid, "rows": 40, "cols": 120})
        self.assertEqual(self.wait_terminal(tid)["state"], "succeeded")
        self.assertEqual(self.log(tid, "stdout"),
                         b"24 80\r\nresized\r\n40 120\r\n")

    def test_resize_sends_sigwinch(self):
        tid = self.tty("trap 'stty size; exit 0' WINCH; echo ready; "
                       "while :; do sleep 0.05; done")
        self.wait_output(tid, b"ready")
        code, obj = self.call("resize", "--root", ROOT, "--id", tid,
                              "--rows", "12", "--cols", "34")
        self.assertEqual(code, 0, obj)
        self.assertEqual(self.wait_terminal(tid)["state"], "succeeded")
        self.assertIn(b"12 34\r\n", self.log(tid, "stdout"))

    def test_python_repl_through_the_terminal(self):
        tid = self.tty("PYTHON_BASIC_REPL=1 exec python3 -q -i")
        self.wait_output(tid, b">>> ")
        self.wrote(tid, b"print(6*7)\n")
        self.wait_output(tid, b"42\r\n")
        self.wrote(tid, b"exit()\n")
        self.assertEqual(self.wait_terminal(tid)["state"], "succeeded")

    def test_eof_on_a_terminal(self):
        tid = self.tty("cat; echo cat-done")
        self.wrote(tid, b"abc\n", eof=True)
        final = self.wait_terminal(tid)
        self.assertEqual(final["state"], "succeeded")
        out = self.log(tid, "stdout")
        self.assertEqual(out.count(b"abc\r\n"), 2, out)  # echo, then cat
        self.assertTrue(out.endswith(b"cat-done\r\n"), out)

    def test_stderr_goes_to_the_terminal(self):
        final = self.run_task("echo err >&2; echo out",
                              extra=["--stdin", "tty"])
        tid = final["task_id"]
        self.assertEqual(final["state"], "succeeded")
        self.assertEqual(self.log(tid, "stdout"), b"err\r\nout\r\n")
        self.assertEqual(self.log(tid, "stderr"), b"")
        self.assertEqual(final["stdout_bytes"], len(b"err\r\nout\r\n"))
        self.assertEqual(final["stderr_bytes"], 0)

    def test_the_terminal_is_the_controlling_one_of_the_group(self):
        record = self.start("read x", extra=["--stdin", "tty"])
        stat = proc_stat(record["pgid"])
        self.assertEqual(stat[1], record["pgid"], "leads its group")
        self.assertEqual(stat[2], record["pgid"], "leads its session")
        self.assertTrue(os.readlink("/proc/%d/fd/0" % record["pgid"])
                        .startswith("/dev/pts/"))
        self.wrote(record["task_id"], b"\n")
        self.assertEqual(self.wait_terminal(record["task_id"])["state"],
                         "succeeded")

    def test_what_the_terminal_echoes_is_masked(self):
        secret = b"tty-secret-0123"
        env = dict(self.env, SOME_TOKEN=secret.decode())
        tid = self.tty('read x; echo "len=${#x}"', env=env)
        self.wrote(tid, secret + b"\n")
        self.assertEqual(self.wait_terminal(tid)["state"], "succeeded")
        out = self.log(tid, "stdout")
        self.assertNotIn(secret, out)
        self.assertEqual(out, b"****\r\nlen=15\r\n")

    def test_resize_refusals(self):
        piped = self.start("sleep 30", extra=["--stdin", "pipe"])["task_id"]
        obj = self.refused("closed", "resize", "--root", ROOT, "--id",
                           piped, "--rows", "10", "--cols", "10")
        self.assertIn(piped, obj["error"])
        plain = self.start("sleep 30")["task_id"]
        self.refused("closed", "resize", "--root", ROOT, "--id", plain,
                     "--rows", "10", "--cols", "10")
        ended = self.run_task("true", extra=["--stdin", "tty"])["task_id"]
        self.refused("closed", "resize", "--root", ROOT, "--id", ended,
                     "--rows", "10", "--cols", "10")
        self.refused("closed", "write", "--root", ROOT, "--id", ended,
                     "--data", "eQ==")
        for rows, cols in (("0", "10"), ("10", "1001"), ("x", "10")):
            self.refused("invalid", "resize", "--root", ROOT, "--id", piped,
                         "--rows", rows, "--cols", cols)
        self.refused("invalid", "resize", "--root", ROOT, "--id", piped,
                     "--rows", "10")


class TestKeys(SupervisorCase):
    def keyed(self, key, command="sleep 30", tid=None, prefix=None):
        """Starts COMMAND with KEY; returns the printed record."""
        tid = tid or new_id()
        code, record = self.call("start", "--root", ROOT, "--id", tid,
                                 "--timeout", "60", "--key", key,
                                 "--command", command, prefix=prefix)
        self.assertEqual(code, 0, record)
        return record

    def test_a_second_start_returns_the_first_task(self):
        first = self.keyed("k1")
        self.assertNotIn("existing", first)
        self.assertEqual(first["idempotency_key"], "k1")
        self.assertEqual(self.status(first["task_id"]), first)
        other = new_id()
        second = self.keyed("k1", command="echo different", tid=other)
        self.assertIs(second.pop("existing"), True)
        self.assertEqual(second["task_id"], first["task_id"])
        self.assertEqual(second, self.status(first["task_id"]))
        self.assertEqual(self.task_dirs(), [first["task_id"]])
        self.assertFalse(os.path.exists(self.path(other)))
        # --id is not used: it may even name an existing task.
        third = self.keyed("k1", tid=first["task_id"])
        self.assertIs(third["existing"], True)
        # Other keys are other tasks.
        self.assertNotEqual(self.keyed("k2")["task_id"], first["task_id"])
        self.assertEqual(len(self.task_dirs()), 2)

    def test_a_key_keeps_the_request_given_with_it(self):
        tid = new_id()
        args = ["start", "--root", ROOT, "--timeout", "60", "--key", "kr",
                "--request", "v1-0a-b1", "--command", "true"]
        code, first = self.call(*args[:1], "--id", tid, *args[1:])
        self.assertEqual(code, 0, first)
        self.assertNotIn("request", first)
        link = os.path.join(self.home, ROOT, "keys", "kr.task")
        self.assertEqual(os.readlink(link), tid + ".v1-0a-b1")
        code, again = self.call(*args[:1], "--id", new_id(), *args[1:])
        self.assertEqual(code, 0, again)
        self.assertIs(again.pop("existing"), True)
        self.assertEqual(again.pop("request"), "v1-0a-b1")
        self.assertEqual(again["task_id"], tid)
        self.refused("invalid", "start", "--root", ROOT, "--id", new_id(),
                     "--timeout", "9", "--key", "k", "--request", "V1",
                     "--command", "true")
        self.refused("invalid", "start", "--root", ROOT, "--id", new_id(),
                     "--timeout", "9", "--request", "v1", "--command", "true")
        # Removing the task frees the key and its request.
        self.wait_terminal(tid)
        code, removed = self.call("remove", "--root", ROOT, "--id", tid)
        self.assertEqual(code, 0, removed)
        self.assertFalse(os.path.lexists(link))

    def test_a_finished_task_is_returned_too(self):
        first = self.keyed("done.key_1-x", command="exit 4")
        final = self.wait_terminal(first["task_id"])
        again = self.keyed("done.key_1-x")
        self.assertIs(again.pop("existing"), True)
        self.assertEqual(again, final)

    def test_the_key_is_checked_before_the_limit(self):
        first = self.keyed("full")
        with open(self.path(first["task_id"], "status.json")) as f:
            template = json.load(f)
        template.update(state="succeeded", idempotency_key=None)
        for _ in range(127):
            tid = new_id()
            os.mkdir(self.path(tid), 0o700)
            template["task_id"] = tid
            with open(self.path(tid, "status.json"), "w") as f:
                f.write(json.dumps(template) + "\n")
        self.assertEqual(len(self.task_dirs()), 128)
        again = self.keyed("full")
        self.assertIs(again["existing"], True)
        self.assertEqual(again["task_id"], first["task_id"])
        self.refused("limit", "start", "--root", ROOT, "--id", new_id(),
                     "--timeout", "5", "--key", "other", "--command", "true")
        self.assertEqual(len(self.task_dirs()), 128)

    def test_concurrent_starts_with_one_key_start_one_task(self):
        results = []

        def starter():
            results.append(self.run_cli(
                ["start", "--root", ROOT, "--id", new_id(), "--timeout",
                 "60", "--key", "together", "--command", "sleep 30"]))

        threads = [threading.Thread(target=starter) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        records = []
        for code, out, _ in results:
            self.assertEqual(code, 0, out)
            records.append(json.loads(out))
        self.assertEqual(len({r["task_id"] for r in records}), 1, records)
        self.assertEqual(sum(1 for r in records if "existing" not in r), 1)
        self.assertEqual(self.task_dirs(), [records[0]["task_id"]])

    def test_remove_frees_the_key(self):
        first = self.keyed("again", command="true")
        self.wait_terminal(first["task_id"])
        code, removed = self.call("remove", "--root", ROOT, "--id",
                                  first["task_id"])
        self.assertEqual(code, 0, removed)
        second = self.keyed("again", command="true")
        self.assertNotIn("existing", second)
        self.assertNotEqual(second["task_id"], first["task_id"])
        self.assertEqual(self.task_dirs(), [second["task_id"]])

    def test_removing_another_task_keeps_the_key(self):
        first = self.keyed("mine", command="true")
        other = self.run_task("true")
        code, removed = self.call("remove", "--root", ROOT, "--id",
                                  other["task_id"])
        self.assertEqual(code, 0, removed)
        again = self.keyed("mine")
        self.assertIs(again["existing"], True)
        self.assertEqual(again["task_id"], first["task_id"])

    def test_a_key_whose_task_has_no_record_is_free(self):
        first = self.keyed("lost", command="true")
        self.wait_terminal(first["task_id"])
        os.unlink(self.path(first["task_id"], "status.json"))
        second = self.keyed("lost", command="true")
        self.assertNotIn("existing", second)
        self.assertNotEqual(second["task_id"], first["task_id"])
        third = self.keyed("lost")
        self.assertEqual(third["task_id"], second["task_id"])

    def test_key_of_a_spawn_failure(self):
        tid = new_id()
        code, record = self.call("start", "--root", ROOT, "--id", tid,
                                 "--timeout", "60", "--key", "nocwd",
                                 "--cwd", "no/such/dir", "--command", "true")
        self.assertEqual(code, 0, record)
        final = self.wait_terminal(tid)
        self.assertEqual(final["state"], "failed")
        again = self.keyed("nocwd")
        self.assertIs(again["existing"], True)
        self.assertEqual(again["task_id"], tid)

    def test_bad_keys_are_invalid(self):
        for key in ("k" * 129, "a/b", "", "a b", "..\u00e9", "x:y"):
            with self.subTest(key=key[:20]):
                obj = self.refused("invalid", "start", "--root", ROOT,
                                   "--id", new_id(), "--timeout", "5",
                                   "--key", key, "--command", "true")
                self.assertIn("--key", obj["error"])
        self.assertEqual(self.task_dirs(), [])
        record = self.keyed("k" * 128, command="true")
        self.assertEqual(record["idempotency_key"], "k" * 128)


@unittest.skipUnless(OTHER, "needs $TB_SUPERVISOR_OTHER")
class TestWaitVerb(SupervisorCase):
    """The wait verb answers when the task ends, a log grows past its
    offset, or its supervisor is gone; otherwise when its time is up."""

    def watching_verb(self, proc):
        """The pid of the wait verb proc runs (proc or a descendant) once
        it watches the task's directory; to be killed at the end."""
        self.pids_to_kill.append(proc.pid)
        deadline = time.monotonic() + PATIENCE
        verb = None
        while verb is None and time.monotonic() < deadline:
            verb = next((pid for pid in [proc.pid] + descendants(proc.pid)
                         if "anon_inode:inotify" in fd_kinds(pid)), None)
            time.sleep(0.01)
        self.assertIsNotNone(verb, "the verb watches the task's directory")
        return verb

    def waited(self, tid, *options, prefix=None):
        """(seconds the verb took, the record it printed)."""
        began = time.monotonic()
        code, record = self.call("wait", "--root", ROOT, "--id", tid,
                                 *options, prefix=prefix)
        self.assertEqual(code, 0, record)
        return time.monotonic() - began, record

    def test_answers_when_the_task_ends(self):
        tid = self.start("sleep 0.5; echo done")["task_id"]
        took, record = self.waited(tid, "--wait", "60")
        self.assertEqual(record["state"], "succeeded")
        self.assertEqual(record, self.status(tid))
        self.assertEqual(self.log(tid, "stdout"), b"done\n")
        self.assertLess(took, PATIENCE / 2)  # did not sit out its 60 s

    def test_an_ended_task_answers_at_once(self):
        done = self.run_task("exit 3")
        took, record = self.waited(done["task_id"], "--wait", "60",
                                   "--stdout-offset", "5")
        self.assertEqual(record, done)
        self.assertLess(took, PATIENCE / 2)

    def test_time_up_gives_the_running_record(self):
        tid = self.start("echo hi; sleep 30")["task_id"]
        self.wait_output(tid, b"hi\n")
        took, record = self.waited(tid, "--wait", "1", "--stdout-offset",
                                   "3", "--stderr-offset", "0")
        self.assertEqual(record["state"], "running")
        self.assertNotIn("supervisor_gone", record)
        self.assertGreaterEqual(took, 0.9)
        took, record = self.waited(tid, "--wait", "0")
        self.assertEqual(record["state"], "running")

    def test_output_past_an_offset_ends_it(self):
        for stream, redirect in (("stdout", ""), ("stderr", " >&2")):
            tid = self.start("sleep 0.3; echo hi%s; sleep 30"
                             % redirect)["task_id"]
            took, record = self.waited(tid, "--wait", "60",
                                       "--%s-offset" % stream, "0")
            self.assertEqual(record["state"], "running")
            self.assertGreater(os.path.getsize(self.path(tid, stream)), 0)
            self.assertLess(took, PATIENCE / 2)
            took, record = self.waited(tid, "--wait", "1",
                                       "--%s-offset" % stream, "3")
            self.assertEqual(record["state"], "running")
            self.assertGreaterEqual(took, 0.9)

    def test_pages_come_with_the_answer(self):
        done = self.run_task("printf 'a\\000\\377bc'; printf oops >&2")
        tid = done["task_id"]
        _, record = self.waited(tid, "--page-limit", "3",
                                "--stdout-page-offset", "1")
        self.assertEqual(record.pop("stdout_page"), {
            "offset": 1, "size": 5,
            "data": base64.b64encode(b"\x00\xffb").decode()})
        self.assertEqual(record.pop("stderr_page"), {
            "offset": 0, "size": 4, "data": base64.b64encode(b"oop").decode()})
        self.assertEqual(record, done)
        _, record = self.waited(tid, "--page-limit", "65536",
                                "--stdout-page-offset", "5",
                                "--stderr-page-offset", "99")
        self.assertEqual(record["stdout_page"],
                         {"offset": 5, "size": 5, "data": ""})
        self.assertEqual(record["stderr_page"],
                         {"offset": 99, "size": 4, "data": ""})
        # A running task's pages, read when output past the offset ends
        # the wait: the page holds it, and the size counts it.
        tid = self.start("sleep 0.3; echo hi; sleep 30")["task_id"]
        _, record = self.waited(tid, "--wait", "60", "--stdout-offset", "0",
                                "--page-limit", "100")
        self.assertEqual(record["state"], "running")
        page = record["stdout_page"]
        self.assertEqual(base64.b64decode(page["data"]), b"hi\n")
        self.assertEqual((page["offset"], page["size"]), (0, 3))
        self.assertEqual(record["stderr_page"],
                         {"offset": 0, "size": 0, "data": ""})

    def test_a_quiet_task_is_not_looked_at(self):
        """With the task's directory and its supervisor watched, the verb
        reads nothing while the task is quiet; the task's end still wakes
        it."""
        tid = self.start("sleep 30")["task_id"]
        proc = subprocess.Popen(
            PREFIX + ["wait", "--root", ROOT, "--id", tid, "--wait", "60",
                      "--stdout-offset", "0"],
            cwd=self.home, env=self.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        verb = self.watching_verb(proc)
        if "anon_inode:[pidfd]" in fd_kinds(verb):
            before = read_syscalls(verb)
            time.sleep(1)
            # At every look it reads the record and the supervisor's
            # /proc entry: 200 looks a second without the watch.
            self.assertLess(read_syscalls(verb) - before, 20)
        self.call("cancel", "--root", ROOT, "--id", tid)
        out, _ = proc.communicate(timeout=PATIENCE)
        self.assertEqual(proc.returncode, 0, out)
        self.assertEqual(json.loads(out)["state"], "cancelled")

    def test_the_answer_leaves_before_the_watches_close(self):
        """The verb writes its answer before it closes its inotify
        descriptors (closing one waits for the kernel's grace period,
        which the waiting host must not). Its stdout is a full pipe, so
        its answer's write blocks: the watches are still open then."""
        tid = self.start("sleep 30")["task_id"]
        rd, wr = os.pipe()
        try:
            fcntl.fcntl(wr, F_SETPIPE_SZ, 4096)
            os.set_blocking(wr, False)
            filler = 0
            try:
                while True:
                    filler += os.write(wr, b"x" * 512)
            except BlockingIOError:
                pass
            os.set_blocking(wr, True)
            proc = subprocess.Popen(
                PREFIX + ["wait", "--root", ROOT, "--id", tid, "--wait",
                          "60"],
                cwd=self.home, env=self.env, stdin=subprocess.DEVNULL,
                stdout=wr, stderr=subprocess.DEVNULL)
        finally:
            os.close(wr)
        verb = self.watching_verb(proc)
        self.call("cancel", "--root", ROOT, "--id", tid)
        deadline = time.monotonic() + PATIENCE
        while "pipe_write" not in wchan(verb) and \
                time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertIn("pipe_write", wchan(verb), "the answer's write blocks")
        self.assertIn("anon_inode:inotify", fd_kinds(verb))
        with os.fdopen(rd, "rb") as pipe:
            out = pipe.read()
        self.assertEqual(proc.wait(PATIENCE), 0)
        self.assertEqual(json.loads(out[filler:])["state"], "cancelled")

    def test_a_killed_supervisor_ends_it(self):
        record = self.start("sleep 30")
        tid = record["task_id"]
        answer = []
        thread = threading.Thread(target=lambda: answer.append(
            self.run_cli(["wait", "--root", ROOT, "--id", tid, "--wait",
                          "60", "--page-limit", "8"])))
        thread.start()
        time.sleep(0.3)
        os.kill(record["supervisor_pid"], signal.SIGKILL)
        thread.join(PATIENCE)
        reap_orphans()
        code, out, _ = answer[0]
        self.assertEqual(code, 0, out)
        after = json.loads(out)
        self.assertEqual(after["state"], "running")
        self.assertIs(after["supervisor_gone"], True)
        self.assertEqual(after["stdout_page"],
                         {"offset": 0, "size": 0, "data": ""})
        self.call("cancel", "--root", ROOT, "--id", tid)

    def test_bad_input(self):
        tid = self.start("sleep 30")["task_id"]
        base = ["wait", "--root", ROOT, "--id", tid]
        for extra in (["--wait", "61"], ["--wait", "-1"],
                      ["--stdout-offset", "-1"], ["--stdout-offset", "x"],
                      ["--stderr-offset", "1000000000000"],
                      ["--stdout-offset", "1", "--stdout-offset", "2"],
                      ["--page-limit", "0"], ["--page-limit", "65537"],
                      ["--page-limit", "x"],
                      ["--stdout-page-offset", "0"],
                      ["--stderr-page-offset", "0"],
                      ["--stderr-page-offset", "-1", "--page-limit", "5"],
                      ["--timeout", "5"]):
            obj = self.refused("invalid", *(base + extra))
            self.assertIn(extra[0], obj["error"])
        self.refused("invalid", "wait", "--root", ROOT)
        self.refused("invalid", "wait", "--root", ROOT, "--id", "xyz")
        self.refused("not_found", "wait", "--root", ROOT, "--id", new_id())


def interest(tid, so="-", eo="-", pl=0, spo=0, epo=0):
    """One interest of the watch verb's --tasks."""
    return "%s/%s/%s/%d/%d/%d" % (tid, so, eo, pl, spo, epo)


class TestWatchVerb(SupervisorCase):
    """The watch verb answers for many tasks at once: every interest met
    (a task ended, its supervisor gone, a log past an offset, a task
    missing), or nothing when its time is up or a newer generation of its
    lease supersedes it."""

    watching_verb = TestWaitVerb.watching_verb

    def watched(self, interests, *options):
        """(seconds the verb took, the object it printed)."""
        began = time.monotonic()
        code, obj = self.call("watch", "--root", ROOT, "--tasks",
                              ",".join(interests), *options)
        self.assertEqual(code, 0, obj)
        return time.monotonic() - began, obj

    def background(self, interests, *options, prefix=None):
        """A watch verb running in the background, and its pid once it
        watches."""
        proc = subprocess.Popen(
            (prefix or PREFIX) + ["watch", "--root", ROOT, "--tasks",
                      ",".join(interests)] + list(options),
            cwd=self.home, env=self.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return proc, self.watching_verb(proc)

    def answer(self, proc):
        out, _ = proc.communicate(timeout=PATIENCE)
        self.assertEqual(proc.returncode, 0, out)
        lines = out.decode().splitlines()
        self.assertEqual(len(lines), 1, out)
        return json.loads(lines[0])

    def test_answers_when_one_of_several_ends(self):
        busy = [self.start("sleep 30")["task_id"] for _ in range(2)]
        tid = self.start("sleep 0.5; echo done")["task_id"]
        took, obj = self.watched([interest(busy[0]), interest(tid),
                                  interest(busy[1], so=0)], "--wait", "60")
        self.assertEqual(obj, {"answers": [{"index": 1,
                                            "record": self.status(tid)}]})
        self.assertEqual(obj["answers"][0]["record"]["state"], "succeeded")
        self.assertLess(took, PATIENCE / 2)  # did not sit out its 60 s

    def test_ends_together_are_answered_together(self):
        done = [self.run_task("exit %d" % n) for n in (1, 2)]
        busy = self.start("sleep 30")["task_id"]
        ids = [busy, done[0]["task_id"], done[1]["task_id"]]
        _, obj = self.watched([interest(t) for t in ids] +
                              [interest(ids[1], so=99)], "--wait", "60")
        self.assertEqual(obj, {"answers": [
            {"index": 1, "record": done[0]}, {"index": 2, "record": done[1]},
            {"index": 3, "record": done[0]}]})
        # Two tasks that end while the verb cannot look (stopped): it
        # answers both in one line once it looks again.
        live = [self.start("sleep 30") for _ in range(2)]
        proc, verb = self.background(
            [interest(busy)] + [interest(r["task_id"]) for r in live],
            "--wait", "60")
        os.kill(verb, signal.SIGSTOP)
        try:
            for record in live:
                os.killpg(record["pgid"], signal.SIGKILL)
            ended = [self.wait_terminal(r["task_id"]) for r in live]
        finally:
            os.kill(verb, signal.SIGCONT)
        obj = self.answer(proc)
        self.assertEqual(obj, {"answers": [{"index": 1, "record": ended[0]},
                                           {"index": 2, "record": ended[1]}]})
        self.assertEqual(ended[0]["exit_code"], 137)

    def test_offsets(self):
        tid = self.start("echo hi; echo oops >&2; sleep 30")["task_id"]
        self.wait_output(tid, b"hi\n")
        self.wait_output(tid, b"oops\n", "stderr")
        took, obj = self.watched([interest(tid, so=3, eo=5)], "--wait", "1")
        self.assertEqual(obj, {"answers": []})
        self.assertGreaterEqual(took, 0.9)
        _, obj = self.watched([interest(tid, so=3), interest(tid, so=2),
                               interest(tid, eo=4)], "--wait", "60")
        self.assertEqual([a["index"] for a in obj["answers"]], [1, 2])
        self.assertEqual(obj["answers"][0]["record"]["state"], "running")
        # A log that grows past its offset while the verb waits.
        for stream, redirect in (("stdout", ""), ("stderr", " >&2")):
            tid = self.start("sleep 0.3; echo hi%s; sleep 30"
                             % redirect)["task_id"]
            asked = {"so": 0} if stream == "stdout" else {"eo": 0}
            took, obj = self.watched([interest(tid, **asked)], "--wait",
                                     "60")
            self.assertEqual(len(obj["answers"]), 1, obj)
            self.assertEqual(obj["answers"][0]["record"]["state"], "running")
            self.assertGreater(os.path.getsize(self.path(tid, stream)), 0)
            self.assertLess(took, PATIENCE / 2)

    def test_pages_are_those_of_wait(self):
        done = self.run_task("printf 'a\\000\\377bc'; printf oops >&2")
        tid = done["task_id"]
        _, obj = self.watched([interest(tid, pl=3, spo=1),
                               interest(tid, pl=65536, spo=5, epo=99),
                               interest(tid)])
        records = [a["record"] for a in obj["answers"]]
        self.assertEqual([a["index"] for a in obj["answers"]], [0, 1, 2])
        self.assertEqual(records[0].pop("stdout_page"), {
            "offset": 1, "size": 5,
            "data": base64.b64encode(b"\x00\xffb").decode()})
        self.assertEqual(records[0].pop("stderr_page"), {
            "offset": 0, "size": 4, "data": base64.b64encode(b"oop").decode()})
        self.assertEqual(records[1].pop("stdout_page"),
                         {"offset": 5, "size": 5, "data": ""})
        self.assertEqual(records[1].pop("stderr_page"),
                         {"offset": 99, "size": 4, "data": ""})
        self.assertEqual(records, [done] * 3)
        # A running task's page, read when output past the offset answers;
        # the same as the wait verb's.
        tid = self.start("sleep 0.3; echo hi; sleep 30")["task_id"]
        _, obj = self.watched([interest(tid, so=0, pl=100)], "--wait", "60")
        record = obj["answers"][0]["record"]
        page = record["stdout_page"]
        self.assertEqual(base64.b64decode(page["data"]), b"hi\n")
        self.assertEqual((page["offset"], page["size"]), (0, 3))
        _, waited = self.call("wait", "--root", ROOT, "--id", tid,
                              "--stdout-offset", "0", "--page-limit", "100")
        self.assertEqual(record, waited)

    def test_a_missing_task_answers_while_others_wait(self):
        busy = self.start("sleep 30")["task_id"]
        empty = new_id()
        os.makedirs(self.path(empty), 0o700)  # a start that died early
        ghost = new_id()
        took, obj = self.watched([interest(busy, so=0), interest(ghost),
                                  interest(empty)], "--wait", "60")
        self.assertEqual(obj, {"answers": [{"index": 1, "missing": True},
                                           {"index": 2, "missing": True}]})
        self.assertLess(took, PATIENCE / 2)
        # A task removed while the verb waits (stopped, so that it does
        # not see the end first) is missing then.
        gone = self.start("sleep 30")
        proc, verb = self.background([interest(busy),
                                      interest(gone["task_id"])],
                                     "--wait", "60")
        os.kill(verb, signal.SIGSTOP)
        try:
            os.killpg(gone["pgid"], signal.SIGKILL)
            self.wait_terminal(gone["task_id"])
            code, obj = self.call("remove", "--root", ROOT, "--id",
                                  gone["task_id"])
            self.assertEqual(code, 0, obj)
        finally:
            os.kill(verb, signal.SIGCONT)
        self.assertEqual(self.answer(proc),
                         {"answers": [{"index": 1, "missing": True}]})

    def test_time_up_answers_nothing(self):
        tid = self.start("sleep 30")["task_id"]
        took, obj = self.watched([interest(tid), interest(tid, so=0, eo=0)],
                                 "--wait", "1")
        self.assertEqual(obj, {"answers": []})
        self.assertGreaterEqual(took, 0.9)
        self.assertLess(took, PATIENCE / 2)
        took, obj = self.watched([interest(tid)], "--wait", "0")
        self.assertEqual(obj, {"answers": []})

    def test_many_tasks_few_descriptors(self):
        """200 interests over 100 running tasks: the verb holds at most a
        couple of descriptors per task, and answers for all of them once
        they all ended."""
        # Starting them may take a while under a busy python3. The verb
        # watches tasks of either implementation (the files are the same):
        # the other one starts them where there is one, as its starts are
        # cheaper than those of a supervisor run under valgrind.
        records = [self.start("sleep 600", timeout=900, prefix=OTHER or None)
                   for _ in range(100)]
        interests = []
        for record in records:
            interests += [interest(record["task_id"]),
                          interest(record["task_id"], so=0, pl=16)]
        proc, verb = self.background(interests, "--wait", "60")
        fds = len(os.listdir("/proc/%d/fd" % verb))
        self.assertLess(fds, 2 * len(records) + 16)
        os.kill(verb, signal.SIGSTOP)
        try:
            for record in records:
                os.killpg(record["pgid"], signal.SIGKILL)
            ended = [self.wait_terminal(r["task_id"]) for r in records]
        finally:
            os.kill(verb, signal.SIGCONT)
        obj = self.answer(proc)
        self.assertEqual([a["index"] for a in obj["answers"]],
                         list(range(200)))
        for n, record in enumerate(ended):
            self.assertEqual(obj["answers"][2 * n]["record"], record)
            page = obj["answers"][2 * n + 1]["record"]["stdout_page"]
            self.assertEqual(page, {"offset": 0, "size": 0, "data": ""})

    def test_quiet_tasks_are_not_looked_at(self):
        """With the directories and the supervisors watched, the verb
        reads next to nothing while its tasks are quiet; an end still
        wakes it."""
        tids = [self.start("sleep 30")["task_id"] for _ in range(3)]
        proc, verb = self.background(
            [interest(t, so=0, eo=0) for t in tids] + [interest(tids[0])],
            "--wait", "60")
        time.sleep(0.5)  # past its first look (and python3's imports)
        if "anon_inode:[pidfd]" in fd_kinds(verb):
            before = read_syscalls(verb)
            time.sleep(1)
            # A look reads three records and three /proc entries: 200
            # looks a second without the watches.
            self.assertLess(read_syscalls(verb) - before, 40)
        self.call("cancel", "--root", ROOT, "--id", tids[1])
        obj = self.answer(proc)
        self.assertEqual([a["index"] for a in obj["answers"]], [1])
        self.assertEqual(obj["answers"][0]["record"]["state"], "cancelled")

    def test_a_killed_supervisor_answers_gone(self):
        record = self.start("sleep 30")
        busy = self.start("sleep 30")["task_id"]
        tid = record["task_id"]
        proc, _ = self.background([interest(busy), interest(tid, pl=8)],
                                  "--wait", "60")
        os.kill(record["supervisor_pid"], signal.SIGKILL)
        obj = self.answer(proc)
        reap_orphans()
        self.assertEqual([a["index"] for a in obj["answers"]], [1])
        after = obj["answers"][0]["record"]
        self.assertEqual(after["state"], "running")
        self.assertIs(after["supervisor_gone"], True)
        self.assertEqual(after["stdout_page"],
                         {"offset": 0, "size": 0, "data": ""})
        self.call("cancel", "--root", ROOT, "--id", tid)

    def test_malformed_tasks_are_refused(self):
        tid = new_id()
        good = interest(tid)
        cases = [
            ("", None), (",".join([good] * 1025), None),
            (good + "," + good[:-2], "interest 2"),
            (good + ",," + good, "interest 2"),
            (good + "," + tid[:31] + "/-/-/0/0/0", "interest 2"),
            (tid.upper() + "/-/-/0/0/0", "interest 1"),
            ("../" + tid[3:] + "/-/-/0/0/0", "interest 1"),
            (good + "/0", "interest 1"),
            (good + "," + good + "," + tid + "/x/-/0/0/0", "interest 3"),
            (tid + "/-1/-/0/0/0", "interest 1"),
            (tid + "/-/1000000000000/0/0/0", "interest 1"),
            (tid + "/-/-/65537/0/0", "interest 1"),
            (tid + "/-/-/-/0/0", "interest 1"),
            (tid + "/-/-/1/-/0", "interest 1"),
            (tid + "/-/-/1/0/", "interest 1"),
            (tid + "/-/-/1/0/1000000000000", "interest 1"),
        ]
        for value, where in cases:
            with self.subTest(value=value[:80]):
                obj = self.refused("invalid", "watch", "--root", ROOT,
                                   "--tasks", value)
                self.assertIn("--tasks", obj["error"])
                if where:
                    self.assertIn(where + ":", obj["error"])
        base = ["watch", "--root", ROOT, "--tasks", good]
        for extra, name in ((["--wait", "61"], "--wait"),
                            (["--lease", "a"], "--generation"),
                            (["--generation", "1"], "--lease"),
                            (["--lease", "", "--generation", "1"], "--lease"),
                            (["--lease", "a/b", "--generation", "1"],
                             "--lease"),
                            (["--lease", ".x", "--generation", "1"],
                             "--lease"),
                            (["--lease", "x" * 65, "--generation", "1"],
                             "--lease"),
                            (["--lease", "a", "--generation", "-1"],
                             "--generation"),
                            (["--lease", "a", "--generation",
                              "9007199254740992"], "--generation"),
                            (["--id", tid], "--id")):
            with self.subTest(extra=extra):
                obj = self.refused("invalid", *(base + extra))
                self.assertIn(name, obj["error"])
        self.refused("invalid", "watch", "--root", ROOT)
        self.assertFalse(os.path.exists(os.path.join(self.home, ROOT)))

    def test_a_newer_generation_supersedes(self):
        tid = self.start("sleep 30")["task_id"]
        first, _ = self.background([interest(tid)], "--wait", "60",
                                   "--lease", "host-1", "--generation", "1")
        began = time.monotonic()
        second, _ = self.background([interest(tid)], "--wait", "60",
                                    "--lease", "host-1", "--generation", "2")
        self.assertEqual(self.answer(first),
                         {"answers": [], "superseded": True})
        self.assertLess(time.monotonic() - began, PATIENCE / 4)
        time.sleep(0.5)
        self.assertIsNone(second.poll(), "the newer verb keeps waiting")
        with open(os.path.join(self.home, ROOT, ".watch", "host-1")) as f:
            self.assertEqual(int(f.read()), 2)
        # Another lease's name is another lease.
        took, obj = self.watched([interest(tid)], "--wait", "1", "--lease",
                                 "host-2", "--generation", "0")
        self.assertEqual(obj, {"answers": []})
        self.call("cancel", "--root", ROOT, "--id", tid)
        obj = self.answer(second)
        self.assertEqual(obj["answers"][0]["record"]["state"], "cancelled")
        if OTHER:
            # The other implementation's newer generation supersedes too.
            tid = self.start("sleep 30")["task_id"]
            first, _ = self.background([interest(tid)], "--wait", "60",
                                       "--lease", "host-1", "--generation",
                                       "3")
            third, _ = self.background([interest(tid)], "--wait", "60",
                                       "--lease", "host-1", "--generation",
                                       "4", prefix=OTHER)
            self.assertEqual(self.answer(first),
                             {"answers": [], "superseded": True})
            self.call("cancel", "--root", ROOT, "--id", tid)
            self.assertEqual(len(self.answer(third)["answers"]), 1)

    def test_an_older_generation_is_superseded_at_once(self):
        tid = self.start("sleep 30")["task_id"]
        _, obj = self.watched([interest(tid)], "--wait", "0", "--lease",
                              "L", "--generation", "9007199254740991")
        self.assertEqual(obj, {"answers": []})
        took, obj = self.watched([interest(tid)], "--wait", "60", "--lease",
                                 "L", "--generation", "5")
        self.assertEqual(obj, {"answers": [], "superseded": True})
        self.assertLess(took, PATIENCE / 2)
        # The same generation again is not superseded.
        _, obj = self.watched([interest(tid)], "--wait", "0", "--lease",
                              "L", "--generation", "9007199254740991")
        self.assertEqual(obj, {"answers": []})
        self.assertEqual(os.stat(os.path.join(self.home, ROOT, ".watch"))
                         .st_mode & 0o777, 0o700)

    def test_the_lease_disturbs_no_other_verb(self):
        tids = sorted(self.start("sleep 30")["task_id"] for _ in range(2))
        self.watched([interest(tids[0])], "--wait", "0", "--lease", "h",
                     "--generation", "1")
        self.assertTrue(os.path.isdir(os.path.join(self.home, ROOT,
                                                   ".watch")))
        _, listed = self.call("list", "--root", ROOT)
        self.assertEqual(sorted(r["task_id"] for r in listed["tasks"]), tids)
        for verb in ("remove", "cancel", "wait"):
            obj = self.refused("invalid", verb, "--root", ROOT, "--id",
                               ".watch")
            self.assertIn("--id", obj["error"])
        # Tasks can still be started up to the limit's count.
        code, obj = self.call("start", "--root", ROOT, "--id", new_id(),
                              "--timeout", "5", "--command", "true")
        self.assertEqual(code, 0, obj)
        if OTHER:
            _, listed = self.call("list", "--root", ROOT, prefix=OTHER)
            self.assertEqual(len(listed["tasks"]), 3)


class TestTwoImplementations(SupervisorCase):
    """Both implementations share the files: a task started by one is
    listed, cancelled and removed by the other."""

    def crossed(self, starter, other):
        tid = new_id()
        code, record = self.call("start", "--root", ROOT, "--id", tid,
                                 "--timeout", "60", "--command",
                                 "echo hi; sleep 30", prefix=starter)
        self.assertEqual(code, 0, record)
        self.assertLess(abs(self.heartbeat(tid)[0] - time.time() * 1000),
                        CLOCK_SLACK)
        done = self.run_task("exit 5")
        code, listed = self.call("list", "--root", ROOT, prefix=other)
        self.assertEqual(code, 0, listed)
        self.assertEqual(sorted(t["task_id"] for t in listed["tasks"]),
                         sorted([tid, done["task_id"]]))
        self.refused_by(other, "running", "remove", "--root", ROOT,
                        "--id", tid)
        code, waited = self.call("wait", "--root", ROOT, "--id", tid,
                                 "--wait", "0", "--stdout-offset", "3",
                                 prefix=other)
        self.assertEqual(code, 0, waited)
        self.assertEqual(waited, self.status(tid))
        code, final = self.call("cancel", "--root", ROOT, "--id", tid,
                                prefix=other)
        self.assertEqual(code, 0, final)
        self.assertEqual(final["state"], "cancelled")
        self.assertEqual(final, self.status(tid))
        self.assertEqual(self.log(tid, "stdout"), b"hi\n")
        for task in (tid, done["task_id"]):
            code, removed = self.call("remove", "--root", ROOT, "--id",
                                      task, prefix=other)
            self.assertEqual(code, 0, removed)
            self.assertIs(removed["removed"], True)
        self.assertEqual(self.task_dirs(), [])

    def refused_by(self, prefix, code_name, *args):
        code, obj = self.call(*args, prefix=prefix)
        self.assertNotEqual(code, 0, obj)
        self.assertEqual(obj.get("code"), code_name, obj)

    def test_started_by_this_one_handled_by_the_other(self):
        self.crossed(PREFIX, OTHER)

    def test_started_by_the_other_handled_by_this_one(self):
        self.crossed(OTHER, PREFIX)

    def fed(self, starter, other):
        """A task with stdin started by STARTER takes input, a resize and
        eof from OTHER, and its key is honoured by OTHER."""
        record = self.start('stty size; read a; echo "a=$a"; '
                            'while [ "$(stty size)" != "7 9" ]; '
                            'do sleep 0.05; done; cat',
                            extra=["--stdin", "tty", "--rows", "5",
                                   "--cols", "6", "--key", "fed"],
                            prefix=starter)
        tid = record["task_id"]
        self.wait_output(tid, b"5 6\r\n")
        code, again = self.call("start", "--root", ROOT, "--id", new_id(),
                                "--timeout", "5", "--key", "fed",
                                "--command", "true", prefix=other)
        self.assertEqual(code, 0, again)
        self.assertIs(again.pop("existing"), True)
        self.assertEqual(again["task_id"], tid)
        self.wrote(tid, b"x\n", prefix=other)
        self.wait_output(tid, b"a=x\r\n")
        code, obj = self.call("resize", "--root", ROOT, "--id", tid,
                              "--rows", "7", "--cols", "9", prefix=other)
        self.assertEqual(code, 0, obj)
        self.wrote(tid, b"last\n", eof=True, prefix=other)
        final = self.wait_terminal(tid)
        self.assertEqual(final["state"], "succeeded")
        self.assertEqual(final["stdin"], "tty")
        self.assertEqual(final["idempotency_key"], "fed")
        self.assertEqual(final["ended_by"], "exit")
        self.assertIn(b"last\r\nlast\r\n", self.log(tid, "stdout"))
        self.refused_by(other, "closed", "write", "--root", ROOT, "--id",
                        tid, "--data", "eQ==")
        code, removed = self.call("remove", "--root", ROOT, "--id", tid,
                                  prefix=other)
        self.assertEqual(code, 0, removed)
        second = self.start("cat", extra=["--stdin", "pipe", "--key", "fed"],
                            prefix=starter)
        self.assertNotIn("existing", second)
        self.wrote(second["task_id"], b"piped", eof=True, prefix=other)
        self.assertEqual(self.wait_terminal(second["task_id"])["state"],
                         "succeeded")
        self.assertEqual(self.log(second["task_id"], "stdout"), b"piped")

    def test_input_to_this_one_from_the_other(self):
        self.fed(PREFIX, OTHER)

    def test_input_to_the_other_from_this_one(self):
        self.fed(OTHER, PREFIX)


class TestBadInput(SupervisorCase):
    def test_rejected_with_code_invalid(self):
        tid = new_id()
        ok = ["--root", ROOT, "--id", tid, "--timeout", "5"]
        with open(os.path.join(self.home, "afile"), "w") as f:
            f.write("x")
        cases = [
            [],
            ["frobnicate", "--root", ROOT],
            ["start"] + ok,
            ["start", "--root", ROOT, "--timeout", "5", "--command", "true"],
            ["start", "--id", tid, "--timeout", "5", "--command", "true"],
            ["start", "--root", ROOT, "--id", tid, "--command", "true"],
            ["start"] + ok + ["--command", ""],
            ["start"] + ok + ["--command", "x" * 65537],
            ["start"] + ok + ["--command", "true", "--bogus", "1"],
            ["start"] + ok + ["--command", "true", "--command", "true"],
            ["start"] + ok + ["--command"],
            ["start", "--root", ROOT, "--id", tid.upper(), "--timeout", "5",
             "--command", "true"],
            ["start", "--root", ROOT, "--id", tid[:31], "--timeout", "5",
             "--command", "true"],
            ["start", "--root", ROOT, "--id", "../" + tid[3:], "--timeout",
             "5", "--command", "true"],
            ["start", "--root", ROOT, "--id", tid, "--timeout", "0",
             "--command", "true"],
            ["start", "--root", ROOT, "--id", tid, "--timeout", "3601",
             "--command", "true"],
            ["start", "--root", ROOT, "--id", tid, "--timeout", "ten",
             "--command", "true"],
            ["start", "--root", "", "--id", tid, "--timeout", "5",
             "--command", "true"],
            ["start", "--root", "afile", "--id", tid, "--timeout", "5",
             "--command", "true"],
            ["start", "--root", "afile/tasks", "--id", tid, "--timeout",
             "5", "--command", "true"],
            ["cancel", "--root", ROOT],
            ["cancel", "--root", ROOT, "--id", "xyz"],
            ["cancel", "--root", ROOT, "--id", tid, "--wait", "-1"],
            ["remove", "--id", tid],
            ["list"],
            ["list", "--root", "afile"],
            ["start"] + ok + ["--command", "true", "--stdin", "file"],
            ["start"] + ok + ["--command", "true", "--stdin", ""],
            ["start"] + ok + ["--command", "true", "--rows", "10"],
            ["start"] + ok + ["--command", "true", "--stdin", "pipe",
                              "--cols", "10"],
            ["start"] + ok + ["--command", "true", "--stdin", "tty",
                              "--rows", "0"],
            ["start"] + ok + ["--command", "true", "--stdin", "tty",
                              "--cols", "1001"],
            ["start"] + ok + ["--command", "true", "--stdin", "tty",
                              "--rows", "ten"],
            ["start"] + ok + ["--command", "true", "--key", ""],
            ["start"] + ok + ["--command", "true", "--key", "a/b"],
            ["start"] + ok + ["--command", "true", "--key", "k" * 129],
            ["start"] + ok + ["--command", "true", "--key", "k",
                              "--key", "k"],
            ["start"] + ok + ["--command", "true", "--data", "eQ=="],
            ["write", "--root", ROOT],
            ["write", "--root", ROOT, "--id", tid, "--data", "e"],
            ["write", "--root", ROOT, "--id", tid, "--eof", "true"],
            ["write", "--root", ROOT, "--id", tid, "--rows", "10"],
            ["resize", "--root", ROOT, "--id", tid, "--rows", "10"],
            ["resize", "--root", ROOT, "--id", tid, "--cols", "10"],
            ["resize", "--root", ROOT, "--id", tid, "--rows", "10",
             "--cols", "0"],
        ]
        for args in cases:
            with self.subTest(args=[a[:40] for a in args]):
                self.refused("invalid", *args)
        self.assertFalse(os.path.exists(os.path.join(self.home, ROOT, tid)))


if __name__ == "__main__":
    become_subreaper()
    unittest.main(verbosity=2)
