# taskbox supervisor: runs one background shell command inside a sandbox,
# keeps its logs and an atomically replaced status record, and outlives the
# process that launched it. docs/supervisor.md is the specification; this file
# follows it. Needs only python3 (3.7+, standard library), /proc and process
# groups. Run as: python3 -I -c SOURCE VERB --root DIR [options]
import errno
import os
import sys
import time

try:
    import _signal as signal  # the C module: signal.py's enums cost ~10 ms
except ImportError:
    import signal

FORMAT = 1
# poll(2) events, as select names them (start does not import select)
POLLIN, POLLOUT, POLLERR, POLLHUP = 1, 4, 8, 16
MAX_TASKS = 128
LOG_CAP = 1048576
TERM_GRACE = 1.5
KILL_SETTLE = 1.0  # how long a SIGKILLed group may take to die
DRAIN_GRACE = 2.0
CHUNK = 262144
BATCH_BYTES = 65536
BATCH_PAUSE = 0.0005
HEARTBEAT_INTERVAL = 1.0  # 1000 ms between two heartbeats at most
MAX_COMMAND = 65536
MAX_PATH = 4096
MASK = b"****"
SECRET_WORDS = (b"KEY", b"TOKEN", b"SECRET", b"PASSWORD")
MIN_SECRET = 4
HEX = frozenset("0123456789abcdef")
TERMINAL = ("succeeded", "failed", "cancelled", "timed_out")
EXIT_CODES = {"internal": 1, "invalid": 2, "limit": 3, "exists": 4,
              "not_found": 5, "running": 6, "closed": 7}
STATUS_KEYS = ("format", "task_id", "state", "command", "cwd", "timeout",
               "started_at", "finished_at", "exit_code", "supervisor_pid",
               "supervisor_start", "pgid", "pgid_start", "stdout_bytes",
               "stderr_bytes", "stdout_truncated", "stderr_truncated",
               "cancel_requested", "error", "stdin", "idempotency_key",
               "signal", "ended_by")
VERBS = {
    "start": (("--root", "--id", "--timeout", "--command"),
              ("--cwd", "--stdin", "--rows", "--cols", "--key",
               "--request")),
    "cancel": (("--root", "--id"), ("--wait",)),
    "write": (("--root", "--id"), ("--data", "--eof")),
    "resize": (("--root", "--id", "--rows", "--cols"), ()),
    "remove": (("--root", "--id"), ()),
    "list": (("--root",), ()),
    "wait": (("--root", "--id"),
             ("--wait", "--stdout-offset", "--stderr-offset", "--page-limit",
              "--stdout-page-offset", "--stderr-page-offset")),
    "watch": (("--root", "--tasks"), ("--wait", "--lease", "--generation")),
}
USAGE = ("usage: start --root DIR --id ID --timeout SECONDS [--cwd DIR] "
         "--command TEXT [--stdin null|pipe|tty] [--rows N --cols N] "
         "[--key KEY [--request DIGEST]] | cancel --root DIR --id ID "
         "[--wait SECONDS] | "
         "write --root DIR --id ID [--data BASE64|-] [--eof 0|1] | "
         "resize --root DIR --id ID --rows N --cols N | "
         "remove --root DIR --id ID | list --root DIR | "
         "wait --root DIR --id ID [--wait SECONDS] [--stdout-offset BYTES] "
         "[--stderr-offset BYTES] [--page-limit BYTES] "
         "[--stdout-page-offset BYTES] [--stderr-page-offset BYTES] | "
         "watch --root DIR --tasks ID/SO/EO/PL/SPO/EPO,... [--wait SECONDS] "
         "[--lease NAME --generation N]")
STDIN_MODES = ("null", "pipe", "tty")
KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                      "0123456789_.-")
MAX_KEY = 128
# start's --request, kept in the key's link after the task id and a '.'.
REQUEST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
MAX_REQUEST = 128
MAX_DATA = 65536  # bytes of one write, and the relay's buffer
MAX_DATA_CHARS = (MAX_DATA + 2) // 3 * 4
WRITE_WAIT = 2.0  # how long `write` waits for room in the FIFO, in all
MAX_CONTROL_LINE = 64
MAX_OFFSET = 999999999999  # the largest --stdout-offset or --stderr-offset
WAIT_LOOK = 0.005  # how often the wait verb looks at the task, unwatched
WATCHED_LOOK = 1.0  # the same, all it waits for watched
MAX_INTERESTS = 1024  # the most interests of one watch verb
MAX_PIDFDS = 128  # the most supervisors one watch verb holds a pidfd of
WATCH_SETTLE = 0.005  # ends that happen together are answered together
MAX_LEASE = 64
LEASE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                        "0123456789_-")
MAX_GENERATION = 9007199254740991
# inotify(7) event bits: a file renamed in, a file written, the directory
# deleted or moved; and a watch on a directory only
IN_MOVED_TO, IN_MODIFY = 0x80, 0x2
IN_DELETE_SELF, IN_MOVE_SELF, IN_ONLYDIR = 0x400, 0x800, 0x1000000
IN_IGNORED, IN_Q_OVERFLOW = 0x8000, 0x4000  # a watch gone, notices lost
PAGE_LIMIT_MAX = 65536  # the largest --page-limit: get_task's largest page
ENDED_BY = {"cancelled": "cancel", "timed_out": "timeout"}
SIGNAL_NAMES = ("SIGHUP SIGINT SIGQUIT SIGILL SIGTRAP SIGABRT SIGBUS SIGFPE "
                "SIGKILL SIGUSR1 SIGSEGV SIGUSR2 SIGPIPE SIGALRM SIGTERM "
                "SIGSTKFLT SIGCHLD SIGCONT SIGSTOP SIGTSTP SIGTTIN SIGTTOU "
                "SIGURG SIGXCPU SIGXFSZ SIGVTALRM SIGPROF SIGWINCH SIGIO "
                "SIGPWR SIGSYS").split()


class Refusal(Exception):
    """A verb's refusal: an error code of docs/supervisor.md and a message."""

    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code
        self.message = message


# ---- JSON output (a small encoder keeps `start` free of the json module) ----

_ESCAPES = dict((i, "\\u%04x" % i) for i in range(32))
_ESCAPES.update({0x22: '\\"', 0x5C: "\\\\", 0x08: "\\b", 0x09: "\\t",
                 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"})


def jdump(value):
    """Encodes None, bool, int, float, str, list and dict as compact JSON."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.translate(_ESCAPES) + '"'
    if isinstance(value, dict):
        return "{" + ",".join(jdump(str(k)) + ":" + jdump(v)
                              for k, v in value.items()) + "}"
    return "[" + ",".join(jdump(v) for v in value) + "]"


def text(raw):
    """Bytes from argv, the environment or a pipe, as a JSON-safe string."""
    return raw.decode("utf-8", "replace")


def say(obj):
    """Writes the verb's one JSON object (a line) to stdout."""
    sys.stdout.write(jdump(obj) + "\n")
    sys.stdout.flush()


# ---- arguments ----

def parse_args(argv):
    """Returns (verb, options) or raises Refusal("invalid")."""
    if not argv:
        raise Refusal("invalid", "missing verb; " + USAGE)
    verb = argv[0]
    if verb not in VERBS:
        raise Refusal("invalid", "unknown verb %r; %s" % (verb, USAGE))
    required, optional = VERBS[verb]
    opts = {}
    i = 1
    while i < len(argv):
        arg = argv[i]
        if "=" in arg and arg.startswith("--"):
            name, value = arg.split("=", 1)
            i += 1
        else:
            name = arg
            if i + 1 >= len(argv):
                raise Refusal("invalid", "%s: missing value" % name)
            value = argv[i + 1]
            i += 2
        if name not in required and name not in optional:
            raise Refusal("invalid", "%s: unknown option for %s" % (name, verb))
        if name in opts:
            raise Refusal("invalid", "%s: given twice" % name)
        opts[name] = value
    for name in required:
        if name not in opts:
            raise Refusal("invalid", "%s: required by %s" % (name, verb))
    check_path("--root", opts["--root"])
    if "--id" in opts:
        check_id(opts["--id"])
    return verb, opts


def check_path(name, value):
    if not value:
        raise Refusal("invalid", "%s: must not be empty" % name)
    if len(os.fsencode(value)) > MAX_PATH:
        raise Refusal("invalid", "%s: longer than %d bytes" % (name, MAX_PATH))


def check_id(value):
    if len(value) != 32 or not HEX.issuperset(value):
        raise Refusal("invalid",
                      "--id: must be 32 lowercase hexadecimal characters")


def int_option(name, value, low, high):
    number = int(value) if value.isdigit() and value.isascii() else None
    if number is None or not low <= number <= high:
        raise Refusal("invalid", "%s: must be an integer from %d to %d"
                      % (name, low, high))
    return number


def check_key(value):
    if not 1 <= len(value) <= MAX_KEY or not KEY_CHARS.issuperset(value):
        raise Refusal("invalid", "--key: must be 1 to %d characters from "
                      "A-Z, a-z, 0-9, '_', '.' and '-'" % MAX_KEY)


def check_request(opts):
    """start's --request: the host's digest of the request, kept with the
    key (a-z, 0-9 and '-', 1 to MAX_REQUEST characters), or None."""
    value = opts.get("--request")
    if value is None:
        return None
    if "--key" not in opts:
        raise Refusal("invalid", "--request: only with --key")
    if not 1 <= len(value) <= MAX_REQUEST or \
            not REQUEST_CHARS.issuperset(value):
        raise Refusal("invalid", "--request: must be 1 to %d characters "
                      "from a-z, 0-9 and '-'" % MAX_REQUEST)
    return value


def stdin_options(opts):
    """(mode, rows, cols) of start's --stdin, --rows and --cols."""
    mode = opts.get("--stdin", "null")
    if mode not in STDIN_MODES:
        raise Refusal("invalid", "--stdin: must be null, pipe or tty")
    for name in ("--rows", "--cols"):
        if name in opts and mode != "tty":
            raise Refusal("invalid", "%s: only with --stdin tty" % name)
    rows = int_option("--rows", opts.get("--rows", "24"), 1, 1000)
    cols = int_option("--cols", opts.get("--cols", "80"), 1, 1000)
    return mode, rows, cols


def data_option(opts):
    """The bytes of write's --data: strict standard base64 with padding, or
    with `-` the raw bytes on stdin (they then never show in a command
    line)."""
    value = opts.get("--data", "")
    if value == "-":
        raw = b""
        while len(raw) <= MAX_DATA:
            chunk = os.read(0, MAX_DATA + 1 - len(raw))
            if not chunk:
                return raw
            raw += chunk
        raise Refusal("invalid", "--data -: stdin holds more than %d bytes"
                      % MAX_DATA)
    raw = None
    if len(value) <= MAX_DATA_CHARS and value.isascii():
        import binascii
        try:
            raw = binascii.a2b_base64(value)
        except binascii.Error:
            raw = None
        # Only the canonical encoding passes: it alone re-encodes to VALUE
        # (no stray characters, padding in place, no line breaks).
        if raw is not None and binascii.b2a_base64(
                raw, newline=False).decode("ascii") != value:
            raw = None
    if raw is None or len(raw) > MAX_DATA:
        raise Refusal("invalid", "--data: must be standard base64 with "
                      "padding of at most %d bytes" % MAX_DATA)
    return raw


# ---- /proc ----

def proc_stat(pid):
    """(state, pgrp, starttime) of /proc/PID/stat (fields 3, 5 and 22), or
    None when there is none. Fields are counted after the last ')': comm
    may hold anything."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            line = f.read()
        fields = line[line.rindex(b")") + 2:].split()
        return (fields[0].decode("ascii", "replace"), int(fields[2]),
                int(fields[19]))
    except (OSError, ValueError, IndexError):
        return None


def verified(pid, start):
    """True when PID is a live (not zombie) process that started at START."""
    if not isinstance(pid, int) or not isinstance(start, int) or pid <= 0:
        return False
    stat = proc_stat(pid)
    return stat is not None and stat[2] == start and stat[0] not in "ZXx"


def group_live(pgid):
    """True when some process of group PGID is alive (not a zombie)."""
    if not isinstance(pgid, int) or pgid <= 0:
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False  # no member at all, not even a zombie: one call
    except OSError:
        pass
    for name in os.listdir("/proc"):
        stat = proc_stat(int(name)) if name.isdigit() else None
        if stat is not None and stat[1] == pgid and stat[0] not in "ZXx":
            return True
    return False


def await_group_gone(pgid, within, beat_dfd=None):
    """Returns once no process of group PGID is alive, or after WITHIN
    seconds: a killed member may still be on its way out. Meanwhile
    BEAT_DFD's heartbeat (if any) is rewritten every half interval,
    starting when the group is found alive."""
    now = time.monotonic()
    end, beat_at, pause = now + within, now, 0.001
    while group_live(pgid):
        now = time.monotonic()
        if now >= end:
            return
        if beat_dfd is not None and now >= beat_at:
            write_heartbeat(beat_dfd)
            beat_at = now + HEARTBEAT_INTERVAL / 2
        time.sleep(min(pause, end - now))
        pause = min(pause * 2, 0.02)


# ---- the task root ----

def task_names(root):
    """Names of the task directories in ROOT (32-hex directory entries)."""
    names = []
    try:
        entries = os.scandir(root)
    except FileNotFoundError:
        return names
    except NotADirectoryError:
        raise Refusal("invalid", "--root: not a directory")
    with entries:
        for entry in entries:
            if (len(entry.name) == 32 and HEX.issuperset(entry.name)
                    and entry.is_dir(follow_symlinks=False)):
                names.append(entry.name)
    return names


def open_root(root, create):
    """Checks (and with CREATE makes, mode 0700) the root; returns a locked
    fd of ROOT/.lock serialising start and remove, or None if absent."""
    try:
        if create:
            os.makedirs(root, 0o700, exist_ok=True)
        st = os.stat(root)
    except FileNotFoundError:
        if create:
            raise Refusal("invalid", "--root: a path component is missing")
        return None
    except OSError as e:
        raise Refusal("invalid", "--root: %s" % e.strerror)
    if (st.st_mode & 0o170000) != 0o040000:
        raise Refusal("invalid", "--root: not a directory")
    if st.st_uid != os.geteuid():
        raise Refusal("invalid", "--root: not owned by this user")
    if create and st.st_mode & 0o7077:
        os.chmod(root, 0o700)
    import fcntl
    fd = os.open(os.path.join(root, ".lock"),
                 os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def read_status(tdir):
    """The task's status record as a dict, or None if it has none yet."""
    try:
        with open(os.path.join(tdir, "status.json"), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return None
    import json
    try:
        record = json.loads(raw.decode("utf-8"))
    except ValueError:
        raise Refusal("internal", "status.json of %s is not valid JSON"
                      % os.path.basename(tdir))
    if not isinstance(record, dict):
        raise Refusal("internal", "status.json of %s is not an object"
                      % os.path.basename(tdir))
    return record


def supervisor_gone(record):
    """True when a running record's supervisor no longer runs."""
    return not verified(record.get("supervisor_pid"),
                        record.get("supervisor_start"))


def supervisor_pidfd(record):
    """A pidfd of a running record's supervisor, opened before it is
    verified (a pid reused after the check cannot be watched instead), or
    None (no os.pidfd_open, an old kernel, a supervisor gone)."""
    pid = record.get("supervisor_pid")
    if not hasattr(os, "pidfd_open") or not isinstance(pid, int) or pid <= 0:
        return None
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return None
    if supervisor_gone(record):
        os.close(fd)
        return None
    return fd


def dir_notifier(tdir, mask):
    """An inotify descriptor on directory TDIR for the events in MASK (a
    file renamed in, a file written), and TDIR deleted or moved; None where
    there is no inotify or no ctypes to reach it."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    except (ImportError, OSError, AttributeError):
        return None
    if fd < 0:
        return None
    mask |= IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
    if libc.inotify_add_watch(fd, os.fsencode(tdir), mask) < 0:
        os.close(fd)
        return None
    return fd


def wait_pause(select, fds, pause):
    """Pauses PAUSE seconds, or less once one of FDS (None entries left
    out) is readable. Returns the readable ones."""
    fds = [fd for fd in fds if fd is not None]
    if not fds:
        time.sleep(pause)
        return []
    return select.select(fds, [], [], pause)[0]


def read_off(fds):
    """Reads off the notices queued on the inotify descriptors FDS."""
    for fd in fds:
        try:
            while fd is not None and os.read(fd, 4096):
                pass
        except BlockingIOError:
            pass


# ---- masking ----

def secret_values():
    """Values (4+ bytes) of environment variables named like secrets."""
    found = set()
    for name, value in os.environb.items():
        upper = name.upper()
        if len(value) >= MIN_SECRET and any(w in upper for w in SECRET_WORDS):
            found.add(value)
    return sorted(found, key=len, reverse=True)


class Masker:
    """Replaces every secret value in a byte stream by MASK, leftmost match
    first (the longest at one position), also across feed() calls: a tail
    that could begin a secret is held back until the next call or EOF."""

    def __init__(self, secrets):
        self.secrets = secrets
        self.held = b""

    def straddle(self, data, start):
        """Earliest i >= START where data[i:] is a proper prefix of a secret."""
        n = len(data)
        best = n
        for s in self.secrets:
            k = min(len(s) - 1, n - start)
            while k > 0 and n - k < best:
                if data.endswith(s[:k]):
                    best = n - k
                    break
                k -= 1
        return best

    def feed(self, data, final=False):
        if self.held:
            data = self.held + data
            self.held = b""
        n = len(data)
        out = []
        pos = 0
        hold = n if final else self.straddle(data, 0)
        nxt = {}
        while True:
            best, blen = -1, 0
            for s in self.secrets:
                i = nxt.get(s, -2)
                if i != -1 and i < pos:
                    i = data.find(s, pos)
                    nxt[s] = i
                if i >= 0 and (best < 0 or i < best):
                    best, blen = i, len(s)
            if best < 0 or best >= hold:
                break
            out.append(data[pos:best])
            out.append(MASK)
            pos = best + blen
            if pos > hold:
                hold = self.straddle(data, pos)
        out.append(data[pos:hold])
        self.held = data[hold:]
        return b"".join(out)


# ---- files ----

def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_tmp(dfd, record):
    """Writes RECORD to DFD's status.json.tmp; returns it still open."""
    data = (jdump(record) + "\n").encode("utf-8")
    fd = os.open("status.json.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                 | os.O_CLOEXEC, 0o600, dir_fd=dfd)
    try:
        write_all(fd, data)
    except BaseException:
        os.close(fd)
        raise
    return fd


def rename_tmp(dfd):
    """Renames DFD's status.json.tmp over its status.json."""
    os.rename("status.json.tmp", "status.json", src_dir_fd=dfd,
              dst_dir_fd=dfd)


def write_status(dfd, record):
    """Replaces DFD's status.json atomically: temp, fsync, rename, dir fsync."""
    fd = write_tmp(dfd, record)
    try:
        os.fsync(fd)
        rename_tmp(dfd)
        os.fsync(dfd)
    finally:
        os.close(fd)


def publish_status(dfd, record, logs):
    """The final record: renamed into place at once, so a waiting reader
    sees the end without waiting for the disk; then the descriptors LOGS,
    the record and DFD are fsynced, and a failed fsync is not reported (the
    record is final)."""
    fd = write_tmp(dfd, record)
    try:
        rename_tmp(dfd)
        try:
            for other in logs:
                os.fsync(other)
            os.fsync(fd)
            os.fsync(dfd)
        except OSError:
            pass  # readable as it is; not durable through a crash
    finally:
        os.close(fd)


def write_heartbeat(dfd):
    """Replaces DFD's heartbeat with the wall clock in ms: temp and rename,
    no fsync (it is not durable state). Failures are ignored."""
    data = b"%d\n" % (time.time_ns() // 1000000)
    try:
        fd = os.open("heartbeat.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                     | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.rename("heartbeat.tmp", "heartbeat", src_dir_fd=dfd,
                  dst_dir_fd=dfd)
    except OSError:
        try:
            os.unlink("heartbeat.tmp", dir_fd=dfd)
        except OSError:
            pass


def remove_tree(path):
    """Deletes PATH and everything under it without following symlinks."""
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                remove_tree(entry.path)
            else:
                os.unlink(entry.path)
    os.rmdir(path)


# ---- the running supervisor ----

class Stream:
    """One of the command's output pipes and its log: keeps the first LOG_CAP
    masked bytes, reads and discards the rest."""

    def __init__(self, fd, log, secrets):
        self.fd = fd
        self.log = log
        self.masker = Masker(secrets) if secrets else None
        self.kept = 0
        self.truncated = False
        self.open = fd is not None  # a terminal's stderr has no pipe
        self.scratch = None
        self.big = False

    def keep(self, data):
        room = LOG_CAP - self.kept
        if len(data) > room:
            self.truncated = True
            data = data[:room]
        if data:
            write_all(self.log, data)
            self.kept += len(data)

    def read(self):
        """Reads once; returns the bytes read, 0 at EOF or when none."""
        try:
            if self.kept >= LOG_CAP:
                if self.scratch is None:
                    self.discarding()
                n = os.readv(self.fd, [self.scratch])
                if n:
                    self.truncated = True
                    return n
                data = b""
            else:
                data = os.read(self.fd, CHUNK)
        except BlockingIOError:
            return 0
        except OSError as e:
            if e.errno != errno.EIO:
                raise
            data = b""  # a terminal's master once no slave is left open
        if not data:
            self.close()
            return 0
        self.keep(self.masker.feed(data) if self.masker else data)
        return len(data)

    def discarding(self):
        """Past the cap: read in big gulps. The pipe grows to 1 MiB only now,
        as pipe memory counts against a per-user limit (pipe-user-pages-soft)
        that idle tasks should not use up."""
        self.scratch = bytearray(LOG_CAP)
        try:
            import fcntl
            fcntl.fcntl(self.fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), LOG_CAP)
            self.big = True
        except OSError:
            pass

    def close(self):
        if self.open:
            self.open = False
            os.close(self.fd)
            if self.masker and self.kept < LOG_CAP:
                self.keep(self.masker.feed(b"", True))
            elif self.masker and self.masker.held:
                self.truncated = True


class Relay:
    """Moves bytes from the task's `stdin` FIFO to the command (the write end
    of its stdin pipe, or a terminal's master) through a buffer of at most
    MAX_DATA bytes, in order and never blocking, and applies the lines of
    the `control` FIFO (eof, resize)."""

    def __init__(self, fifo, control, target, tty):
        self.fifo = fifo
        self.control = control
        self.target = target
        self.tty = tty
        self.buf = b""
        self.lines = b""
        self.eof = False  # asked for on `control`
        self.done = False  # eof carried out: the FIFO is no longer read
        self.broken = False  # the command's side is closed: bytes dropped
        self.active = True

    def wants(self):
        """{fd: poll events} the relay waits for now: the target only while
        bytes wait for it, the FIFO only while the buffer is empty."""
        if not self.active:
            return {}
        want = {self.control: POLLIN}
        if self.buf:
            want[self.target] = POLLOUT
        elif not self.done:
            want[self.fifo] = POLLIN
        return want

    def stop(self):
        """The command ended (or its terminal went away): relay no more."""
        self.active = False
        self.buf = b""

    def pump(self):
        """Writes the buffer as the target takes it, refills it from the FIFO
        when empty, and carries out an asked-for eof once both are empty."""
        while self.active:
            if self.buf:
                if not self.flush():
                    return  # the target is full: wait for POLLOUT
                continue
            if self.done:
                return
            try:
                self.buf = os.read(self.fifo, MAX_DATA)
            except BlockingIOError:
                self.buf = b""
            if self.buf:
                if self.broken:
                    self.buf = b""
                continue
            if self.eof:
                self.end_input()
            return

    def flush(self):
        """Writes the buffer once; False when the target took nothing more."""
        try:
            n = os.write(self.target, self.buf)
        except BlockingIOError:
            return False
        except OSError as e:
            if e.errno not in (errno.EPIPE, errno.EIO):
                raise
            self.broken = True  # nobody reads: drop these bytes and the rest
            self.buf = b""
            return True
        self.buf = self.buf[n:]
        return not self.buf

    def end_input(self):
        """eof: closes the command's pipe, or writes the terminal's
        end-of-file character once."""
        self.done = True
        if not self.tty:
            os.close(self.target)
            self.target = None
            return
        import termios
        try:
            veof = termios.tcgetattr(self.target)[6][termios.VEOF]
        except termios.error:
            veof = b"\x04"
        if isinstance(veof, int):
            veof = bytes((veof,))
        if not self.broken:
            self.buf = veof

    def read_control(self):
        """Reads what `control` holds and applies its whole lines."""
        try:
            data = os.read(self.control, 4096)
        except BlockingIOError:
            return
        lines = (self.lines + data).split(b"\n")
        self.lines = lines.pop()
        if len(self.lines) > MAX_CONTROL_LINE:
            self.lines = b""  # no valid line is this long: drop it
        for line in lines:
            words = line.split()
            if words == [b"eof"]:
                self.eof = True
            elif len(words) == 3 and words[0] == b"resize" and self.tty:
                try:
                    rows, cols = int(words[1]), int(words[2])
                except ValueError:
                    continue
                if 1 <= rows <= 1000 and 1 <= cols <= 1000:
                    set_size(self.target, rows, cols)


def set_size(fd, rows, cols):
    """Sets the window size of the terminal FD (TIOCSWINSZ)."""
    import fcntl
    import struct
    import termios
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def signal_name(number):
    """The name docs/supervisor.md gives signal NUMBER."""
    if 1 <= number <= len(SIGNAL_NAMES):
        return SIGNAL_NAMES[number - 1]
    return "SIG%d" % number


class Supervisor:
    def __init__(self, dfd, record, command, cwd, ready_fd, umask, size):
        self.dfd = dfd
        self.record = record
        self.command = command
        self.cwd = cwd
        self.ready_fd = ready_fd
        self.umask = umask
        self.size = size  # (rows, cols) of a terminal (--stdin tty)
        self.pid = None
        self.reason = None
        self.signal = None
        self.cancel = False
        self.kill_at = None
        self.streams = []
        self.relay = None

    def on_term(self, signum, frame):
        self.cancel = True

    def signal_ready(self):
        if self.ready_fd is not None:
            try:
                os.write(self.ready_fd, b"1")
            except OSError:
                pass
            os.close(self.ready_fd)
            self.ready_fd = None

    def open_io(self, logs, secrets):
        """Makes the streams, and with --stdin pipe or tty the FIFOs and the
        relay; returns (the command's fds 0, 1, 2 (None: keep /dev/null),
        the fds to close once it is forked)."""
        mode = self.record["stdin"]
        fifos = []
        if mode != "null":
            for name in ("stdin", "control"):
                os.mkfifo(name, 0o600, dir_fd=self.dfd)
                fifos.append(os.open(name, os.O_RDWR | os.O_NONBLOCK
                                     | os.O_CLOEXEC, dir_fd=self.dfd))
        if mode == "tty":
            master, slave = os.openpty()
            set_size(master, *self.size)
            os.set_blocking(master, False)
            self.streams = [Stream(master, logs[0], secrets),
                            Stream(None, logs[1], secrets)]
            self.relay = Relay(fifos[0], fifos[1], master, True)
            return [slave, slave, slave], [slave]
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        for fd in (out_r, err_r):
            os.set_blocking(fd, False)
        self.streams = [Stream(out_r, logs[0], secrets),
                        Stream(err_r, logs[1], secrets)]
        child = [None, out_w, err_w]
        if mode == "pipe":
            in_r, in_w = os.pipe()
            os.set_blocking(in_w, False)
            self.relay = Relay(fifos[0], fifos[1], in_w, False)
            child[0] = in_r
        return child, [fd for fd in child if fd is not None]

    def spawn(self, fds):
        """Forks /bin/sh -c COMMAND with FDS as its stdin, stdout and stderr,
        as leader of its own group (of its own session with a terminal, which
        becomes its controlling terminal); returns None, or the reason it
        could not be started."""
        tty = self.record["stdin"] == "tty"
        if tty:
            import fcntl
            import termios
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(rd)
                if tty:
                    os.setsid()
                    fcntl.ioctl(fds[0], termios.TIOCSCTTY, 0)
                else:
                    os.setpgid(0, 0)
                for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGHUP,
                            signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
                    signal.signal(sig, signal.SIG_DFL)
                os.umask(self.umask)
                for target, fd in enumerate(fds):
                    if fd is not None:
                        os.dup2(fd, target)
                if self.cwd is not None:
                    try:
                        os.chdir(self.cwd)
                    except OSError as e:
                        raise OSError(e.errno, "cwd %r: %s"
                                      % (self.record["cwd"], e.strerror))
                try:
                    os.execv("/bin/sh", ["sh", "-c", "--", self.command])
                except OSError as e:
                    raise OSError(e.errno, "/bin/sh: %s" % e.strerror)
            except BaseException as e:
                msg = e.strerror if isinstance(e, OSError) else repr(e)
                try:
                    os.write(wr, msg.encode("utf-8", "replace")[:512])
                finally:
                    os._exit(127)
        os.close(wr)
        self.pid = pid
        if not tty:  # a group leader could not call setsid()
            try:
                os.setpgid(pid, pid)
            except OSError:
                pass
        stat = proc_stat(pid)
        self.record["pgid"] = pid
        self.record["pgid_start"] = stat[2] if stat else None
        chunks = []
        while True:
            chunk = os.read(rd, 512)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(rd)
        if chunks:
            os.waitpid(pid, 0)
            self.pid = None
            return " ".join(("cannot start the command: "
                             + text(b"".join(chunks))).split())
        return None

    def signal_group(self, sig):
        try:
            os.killpg(self.record["pgid"], sig)
        except OSError:
            pass

    def finish(self, exit_code, error=None):
        """Writes the final record and ends the supervisor."""
        rec = self.record
        for s in self.streams:
            for _ in range(64):
                if not s.open or not s.read():
                    break
            s.close()
        for name, s in zip(("stdout", "stderr"), self.streams):
            rec[name + "_bytes"] = s.kept
            rec[name + "_truncated"] = s.truncated
        if error is not None:
            state = "failed"
        elif self.reason:
            state = self.reason
        else:
            state = "succeeded" if exit_code == 0 else "failed"
        rec["state"] = state
        rec["finished_at"] = int(time.time())
        rec["exit_code"] = exit_code
        rec["error"] = error
        rec["signal"] = self.signal
        rec["ended_by"] = ENDED_BY.get(self.reason, "exit")
        publish_status(self.dfd, rec, [s.log for s in self.streams])
        self.signal_ready()

    def run(self, timeout, logs, secrets):
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        os.set_blocking(wake_r, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGTERM, self.on_term)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        child, parent_closes = self.open_io(logs, secrets)
        error = self.spawn(child)
        for fd in parent_closes:
            os.close(fd)
        self.record["started_at"] = int(time.time())
        if error is not None:
            self.finish(None, error)
            return
        deadline = time.monotonic() + timeout
        write_heartbeat(self.dfd)
        beat_at = time.monotonic() + HEARTBEAT_INTERVAL
        write_status(self.dfd, self.record)
        self.signal_ready()

        import select
        poller = select.poll()
        watched = {}
        streams = dict((s.fd, s) for s in self.streams if s.open)
        relay = self.relay
        exit_code = None
        drain_until = None
        child_changed = True
        while True:
            now = time.monotonic()
            if now >= beat_at:
                write_heartbeat(self.dfd)
                beat_at = now + HEARTBEAT_INTERVAL
            if exit_code is None and child_changed:
                child_changed = False
                exit_code = self.reap()
                if exit_code is not None:
                    # counted from now: reap may have waited
                    drain_until = time.monotonic() + DRAIN_GRACE
                    if relay is not None:
                        relay.stop()  # the command ended: relay no more
            if exit_code is None:
                if self.cancel and not self.reason:
                    self.reason = "cancelled"
                    self.record["cancel_requested"] = True
                    self.terminate(now)
                    write_status(self.dfd, self.record)
                if not self.reason and now >= deadline:
                    self.reason = "timed_out"
                    self.terminate(now)
                if self.kill_at is not None and now >= self.kill_at:
                    self.signal_group(signal.SIGKILL)
                    self.kill_at = None
                due = [deadline] if not self.reason else []
                if self.kill_at is not None:
                    due.append(self.kill_at)
            else:
                if not streams or now >= drain_until:
                    break
                due = [drain_until]
            due.append(beat_at)  # a quiet task still gets its beat on time
            wait = max(0, int((min(due) - now) * 1000) + 1)
            watch(poller, watched, self.wanted(wake_r, streams))
            pump = False
            for fd, events in poller.poll(wait):
                if fd == wake_r:
                    try:
                        while os.read(wake_r, 64):
                            pass
                    except BlockingIOError:
                        pass
                    child_changed = True  # drained before reap(): no loss
                    continue
                stream = streams.get(fd)
                if stream is not None and events & ~POLLOUT:
                    got = stream.read()
                    if not stream.open:
                        del streams[fd]
                        if relay is not None and relay.target == fd:
                            relay.stop()  # the terminal is gone
                    elif got < BATCH_BYTES and stream.big and \
                            exit_code is None:
                        # Output being discarded: let it gather in the 1 MiB
                        # pipe rather than wake per write (it cannot fill
                        # meanwhile).
                        time.sleep(BATCH_PAUSE)
                if relay is not None and relay.active:
                    if fd == relay.control:
                        relay.read_control()
                        pump = True
                    elif fd == relay.fifo or (fd == relay.target and events
                                              & (POLLOUT | POLLERR | POLLHUP)):
                        pump = True
            if pump:
                relay.pump()
        self.finish(exit_code)

    def wanted(self, wake_r, streams):
        """{fd: poll events} of this turn: the wake-up pipe, the open
        streams, and what the relay waits for."""
        want = dict.fromkeys(streams, POLLIN)
        want[wake_r] = POLLIN
        if self.relay is not None:
            for fd, events in self.relay.wants().items():
                want[fd] = want.get(fd, 0) | events
        return want

    def terminate(self, now):
        self.signal_group(signal.SIGTERM)
        self.kill_at = now + TERM_GRACE

    def reap(self):
        """The command's exit code once it has exited (128+N for signal N),
        else None. The rest of its group is killed before the leader is
        reaped, so the group id cannot have been reused."""
        info = os.waitid(os.P_PID, self.pid,
                         os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if info is None:
            return None
        self.signal_group(signal.SIGKILL)
        _, status = os.waitpid(self.pid, 0)
        await_group_gone(self.record["pgid"], KILL_SETTLE, self.dfd)
        if os.WIFSIGNALED(status):
            self.signal = signal_name(os.WTERMSIG(status))
            return 128 + os.WTERMSIG(status)
        return os.WEXITSTATUS(status)


def watch(poller, watched, want):
    """Makes POLLER wait for exactly WANT ({fd: events}); WATCHED is what
    it waits for now."""
    for fd in [fd for fd in watched if fd not in want]:
        poller.unregister(fd)
        del watched[fd]
    for fd, events in want.items():
        if watched.get(fd) != events:
            poller.register(fd, events)
            watched[fd] = events


def daemon(tdir, record, how, ready_fd, umask):
    """The supervisor process, after the second fork: never returns. HOW is
    (the command, --cwd, the timeout, the terminal's size)."""
    command, cwd, timeout, size = how
    code = 0
    sup = None
    try:
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        keep = (0, 1, 2, ready_fd)
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        for sig in (signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        dfd = os.open(tdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
        logs = (os.open("stdout", flags, 0o600, dir_fd=dfd),
                os.open("stderr", flags, 0o600, dir_fd=dfd))
        pid = os.getpid()
        stat = proc_stat(pid)
        record["supervisor_pid"] = pid
        record["supervisor_start"] = stat[2] if stat else None
        sup = Supervisor(dfd, record, command, cwd, ready_fd, umask, size)
        sup.run(timeout, logs, secret_values())
    except BaseException as e:
        code = 1
        try:
            if sup is not None and sup.pid is not None:
                sup.signal_group(signal.SIGKILL)
                await_group_gone(record.get("pgid"), KILL_SETTLE, sup.dfd)
            record["state"] = "failed"
            record["finished_at"] = int(time.time())
            record["error"] = " ".join(("supervisor error: %s" % (e,)).split())
            if sup is not None:
                record["signal"] = sup.signal
                record["ended_by"] = ENDED_BY.get(sup.reason, "exit")
            write_status(os.open(tdir, os.O_RDONLY | os.O_DIRECTORY), record)
        except BaseException:
            pass
    finally:
        os._exit(code)


# ---- verbs ----

def verb_start(opts):
    root, tid = opts["--root"], opts["--id"]
    record, how = start_record(opts)
    key = record["idempotency_key"]
    request = check_request(opts)
    umask = os.umask(0o077)
    lock = open_root(root, True)
    tdir = os.path.join(root, tid)
    try:
        existing, kept = keyed_record(root, key) if key is not None \
            else (None, None)
        if existing is not None:
            existing["existing"] = True
            if kept is not None:
                existing["request"] = kept
            say(existing)
            return
        if len(task_names(root)) >= MAX_TASKS:
            raise Refusal("limit", "task limit reached: %s holds %d task "
                          "directories, the most allowed; remove finished "
                          "tasks (verb remove --root %s --id ID) and retry"
                          % (root, MAX_TASKS, root))
        try:
            os.mkdir(tdir, 0o700)
        except FileExistsError:
            raise Refusal("exists", "--id: task %s already exists" % tid)
        ok = launch(tdir, record, how, umask, lock)
        try:
            with open(os.path.join(tdir, "status.json"), "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raw = None
        if key is not None and raw is not None:
            link_key(root, key, tid if request is None
                     else "%s.%s" % (tid, request))
    finally:
        os.close(lock)
    if raw is None or not ok and b'"running"' in raw:
        raise Refusal("internal", "the supervisor of task %s ended before it "
                      "confirmed the start; its state is unknown" % tid)
    sys.stdout.buffer.write(raw)
    sys.stdout.flush()


def masked(value, secrets):
    """VALUE's bytes with the SECRETS masked: a command or a cwd never shows
    a secret in a record or an error."""
    raw = os.fsencode(value)
    return Masker(secrets).feed(raw, True) if secrets else raw


def start_record(opts):
    """Checks start's options; returns (the first record, (the command,
    --cwd, the timeout, the terminal's (rows, cols)))."""
    timeout = int_option("--timeout", opts["--timeout"], 1, 3600)
    command = opts["--command"]
    if not command or len(command) > MAX_COMMAND:
        raise Refusal("invalid", "--command: must be 1 to %d characters"
                      % MAX_COMMAND)
    cwd = opts.get("--cwd")
    if cwd is not None:
        check_path("--cwd", cwd)
    mode, rows, cols = stdin_options(opts)
    key = opts.get("--key")
    if key is not None:
        check_key(key)
    secrets = secret_values()
    shown = masked(command, secrets)
    record = dict.fromkeys(STATUS_KEYS)
    record.update(format=FORMAT, task_id=opts["--id"], state="running",
                  command=text(shown), timeout=timeout,
                  cwd=None if cwd is None else text(masked(cwd, secrets)),
                  stdout_bytes=0, stderr_bytes=0, stdout_truncated=False,
                  stderr_truncated=False, cancel_requested=False,
                  stdin=mode, idempotency_key=key)
    return record, (command, cwd, timeout, (rows, cols))


def launch(tdir, record, how, umask, lock):
    """Daemonizes the supervisor of TDIR (fork, setsid, fork) and waits
    until it confirms its first record; True when it did."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(lock)
            os.close(rd)
            os.setsid()
            if os.fork() == 0:
                daemon(tdir, record, how, wr, umask)
        finally:
            os._exit(0)
    os.close(wr)
    os.waitpid(pid, 0)
    ok = os.read(rd, 1) == b"1"
    os.close(rd)
    return ok


def key_path(root, key):
    return os.path.join(root, "keys", key + ".task")


def key_target(root, key):
    """(task id, request digest or None) of KEY's link, or (None, None)
    when there is no link or a malformed one."""
    try:
        target = os.readlink(key_path(root, key))
    except OSError:
        return None, None
    tid, dot, request = target.partition(".")
    if len(tid) != 32 or not HEX.issuperset(tid) or dot and not (
            1 <= len(request) <= MAX_REQUEST
            and REQUEST_CHARS.issuperset(request)):
        return None, None
    return tid, request if dot else None


def keyed_record(root, key):
    """(the record of the task KEY started, the request digest kept with
    the key or None), or (None, None) when the key is free (no link, a
    malformed one, or a task without a record)."""
    tid, request = key_target(root, key)
    if tid is None:
        return None, None
    try:
        record = read_status(os.path.join(root, tid))
    except OSError:
        return None, None
    return (record, request) if record is not None else (None, None)


def link_key(root, key, tid):
    """Points ROOT/keys/KEY.task at TID (the task id, then '.' and the
    request's digest when start had one): a symlink made under a temporary
    name and renamed over the link."""
    keys = os.path.join(root, "keys")
    try:
        os.mkdir(keys, 0o700)
    except FileExistsError:
        pass
    tmp = os.path.join(keys, ".%s.task.%d.tmp" % (key, os.getpid()))
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    os.symlink(tid, tmp)
    os.rename(tmp, key_path(root, key))


def unlink_key(root, record, tid):
    """Frees the record's key when its link still points at TID."""
    key = record.get("idempotency_key") if record else None
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY or \
            not KEY_CHARS.issuperset(key):
        return
    try:
        if key_target(root, key)[0] == tid:
            os.unlink(key_path(root, key))
    except OSError:
        pass


def find_task(opts):
    tdir = os.path.join(opts["--root"], opts["--id"])
    if not os.path.isdir(tdir):
        raise Refusal("not_found", "--id: no task %s under %s"
                      % (opts["--id"], opts["--root"]))
    return tdir


def verb_cancel(opts):
    wait = 3.0
    if "--wait" in opts:
        wait = float(int_option("--wait", opts["--wait"], 0, 60))
    tdir = find_task(opts)
    record = read_status(tdir)
    if record is None:
        raise Refusal("not_found", "task %s has no status record"
                      % opts["--id"])
    if record.get("state") in TERMINAL:
        say(record)
        return
    end = time.monotonic() + wait
    if supervisor_gone(record):
        record = read_status(tdir) or record
        if record.get("state") not in TERMINAL:
            kill_orphan_group(record, end)
            record["supervisor_gone"] = True
        say(record)
        return
    try:
        os.kill(record["supervisor_pid"], signal.SIGTERM)
    except ProcessLookupError:
        pass  # it finished meanwhile: its final record follows
    # Most tasks end within milliseconds of the TERM: look again after
    # 1 ms, then twice as long each time, up to 20 ms.
    pause = 0.001
    while record.get("state") not in TERMINAL and time.monotonic() < end:
        time.sleep(pause)
        record = read_status(tdir) or record
        pause = min(pause * 2, 0.02)
    say(record)


def kill_orphan_group(record, end):
    """TERM, then KILL after TERM_GRACE, the recorded group of a task whose
    supervisor is gone, if its leader is verified when the TERM goes; then
    waits (within END and KILL_SETTLE) for its members to be gone."""
    pgid, start = record.get("pgid"), record.get("pgid_start")
    if not verified(pgid, start):
        return
    try:
        os.killpg(pgid, signal.SIGTERM)
    except OSError:
        return
    # The group id stays this task's while a member holds it, and it is
    # looked at every 20 ms: far too often for it to have been freed and
    # handed to a new group in between. A member that ignores the TERM gets
    # the KILL even when the leader took the TERM and went.
    grace = min(time.monotonic() + TERM_GRACE, end)
    while time.monotonic() < grace and group_live(pgid):
        time.sleep(0.02)
    if group_live(pgid):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
    await_group_gone(pgid, min(end - time.monotonic(), KILL_SETTLE))


def verb_wait(opts):
    wait = float(int_option("--wait", opts.get("--wait", "3"), 0, 60))
    offsets = []
    for stream in ("stdout", "stderr"):
        name = "--%s-offset" % stream
        if name in opts:
            offsets.append((stream, int_option(name, opts[name], 0,
                                               MAX_OFFSET)))
    pages = page_options(opts)
    tdir = find_task(opts)
    record = read_status(tdir)
    if record is None:
        raise Refusal("not_found", "task %s has no status record"
                      % opts["--id"])
    end = time.monotonic() + wait
    # The supervisor's exit, the record put in place and, when offsets are
    # given, a log written end a pause at once. The watches are in place
    # before the first look, so nothing falls between.
    pidfd = renamed = written = select = None
    if record.get("state") not in TERMINAL:
        import select
        pidfd = supervisor_pidfd(record)
        renamed = dir_notifier(tdir, IN_MOVED_TO)
        if offsets and renamed is not None:
            written = dir_notifier(tdir, IN_MODIFY)
    held = False
    while record.get("state") not in TERMINAL:
        if supervisor_gone(record):
            # A supervisor that just finished wrote its final record.
            record = read_status(tdir) or record
            if record.get("state") not in TERMINAL:
                record["supervisor_gone"] = True
            break
        if grown(tdir, offsets) or time.monotonic() >= end:
            break
        # A write that settled nothing (a log written below its offset)
        # holds the next one back: a task that writes all the time is
        # looked at every WAIT_LOOK, not at each write. The record put in
        # place and the supervisor's exit still end the pause at once.
        watched = pidfd is not None and renamed is not None and (
            written is not None or not offsets)
        pause = max(0.0, min(WATCHED_LOOK if watched and not held
                             else WAIT_LOOK, end - time.monotonic()))
        ready = wait_pause(select, (pidfd, renamed,
                                    None if held else written), pause)
        held = written is not None and written in ready
        read_off((renamed, written))
        again = read_status(tdir)
        if again is None and not os.path.isdir(tdir):
            raise Refusal("not_found", "task %s was removed" % opts["--id"])
        record = again or record
    # The pages are read after the record: a terminal record's pages hold
    # every byte it counts.
    for stream, offset, limit in pages:
        record[stream + "_page"] = read_page(tdir, stream, offset, limit)
    say(record)
    # After the answer: closing an inotify descriptor with a watch waits
    # for the kernel's grace period, 0.4 ms here, several under load.
    for fd in (pidfd, renamed, written):
        if fd is not None:
            os.close(fd)


def page_options(opts):
    """The wait verb's pages asked for: a list of (stream, offset, limit),
    empty without --page-limit."""
    for stream in ("stdout", "stderr"):
        name = "--%s-page-offset" % stream
        if name in opts and "--page-limit" not in opts:
            raise Refusal("invalid", "%s: only with --page-limit" % name)
    if "--page-limit" not in opts:
        return []
    limit = int_option("--page-limit", opts["--page-limit"], 1,
                       PAGE_LIMIT_MAX)
    return [(stream, int_option("--%s-page-offset" % stream,
                                opts.get("--%s-page-offset" % stream, "0"),
                                0, MAX_OFFSET), limit)
            for stream in ("stdout", "stderr")]


def read_page(tdir, stream, offset, limit):
    """At most LIMIT bytes of TDIR's log STREAM from OFFSET, read now, as
    {"offset", "size" (after the read), "data" (base64)}; a log not created
    yet is empty."""
    import binascii
    got = b""
    try:
        fd = os.open(os.path.join(tdir, stream), os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return {"offset": offset, "size": 0, "data": ""}
    try:
        while len(got) < limit:
            more = os.pread(fd, limit - len(got), offset + len(got))
            if not more:
                break
            got += more
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if got:
        size = max(size, offset + len(got))
    return {"offset": offset, "size": size,
            "data": binascii.b2a_base64(got, newline=False).decode("ascii")}


def grown(tdir, offsets):
    """True when a log of TDIR holds a byte at its offset in OFFSETS, a
    list of (stream, offset)."""
    for stream, offset in offsets:
        try:
            if os.stat(os.path.join(tdir, stream)).st_size > offset:
                return True
        except OSError:
            pass
    return False


# ---- the watch verb: one per sandbox, every task a host waits on ----

def watch_interests(value):
    """--tasks as a list of (id, so, eo, pl, spo, epo); so and eo are None
    when not asked for. Refuses a malformed list naming the interest."""
    items = value.split(",")
    if not value or len(items) > MAX_INTERESTS:
        raise Refusal("invalid", "--tasks: must hold 1 to %d interests, "
                      "separated by ','" % MAX_INTERESTS)
    interests = []
    for n, item in enumerate(items, 1):
        fields = item.split("/")
        where = "--tasks: interest %d" % n
        if len(fields) != 6:
            raise Refusal("invalid", "%s: must be ID/SO/EO/PL/SPO/EPO" % where)
        tid = fields[0]
        if len(tid) != 32 or not HEX.issuperset(tid):
            raise Refusal("invalid", "%s: the id must be 32 lowercase "
                          "hexadecimal characters" % where)
        got = [tid]
        for i, (what, high, dash) in enumerate(
                (("stdout offset", MAX_OFFSET, True),
                 ("stderr offset", MAX_OFFSET, True),
                 ("page limit", PAGE_LIMIT_MAX, False),
                 ("stdout page offset", MAX_OFFSET, False),
                 ("stderr page offset", MAX_OFFSET, False)), 1):
            field = fields[i]
            if dash and field == "-":
                got.append(None)
                continue
            number = (int(field) if field.isdigit() and field.isascii()
                      else None)
            if number is None or number > high:
                raise Refusal("invalid", "%s: the %s must be %san integer "
                              "from 0 to %d" % (where, what,
                                                "'-' or " if dash else "",
                                                high))
            got.append(number)
        interests.append(tuple(got))
    return interests


def lease_options(opts):
    """(name, generation) of --lease and --generation, or None."""
    if "--lease" not in opts and "--generation" not in opts:
        return None
    for name, other in (("--lease", "--generation"),
                        ("--generation", "--lease")):
        if name not in opts:
            raise Refusal("invalid", "%s: required with %s" % (name, other))
    name = opts["--lease"]
    if not 1 <= len(name) <= MAX_LEASE or not LEASE_CHARS.issuperset(name):
        raise Refusal("invalid", "--lease: must be 1 to %d characters from "
                      "A-Z, a-z, 0-9, '_' and '-'" % MAX_LEASE)
    value = opts["--generation"]
    number = int(value) if value.isdigit() and value.isascii() else None
    if number is None or number > MAX_GENERATION:
        raise Refusal("invalid", "--generation: must be an integer from 0 "
                      "to %d" % MAX_GENERATION)
    return name, number


def lease_read(path):
    """The generation the lease file PATH holds, or -1 (none, malformed)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(64).strip()
    except OSError:
        return -1
    return int(raw) if raw.isdigit() and len(raw) <= 16 else -1


def lease_take(root, name, generation):
    """Writes GENERATION into ROOT/.watch/NAME unless it holds a greater
    one; returns (path, taken). The directory's flock(2) makes the check
    and the write one step. No root: (None, True), nothing to lease."""
    ldir = os.path.join(root, ".watch")
    try:
        os.mkdir(ldir, 0o700)
    except FileExistsError:
        pass
    except FileNotFoundError:
        return None, True
    import fcntl
    path = os.path.join(ldir, name)
    dfd = os.open(ldir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(dfd, fcntl.LOCK_EX)
        if lease_read(path) > generation:
            return path, False
        tmp = path + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
                     0o600)
        try:
            write_all(fd, b"%d\n" % generation)
        finally:
            os.close(fd)
        os.rename(tmp, path)
    finally:
        os.close(dfd)
    return path, lease_read(path) <= generation


class WatchedTask:
    """One task of the watch verb's interests and what the last look saw:
    STATE is "running", "terminal", "gone" or "missing"."""

    def __init__(self, root, tid):
        self.tdir = os.path.join(root, tid)
        self.record = None
        self.state = "running"
        self.sizes = (0, 0)
        self.offsets = False
        self.pidfd = None

    def look(self):
        if self.state == "terminal":
            return
        record = read_status(self.tdir) if os.path.isdir(self.tdir) else None
        if record is None:
            self.state = "missing"
            return
        gone = record.get("state") not in TERMINAL and supervisor_gone(record)
        if gone:
            # A supervisor that just finished wrote its final record.
            record = read_status(self.tdir) or record
        self.record = record
        self.state = ("terminal" if record.get("state") in TERMINAL
                      else "gone" if gone else "running")
        if self.offsets and self.state == "running":
            self.sizes = tuple(log_size(self.tdir, s)
                               for s in ("stdout", "stderr"))


def log_size(tdir, stream):
    try:
        return os.stat(os.path.join(tdir, stream)).st_size
    except OSError:
        return 0


def interest_met(task, so, eo):
    return task.state != "running" or (so is not None and task.sizes[0] > so) \
        or (eo is not None and task.sizes[1] > eo)


def watch_answer(tasks, interests):
    """The answer's entries for every interest met at the last look."""
    answers = []
    for index, (tid, so, eo, pl, spo, epo) in enumerate(interests):
        task = tasks[tid]
        if not interest_met(task, so, eo):
            continue
        if task.state == "missing":
            answers.append({"index": index, "missing": True})
            continue
        record = dict(task.record)
        if task.state == "gone":
            record["supervisor_gone"] = True
        if pl:
            # Read after the record: a terminal record's pages hold every
            # byte it counts.
            record["stdout_page"] = read_page(task.tdir, "stdout", spo, pl)
            record["stderr_page"] = read_page(task.tdir, "stderr", epo, pl)
        answers.append({"index": index, "record": record})
    return answers


def watch_notifier(tasks, lease_path):
    """Two inotify descriptors (renamed, written) with their watches: each
    task directory for a record put in place (and, for tasks with offsets,
    a log written), the lease's directory for a newer generation (its watch
    the third value). Any may be None."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
    except (ImportError, OSError):
        return None, None, None
    fds = []
    for _ in range(2):
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        fds.append(fd if fd >= 0 else None)
    renamed, written = fds
    base = IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
    for task in tasks.values():
        if renamed is not None:
            libc.inotify_add_watch(renamed, os.fsencode(task.tdir),
                                   IN_MOVED_TO | base)
        if written is not None and task.offsets:
            libc.inotify_add_watch(written, os.fsencode(task.tdir),
                                   IN_MODIFY | base)
    lease_wd = None
    if renamed is not None and lease_path is not None:
        lease_wd = libc.inotify_add_watch(
            renamed, os.fsencode(os.path.dirname(lease_path)),
            IN_MOVED_TO | IN_ONLYDIR)
    return renamed, written, lease_wd


def watch_look(tasks, interests, lease_path, lease):
    """Looks at every task; returns the answer when it is time for one
    (superseded, or an interest met), else None."""
    if lease_path is not None and lease_read(lease_path) > lease[1]:
        return {"answers": [], "superseded": True}
    for task in tasks.values():
        task.look()
    if not any(interest_met(tasks[i[0]], i[1], i[2]) for i in interests):
        return None
    # Ends that happen together are answered together.
    time.sleep(WATCH_SETTLE)
    for task in tasks.values():
        task.look()
    answers = watch_answer(tasks, interests)
    return {"answers": answers} if answers else None


def notices(fd, lease_wd, lease, names):
    """Reads off the notices queued on inotify descriptor FD; True when
    one matters: a directory gone or the queue overflowed, the lease
    renamed into its directory (watch LEASE_WD), or a file of NAMES. A
    heartbeat rewritten in each task directory every second wakes the
    verb but does not make it look."""
    import struct
    hit = False
    while True:
        try:
            buf = os.read(fd, 4096)
        except BlockingIOError:
            return hit
        if not buf:
            return hit
        at = 0
        while at + 16 <= len(buf):
            wd, mask, _, size = struct.unpack_from("iIII", buf, at)
            name = buf[at + 16:at + 16 + size].rstrip(b"\0")
            at += 16 + size
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED
                       | IN_Q_OVERFLOW):
                hit = True
            elif lease_wd is not None and wd == lease_wd:
                hit = hit or name == lease[0].encode()
            elif name in names:
                hit = True


def verb_watch(opts):
    wait = float(int_option("--wait", opts.get("--wait", "3"), 0, 60))
    interests = watch_interests(opts["--tasks"])
    lease = lease_options(opts)
    root = opts["--root"]
    superseded = {"answers": [], "superseded": True}
    lease_path = None
    if lease is not None:
        lease_path, taken = lease_take(root, lease[0], lease[1])
        if not taken:
            say(superseded)
            return
    end = time.monotonic() + wait
    tasks = {}
    for tid, so, eo, _, _, _ in interests:
        task = tasks.setdefault(tid, WatchedTask(root, tid))
        task.offsets = task.offsets or so is not None or eo is not None
    # The watches are in place before the first look, so nothing falls
    # between; a pidfd is opened before its supervisor is verified.
    import select
    renamed, written, lease_wd = watch_notifier(tasks, lease_path)
    pidfds = 0
    for task in tasks.values():
        try:
            record = read_status(task.tdir)
        except Refusal:
            record = None
        if (record is not None and record.get("state") not in TERMINAL
                and pidfds < MAX_PIDFDS):
            task.pidfd = supervisor_pidfd(record)
            pidfds += task.pidfd is not None
    held, due, look_at, answer = False, True, 0.0, None
    while answer is None:
        if due:
            answer = watch_look(tasks, interests, lease_path, lease)
            if answer is not None:
                break
            # As in wait: a write that settled nothing holds the next
            # notice of a write back for WAIT_LOOK; a task whose
            # supervisor has no pidfd is looked at every WAIT_LOOK.
            watched = renamed is not None and (
                written is not None
                or not any(t.offsets for t in tasks.values())
            ) and all(t.pidfd is not None for t in tasks.values()
                      if t.state == "running")
            look_at = time.monotonic() + (WATCHED_LOOK if watched
                                          and not held else WAIT_LOOK)
        now = time.monotonic()
        if now >= end:
            answer = {"answers": []}
            break
        fds = [renamed, None if held else written]
        fds += [t.pidfd for t in tasks.values() if t.pidfd is not None]
        ready = wait_pause(select, fds, max(0.0, min(look_at, end) - now))
        wrote = written in ready and notices(written, None, None,
                                             (b"stdout", b"stderr"))
        put = renamed in ready and notices(renamed, lease_wd, lease,
                                           (b"status.json",))
        due = (wrote or put or any(fd in ready for fd in fds[2:])
               or time.monotonic() >= look_at)
        if due:
            held = wrote
    say(answer)
    # After the answer: closing an inotify descriptor with a watch waits
    # for the kernel's grace period.
    for fd in [renamed, written] + [t.pidfd for t in tasks.values()]:
        if fd is not None:
            os.close(fd)


def verb_remove(opts):
    root, tid = opts["--root"], opts["--id"]
    lock = open_root(root, False)
    if lock is None:
        raise Refusal("not_found", "--root: %s does not exist" % root)
    try:
        tdir = find_task(opts)
        record = read_status(tdir)
        if record is not None and record.get("state") not in TERMINAL:
            if not supervisor_gone(record) or verified(
                    record.get("pgid"), record.get("pgid_start")):
                raise Refusal("running", "task %s is still running; cancel "
                              "it first" % tid)
        doomed = os.path.join(root, ".removing-%s-%d" % (tid, os.getpid()))
        os.rename(tdir, doomed)
        unlink_key(root, record, tid)
        remove_tree(doomed)
    finally:
        os.close(lock)
    if record is None:
        record = {"task_id": tid}
    record["removed"] = True
    say(record)


def input_record(opts, verb):
    """The record of a task that takes input now (write, resize), else
    raises not_found or closed."""
    tid = opts["--id"]
    record = read_status(find_task(opts))
    if record is None:
        raise Refusal("not_found", "task %s has no status record" % tid)
    state = record.get("state")
    if state in TERMINAL:
        raise Refusal("closed", "task %s has ended (%s): its %s is closed"
                      % (tid, state, "stdin" if verb == "write"
                         else "terminal"))
    mode = record.get("stdin") or "null"
    if verb == "write" and mode == "null":
        raise Refusal("closed", "task %s was started without stdin: start "
                      "it with stdin pipe or tty" % tid)
    if verb == "resize" and mode != "tty":
        raise Refusal("closed", "task %s has no terminal: start it with "
                      "stdin tty" % tid)
    return record


def open_fifo(tdir, name, tid):
    """Opens the task's FIFO NAME write-only, non-blocking; no reader
    (ENXIO) means the supervisor is gone: closed."""
    try:
        return os.open(os.path.join(tdir, name), os.O_WRONLY | os.O_NONBLOCK
                       | os.O_CLOEXEC)
    except OSError as e:
        if e.errno not in (errno.ENXIO, errno.ENOENT):
            raise
    record = read_status(tdir) or {}
    if record.get("state") in TERMINAL:
        raise Refusal("closed", "task %s has ended (%s): its stdin is closed"
                      % (tid, record["state"]))
    raise Refusal("closed", "the supervisor of task %s is gone" % tid)


def write_fifo(fd, data, deadline):
    """Writes DATA in order, waiting for room until DEADLINE (monotonic);
    returns how many bytes the FIFO took."""
    import select
    view = memoryview(data)
    done = 0
    while done < len(data):
        try:
            done += os.write(fd, view[done:])
            continue
        except BlockingIOError:
            pass
        except BrokenPipeError:
            break  # the supervisor went away meanwhile
        left = deadline - time.monotonic()
        if left <= 0:
            break
        poller = select.poll()
        poller.register(fd, POLLOUT)
        poller.poll(int(left * 1000) + 1)
    return done


def verb_write(opts):
    tid = opts["--id"]
    data = data_option(opts)
    eof = {"0": False, "1": True}.get(opts.get("--eof", "0"))
    if eof is None:
        raise Refusal("invalid", "--eof: must be 0 or 1")
    input_record(opts, "write")
    tdir = find_task(opts)
    import fcntl
    lock = os.open(os.path.join(tdir, "stdin.lock"), os.O_RDWR | os.O_CREAT
                   | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.lexists(os.path.join(tdir, "stdin.eof")):
            raise Refusal("closed", "the stdin of task %s was closed (eof)"
                          % tid)
        fd = open_fifo(tdir, "stdin", tid)
        try:
            written = write_fifo(fd, data, time.monotonic() + WRITE_WAIT)
        finally:
            os.close(fd)
        eof = eof and written == len(data)
        if eof:
            os.close(os.open(os.path.join(tdir, "stdin.eof"), os.O_WRONLY
                             | os.O_CREAT | os.O_CLOEXEC, 0o600))
            send_control(tdir, tid, b"eof\n")
    finally:
        os.close(lock)
    say({"task_id": tid, "written": written, "eof": eof})


def send_control(tdir, tid, line):
    """Writes one LINE to the task's `control` FIFO with one write(2)."""
    fd = open_fifo(tdir, "control", tid)
    try:
        if write_fifo(fd, line, time.monotonic() + WRITE_WAIT) < len(line):
            raise Refusal("internal", "the control FIFO of task %s is full"
                          % tid)
    finally:
        os.close(fd)


def verb_resize(opts):
    tid = opts["--id"]
    rows = int_option("--rows", opts["--rows"], 1, 1000)
    cols = int_option("--cols", opts["--cols"], 1, 1000)
    input_record(opts, "resize")
    send_control(find_task(opts), tid, b"resize %d %d\n" % (rows, cols))
    say({"task_id": tid, "rows": rows, "cols": cols})


def verb_list(opts):
    root = opts["--root"]
    records = []
    for name in task_names(root):
        try:
            record = read_status(os.path.join(root, name))
        except Refusal as e:
            record = {"task_id": name, "error": e.message}
        if record is None:
            record = {"task_id": name, "error": "no status record"}
        elif record.get("state") not in TERMINAL and supervisor_gone(record):
            record["supervisor_gone"] = True
        records.append(record)
    records.sort(key=lambda r: (r.get("started_at") or 0, r["task_id"]),
                 reverse=True)
    say({"tasks": records})


def main(argv):
    try:
        if argv[:1] in (["--help"], ["-h"], ["help"]):
            say({"usage": USAGE})
            return 0
        verb, opts = parse_args(argv)
        {"start": verb_start, "cancel": verb_cancel, "write": verb_write,
         "resize": verb_resize, "remove": verb_remove,
         "list": verb_list, "wait": verb_wait,
         "watch": verb_watch}[verb](opts)
        return 0
    except Refusal as e:
        say({"error": e.message, "code": e.code})
        return EXIT_CODES[e.code]
    except Exception as e:
        say({"error": "internal error: %s" % (e,), "code": "internal"})
        return EXIT_CODES["internal"]


if __name__ == "__main__":
    CODE = main(sys.argv[1:])
    # No interpreter teardown: it costs milliseconds on every verb, some of
    # them waited for by the host (a wait verb's answer). say() flushed the
    # answer; nothing else is buffered.
    sys.stderr.flush()
    os._exit(CODE)
