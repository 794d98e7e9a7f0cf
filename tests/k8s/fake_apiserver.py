#!/usr/bin/env python3
"""A loopback fake kube-apiserver for taskbox's Kubernetes tests (stdlib only).

    python3 tests/k8s/fake_apiserver.py --state DIR --ready-file FILE [--tls]
        [--token TOKEN] [--lifetime SECONDS] [--rootfs DIR] [--port N]
        [--exec-protocols LIST] [--sandbox-pod-names sandbox|generated]
        [--list-page-cap N]
    python3 tests/k8s/fake_apiserver.py --state DIR --cleanup

Serves on 127.0.0.1 only: discovery, Pods, agents.x-k8s.io/v1beta1
Sandboxes (with a small controller for shutdownTime and operatingMode),
watch, and pods/exec over WebSocket (v5.channel.k8s.io, v4.channel.k8s.io)
running real processes chrooted into one private root per pod
(DIR/pods/NS/NAME/root). Everything it knows is kept under DIR, so a fake
killed and started again on the same --state and --port carries on, and
processes started in pods survive it (as containers survive an apiserver
restart). When --lifetime runs out, the fake kills every process of its pods
and exits; --cleanup does the same for a fake already gone and removes DIR.

--exec-protocols (default "v5.channel.k8s.io,v4.channel.k8s.io") lists the
subprotocols pods/exec serves; v5 is picked whenever it is offered and
served (a 1.30+ apiserver sends every request offering v5 to its stream
translator, which speaks v5 only), else v4. "v4.channel.k8s.io" alone is
an apiserver before 1.30 (or with TranslateStreamCloseWebsocketRequests
off), which proxies the WebSocket to the kubelet's legacy stream server:
channel 255 (CLOSE) is ignored there, so stdin never ends before the
connection does, and the connection is closed right after the close frame
that follows the Status.

The Sandbox controller records its pod's name in the Sandbox annotation
agents.x-k8s.io/pod-name (and clears it while suspended), as agent-sandbox
does since v0.3.10. --sandbox-pod-names generated names each Sandbox's
first pod NAME-xxxxx instead of NAME, as a pod adopted from an agent-sandbox
v0.1/v0.2 warm pool is named; a pod made after a suspension or a lost pod
is named like the Sandbox again, as agent-sandbox does.

LIST takes labelSelector (=, ==, !=, in, notin, exists, !exists,
comma-joined), fieldSelector (=, !=) and limit with continue: a page of at
most limit objects (at most N with --list-page-cap N, as an apiserver may
serve fewer than asked) with metadata.continue and remainingItemCount while
more remain. An object with metadata.finalizers is not removed by DELETE:
it gets deletionTimestamp and stays (a pod's processes too) until an update
empties its finalizers.

When listening it writes FILE (atomically) with JSON:
  {"url", "ca", "client_cert", "client_key", "token", "kubeconfig", "pid",
   "port", "state"}
and DIR/kubeconfig with the contexts fake (token; the current one), cert
(client certificate files), fake-data (certificate-authority-data and the
token inline) and cert-data (all three PEMs inline).

Test control endpoints (same authentication as the API):
  POST /fake/faults   {"status": 401|403|404|409|429|500|503, "match": REGEX
                       on "METHOD PATH?QUERY", "count": N, "retry_after": S,
                       "message": optional}
                      {"drop_exec_after_bytes": N, "count": 1, "match": REGEX}
  GET /fake/faults    the faults still armed;  DELETE /fake/faults  disarm all
  POST /fake/evict/NS/NAME[?keep=S]  the pod turns Failed/Evicted (its
                      processes are killed) and is deleted S seconds later
                      (default 2)
  GET /fake/log       the request log, a JSON array of {"time", "method",
                      "path", "query", "status", "user"}, plus "subprotocol"
                      for an exec that was upgraded;  DELETE clears it
  GET /fake/pods/NS/NAME/pids  the pids whose root is that pod's root
"""

import argparse
import base64
import copy
import datetime
import errno
import fcntl
import hashlib
import hmac
import json
import os
import pty
import random
import re
import shutil
import signal
import socket
import ssl
import string
import struct
import subprocess
import sys
import termios
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

GROUP = "agents.x-k8s.io"
POD_NAME_ANN = GROUP + "/pod-name"
SB_VERSION = "v1beta1"
SB_API = GROUP + "/" + SB_VERSION
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
NODE = "fake-node"
PATH_ENV = "/usr/local/bin:/usr/bin:/bin"
MUTABLE_DIRS = ("etc", "tmp", "root", "home", "var", "run", "data")
DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

CFG = None      # argparse namespace
STORE = None    # Store
FAULTS = None   # Faults
REQLOG = None   # RequestLog
BASE_ROOT = None  # the root every pod root is made from
DEBUG = os.environ.get("FAKE_APISERVER_DEBUG") == "1"  # logs what exec clients send
EXEC_START_DELAY = float(os.environ.get("FAKE_APISERVER_EXEC_DELAY", "0.05"))


def log(msg):
    sys.stderr.write("fake-apiserver: %s\n" % msg)
    sys.stderr.flush()


def now_ts(t=None):
    t = time.time() if t is None else t
    return datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_ts(s):
    s = str(s).strip()
    if s[-1:] in ("Z", "z"):
        s = s[:-1] + "+00:00"
    d = datetime.datetime.fromisoformat(s)
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.timezone.utc)
    return d.timestamp()


def write_atomic(path, data):
    tmp = "%s.tmp.%d.%d" % (path, os.getpid(), threading.get_ident())
    with open(tmp, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.replace(tmp, path)


def human_age(seconds):
    s = max(0, int(seconds))
    if s < 120:
        return "%ds" % s
    m = s // 60
    if m < 10:
        return "%dm%ds" % (m, s % 60) if s % 60 else "%dm" % m
    if m < 180:
        return "%dm" % m
    h = m // 60
    if h < 48:
        return "%dh" % h
    return "%dd" % (h // 24)


# ---------------------------------------------------------------- errors

class ApiError(Exception):
    def __init__(self, code, reason, message, details=None, headers=None):
        Exception.__init__(self, message)
        self.code, self.reason, self.message = code, reason, message
        self.details, self.headers = details, headers or {}

    def status(self):
        st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            st["details"] = self.details
        return st


class Res:
    """What tells pods and sandboxes apart."""

    def __init__(self, kind, plural, group, version, short):
        self.kind, self.plural, self.group, self.version, self.short = kind, plural, group, version, short
        self.api_version = version if not group else group + "/" + version
        self.qualified = plural if not group else plural + "." + group

    def not_found(self, name):
        d = {"name": name, "kind": self.plural}
        if self.group:
            d["group"] = self.group
        return ApiError(404, "NotFound", '%s "%s" not found' % (self.qualified, name), d)

    def exists(self, name):
        d = {"name": name, "kind": self.plural}
        if self.group:
            d["group"] = self.group
        return ApiError(409, "AlreadyExists", '%s "%s" already exists' % (self.qualified, name), d)

    def invalid(self, name, field, causes_msg, value=None):
        msg = "%s: %s" % (field, causes_msg) if value is None else '%s: Invalid value: "%s": %s' % (field, value, causes_msg)
        d = {"name": name, "kind": self.kind, "causes": [
            {"reason": "FieldValueInvalid" if value is not None else "FieldValueRequired",
             "message": msg.split(": ", 1)[1], "field": field}]}
        if self.group:
            d["group"] = self.group
        return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (self.kind, name, msg), d)


PODS = Res("Pod", "pods", "", "v1", ["po"])
SANDBOXES = Res("Sandbox", "sandboxes", GROUP, SB_VERSION, ["sb"])


# ---------------------------------------------------------------- state

class Store:
    """Pods and sandboxes, kept in memory and as JSON files under the state dir."""

    def __init__(self, state):
        self.state = state
        self.cond = threading.Condition(threading.RLock())
        self.objs = {PODS: {}, SANDBOXES: {}}
        self.events = []  # (rv, res, type, obj)
        self.rv = 0
        rvfile = os.path.join(state, "resourceVersion")
        if os.path.exists(rvfile):
            self.rv = int(open(rvfile).read().strip() or 0)
        pods = os.path.join(state, "pods")
        for ns in sorted(os.listdir(pods)) if os.path.isdir(pods) else []:
            for name in sorted(os.listdir(os.path.join(pods, ns))):
                f = os.path.join(pods, ns, name, "pod.json")
                if os.path.exists(f):
                    self.objs[PODS][(ns, name)] = json.load(open(f))
        sbs = os.path.join(state, "sandboxes")
        for ns in sorted(os.listdir(sbs)) if os.path.isdir(sbs) else []:
            for fn in sorted(os.listdir(os.path.join(sbs, ns))):
                if fn.endswith(".json"):
                    self.objs[SANDBOXES][(ns, fn[:-5])] = json.load(open(os.path.join(sbs, ns, fn)))

    def pod_dir(self, ns, name):
        return os.path.join(self.state, "pods", ns, name)

    def pod_root(self, ns, name):
        return os.path.join(self.pod_dir(ns, name), "root")

    def _path(self, res, ns, name):
        if res is PODS:
            return os.path.join(self.pod_dir(ns, name), "pod.json")
        return os.path.join(self.state, "sandboxes", ns, name + ".json")

    def next_rv(self):
        self.rv += 1
        write_atomic(os.path.join(self.state, "resourceVersion"), str(self.rv))
        return str(self.rv)

    def get(self, res, ns, name):
        with self.cond:
            o = self.objs[res].get((ns, name))
            return copy.deepcopy(o) if o is not None else None

    def list(self, res, ns=None):
        with self.cond:
            return [copy.deepcopy(o) for (n, _), o in sorted(self.objs[res].items()) if ns is None or n == ns]

    def put(self, res, obj, etype):
        """Stores obj (ADDED or MODIFIED) with a new resourceVersion; returns a copy."""
        with self.cond:
            md = obj["metadata"]
            md["resourceVersion"] = self.next_rv()
            key = (md["namespace"], md["name"])
            path = self._path(res, *key)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_atomic(path, json.dumps(obj, indent=1))
            self.objs[res][key] = obj
            self._event(res, etype, obj)
            return copy.deepcopy(obj)

    def remove(self, res, ns, name):
        """Forgets the object (its file too); returns it, or None."""
        with self.cond:
            obj = self.objs[res].pop((ns, name), None)
            if obj is None:
                return None
            try:
                os.unlink(self._path(res, ns, name))
            except FileNotFoundError:
                pass
            obj["metadata"]["resourceVersion"] = self.next_rv()
            self._event(res, "DELETED", obj)
            return copy.deepcopy(obj)

    def _event(self, res, etype, obj):
        self.events.append((int(obj["metadata"]["resourceVersion"]), res, etype, copy.deepcopy(obj)))
        if len(self.events) > 20000:
            del self.events[:5000]
        self.cond.notify_all()


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.items = []

    def add(self, f):
        if "status" not in f and "drop_exec_after_bytes" not in f:
            raise ApiError(400, "BadRequest", "a fault needs status or drop_exec_after_bytes")
        f = dict(f)
        f.setdefault("count", 1)
        f.setdefault("match", "/exec" if "drop_exec_after_bytes" in f else ".")
        re.compile(f["match"])
        with self.lock:
            self.items.append(f)

    def take(self, line, kind):
        """kind: "status" or "drop"; consumes one count of the first match."""
        with self.lock:
            for f in self.items:
                if (kind == "status") != ("status" in f):
                    continue
                if re.search(f["match"], line):
                    f["count"] -= 1
                    if f["count"] <= 0:
                        self.items.remove(f)
                    return dict(f)
        return None


class RequestLog:
    def __init__(self):
        self.lock = threading.Lock()
        self.items = []

    def add(self, e):
        with self.lock:
            self.items.append(e)
            if len(self.items) > 20000:
                del self.items[:5000]


# ---------------------------------------------------------------- pod roots

def make_busybox_base(dest):
    """Without --rootfs: a root of busybox applets, built once per state dir."""
    if os.path.exists(os.path.join(dest, ".complete")):
        return
    tmp = dest + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for d in ("bin", "etc", "tmp", "root", "home/user", "dev", "proc", "usr/bin", "usr/local/bin"):
        os.makedirs(os.path.join(tmp, d), exist_ok=True)
    os.chmod(os.path.join(tmp, "tmp"), 0o1777)
    os.chmod(os.path.join(tmp, "root"), 0o700)
    os.chown(os.path.join(tmp, "home/user"), 1000, 1000)
    bb = shutil.which("busybox") or "/bin/busybox"
    shutil.copy2(bb, os.path.join(tmp, "bin/busybox"))
    out = subprocess.run([bb, "--list"], capture_output=True, text=True).stdout.split()
    for applet in out:
        p = os.path.join(tmp, "bin", applet)
        if not os.path.lexists(p):
            os.symlink("busybox", p)
    with open(os.path.join(tmp, "etc/passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\n"
                "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
    with open(os.path.join(tmp, "etc/group"), "w") as f:
        f.write("root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n")
    open(os.path.join(tmp, ".complete"), "w").close()
    shutil.rmtree(dest, ignore_errors=True)
    os.rename(tmp, dest)


DEVICES = (("null", 1, 3), ("zero", 1, 5), ("full", 1, 7), ("random", 1, 8), ("urandom", 1, 9), ("tty", 5, 0))


# Images whose pod root has no python3, as the real ones have none
# (debian:12-slim, alpine): the root's python3 is left out.
PYTHONLESS_IMAGES = ("debian", "alpine")


def make_pod_root(root, python=True):
    """Hard links (cp -al) for the read-only bulk, real copies of the small
    mutable directories, and device nodes in /dev; without python3 when
    python is false."""
    parent = os.path.dirname(root)
    os.makedirs(parent, exist_ok=True)
    tmp = root + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.mkdir(tmp)
    os.chmod(tmp, 0o755)
    linked, copied = [], []
    for e in sorted(os.listdir(BASE_ROOT)):
        if e == ".complete":
            continue
        (copied if e in MUTABLE_DIRS else linked).append(os.path.join(BASE_ROOT, e))
    for flag, srcs in (("-al", linked), ("-a", copied)):
        if srcs:
            r = subprocess.run(["cp", flag] + srcs + [tmp + "/"], capture_output=True, text=True)
            if r.returncode != 0 and flag == "-al":  # another filesystem: copy
                r = subprocess.run(["cp", "-a"] + srcs + [tmp + "/"], capture_output=True, text=True)
            if r.returncode != 0:
                raise ApiError(500, "InternalError", "cannot make the pod root: " + r.stderr.strip())
    dev = os.path.join(tmp, "dev")
    os.makedirs(dev, exist_ok=True)
    for name, ma, mi in DEVICES:
        p = os.path.join(dev, name)
        if not os.path.lexists(p):
            try:
                os.mknod(p, 0o666 | 0o020000, os.makedev(ma, mi))
                os.chmod(p, 0o666)
            except OSError:
                pass
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        p = os.path.join(dev, name)
        if not os.path.lexists(p):
            os.symlink(target, p)
    for d in ("tmp",):
        os.makedirs(os.path.join(tmp, d), exist_ok=True)
        os.chmod(os.path.join(tmp, d), 0o1777)
    if not python:
        for d in ("usr/bin", "usr/local/bin", "bin"):
            dp = os.path.join(tmp, d)
            for e in os.listdir(dp) if os.path.isdir(dp) else ():
                if e.startswith("python"):
                    os.unlink(os.path.join(dp, e))
    unmount_under(root)
    shutil.rmtree(root, ignore_errors=True)
    os.rename(tmp, root)
    mount_pseudo(root)


def mount_pseudo(root):
    """A procfs (the supervisor reads /proc/self/fd and /proc/PID/stat) and
    a private devpts (tty tasks) in the pod root, as a runtime gives every
    container. Root only; without them the pod simply lacks both."""
    if os.geteuid() != 0:
        return
    proc = os.path.join(root, "proc")
    os.makedirs(proc, exist_ok=True)
    subprocess.run(["mount", "-t", "proc", "proc", proc], capture_output=True)
    pts = os.path.join(root, "dev", "pts")
    os.makedirs(pts, exist_ok=True)
    r = subprocess.run(["mount", "-t", "devpts", "-o", "newinstance,ptmxmode=0666,mode=0620",
                        "devpts", pts], capture_output=True)
    if r.returncode == 0:
        ptmx = os.path.join(root, "dev", "ptmx")
        if os.path.lexists(ptmx):
            os.remove(ptmx)
        os.symlink("pts/ptmx", ptmx)


def unmount_under(path):
    """Lazily unmounts every mount at or below path, deepest first, so that
    removing the tree never descends into a procfs or devpts."""
    prefix = os.path.realpath(path)
    try:
        with open("/proc/self/mounts") as f:
            points = [line.split()[1] for line in f]
    except OSError:
        return
    points = [p for p in points if p == prefix or p.startswith(prefix + "/")]
    for p in sorted(points, key=len, reverse=True):
        subprocess.run(["umount", "-l", p], capture_output=True)


def pids_in_root(root):
    root = os.path.realpath(root)
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            r = os.readlink("/proc/%s/root" % p)
        except OSError:
            continue
        if r.endswith(" (deleted)"):
            r = r[:-10]
        if r == root or r.startswith(root + "/"):
            out.append(int(p))
    return out


def kill_root(root, sig=signal.SIGKILL, rounds=20):
    for _ in range(rounds):
        pids = pids_in_root(root)
        if not pids:
            return
        for p in pids:
            try:
                os.kill(p, sig)
            except OSError:
                pass
        time.sleep(0.05)


def retire_root(ns, name, uid, grace):
    """Moves the pod's directory away at once (the name may be reused), then
    SIGTERM, up to min(grace, 5) s, SIGKILL, and removal, in the background."""
    src = STORE.pod_dir(ns, name)
    if not os.path.isdir(src):
        return
    trash = os.path.join(CFG.state, "trash", "%s-%s" % (uid or uuid.uuid4(), int(time.time() * 1000)))
    os.makedirs(os.path.dirname(trash), exist_ok=True)
    pids = pids_in_root(os.path.join(src, "root"))
    os.rename(src, trash)

    def finish():
        if grace > 0 and pids:
            for p in pids:
                try:
                    os.kill(p, signal.SIGTERM)
                except OSError:
                    pass
            end = time.time() + min(grace, 5)
            while time.time() < end and pids_in_root(os.path.join(trash, "root")):
                time.sleep(0.1)
        kill_root(os.path.join(trash, "root"))
        unmount_under(trash)
        shutil.rmtree(trash, ignore_errors=True)

    if grace > 0:
        threading.Thread(target=finish, daemon=True).start()
    else:
        finish()


# ---------------------------------------------------------------- objects

def pod_container_statuses(pod, state):
    out = []
    for c in pod["spec"].get("containers", []):
        cs = {"name": c.get("name"), "image": c.get("image"), "imageID": "",
              "restartCount": 0, "ready": False, "started": False, "state": state,
              "lastState": {}}
        if "running" in state:
            cs.update(ready=True, started=True, containerID="containerd://" + hashlib.sha256(
                (pod["metadata"]["uid"] + c.get("name", "")).encode()).hexdigest(),
                imageID="docker.io/%s@sha256:%s" % (c.get("image"), hashlib.sha256(c.get("image", "").encode()).hexdigest()))
        out.append(cs)
    return out


def cond(ctype, status, reason=None, message=None, t=None):
    c = {"type": ctype, "status": status, "lastProbeTime": None, "lastTransitionTime": t or now_ts()}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def image_base(image):
    i = image or ""
    if "@" in i:
        i = i.split("@")[0]
    last = i.rsplit("/", 1)[-1]
    if ":" in last:
        i = i[: len(i) - len(last)] + last.split(":")[0]
    for p in ("docker.io/library/", "docker.io/"):
        if i.startswith(p):
            i = i[len(p):]
    return i


def pod_initial_status(pod):
    t = now_ts()
    images = [image_base(c.get("image")) for c in pod["spec"].get("containers", [])]
    ip = "10.244.%d.%d" % (random.randint(0, 255), random.randint(2, 254))
    if "fake/unschedulable" in images:
        pod["spec"].pop("nodeName", None)
        return {"phase": "Pending", "qosClass": "BestEffort", "conditions": [
            cond("PodScheduled", "False", "Unschedulable",
                 "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                 "1 No preemption victims found for incoming pod.", t)]}
    st = {"hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}], "podIP": ip, "podIPs": [{"ip": ip}],
          "startTime": t, "qosClass": "BestEffort"}
    if "fake/pull-error" in images:
        img = [c.get("image") for c in pod["spec"]["containers"] if image_base(c.get("image")) == "fake/pull-error"][0]
        st["phase"] = "Pending"
        st["conditions"] = [cond("PodReadyToStartContainers", "True", t=t), cond("Initialized", "True", t=t),
                            cond("Ready", "False", "ContainersNotReady", "containers with unready status: [%s]" %
                                 " ".join(c["name"] for c in pod["spec"]["containers"]), t),
                            cond("ContainersReady", "False", "ContainersNotReady", None, t),
                            cond("PodScheduled", "True", t=t)]
        st["containerStatuses"] = pod_container_statuses(pod, {"waiting": {
            "reason": "ErrImagePull",
            "message": 'failed to pull and unpack image "docker.io/%s": failed to resolve reference '
                       '"docker.io/%s": pull access denied, repository does not exist or may require '
                       'authorization: server message: insufficient_scope: authorization failed' % (img, img)}})
        return st
    st["phase"] = "Running"
    st["conditions"] = [cond("PodReadyToStartContainers", "True", t=t), cond("Initialized", "True", t=t),
                        cond("Ready", "True", t=t), cond("ContainersReady", "True", t=t),
                        cond("PodScheduled", "True", t=t)]
    st["containerStatuses"] = pod_container_statuses(pod, {"running": {"startedAt": t}})
    return st


def pod_fail(pod, reason, message, exit_code=137, cs_reason="Error"):
    """Turns a pod Failed (in place): conditions false, containers terminated."""
    t = now_ts()
    st = pod.setdefault("status", {})
    st["phase"] = "Failed"
    st["reason"] = reason
    st["message"] = message
    for c in st.get("conditions", []):
        if c["type"] in ("Ready", "ContainersReady"):
            c.update(status="False", reason="PodFailed", lastTransitionTime=t)
    started = st.get("startTime", t)
    st["containerStatuses"] = pod_container_statuses(pod, {"terminated": {
        "exitCode": exit_code, "reason": cs_reason, "startedAt": started, "finishedAt": t}})
    for cs in st["containerStatuses"]:
        cs["containerID"] = "containerd://" + hashlib.sha256((pod["metadata"]["uid"] + cs["name"]).encode()).hexdigest()


def validate_meta(res, obj, ns):
    md = obj.setdefault("metadata", {})
    if not isinstance(md, dict):
        raise ApiError(400, "BadRequest", "metadata must be an object")
    if not md.get("name") and md.get("generateName"):
        md["name"] = md["generateName"] + "".join(random.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
    name = md.get("name") or ""
    if not name:
        raise res.invalid("", "metadata.name", "Required value: name or generateName is required")
    if len(name) > 253 or not DNS1123_SUB.match(name) or (res is SANDBOXES and len(name) > 63):
        raise res.invalid(name, "metadata.name", "a lowercase RFC 1123 subdomain must consist of lower case "
                          "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                          "character (e.g. 'example.com', regex used for validation is "
                          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')", name)
    if md.get("namespace") and md["namespace"] != ns:
        raise ApiError(400, "BadRequest", "the namespace of the provided object does not match the "
                       "namespace sent on the request")
    md["namespace"] = ns
    for k in ("labels", "annotations"):
        if md.get(k) is not None and not isinstance(md[k], dict):
            raise res.invalid(name, "metadata." + k, "must be a map")
        for lk, lv in (md.get(k) or {}).items():
            if not isinstance(lv, str):
                raise ApiError(400, "BadRequest", "json: cannot unmarshal %s into Go struct field "
                               "ObjectMeta.metadata.%s of type string" % (type(lv).__name__, k))
    md["uid"] = str(uuid.uuid4())
    md["creationTimestamp"] = now_ts()
    md.pop("resourceVersion", None)
    md.pop("deletionTimestamp", None)
    if res is SANDBOXES:
        md["generation"] = 1
    return name


def default_pod(pod, name):
    spec = pod.get("spec")
    if not isinstance(spec, dict) or not spec.get("containers"):
        raise PODS.invalid(name, "spec.containers", "Required value")
    seen = set()
    for i, c in enumerate(spec["containers"]):
        if not c.get("name"):
            raise PODS.invalid(name, "spec.containers[%d].name" % i, "Required value")
        if c["name"] in seen:
            raise PODS.invalid(name, "spec.containers[%d].name" % i, "Duplicate value", c["name"])
        seen.add(c["name"])
        if not c.get("image"):
            raise PODS.invalid(name, "spec.containers[%d].image" % i, "Required value")
        tag = c["image"].rsplit("/", 1)[-1]
        c.setdefault("imagePullPolicy", "IfNotPresent" if ":" in tag and not tag.endswith(":latest") else "Always")
        c.setdefault("resources", {})
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
    ads = spec.get("activeDeadlineSeconds")
    if ads is not None and (not isinstance(ads, int) or ads <= 0):
        raise PODS.invalid(name, "spec.activeDeadlineSeconds", "must be between 1 and 2147483647, inclusive", ads)
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    spec["nodeName"] = NODE


def create_pod_locked(pod):
    """Creates a pod that passed validation (STORE.cond held); returns it."""
    md = pod["metadata"]
    ns, name = md["namespace"], md["name"]
    if STORE.objs[PODS].get((ns, name)) is not None:
        raise PODS.exists(name)
    pod["status"] = pod_initial_status(pod)
    pod.setdefault("kind", "Pod")
    pod["apiVersion"] = "v1"
    images = [image_base(c.get("image")) for c in pod["spec"].get("containers", [])]
    make_pod_root(STORE.pod_root(ns, name),
                  python=not any(i in PYTHONLESS_IMAGES for i in images))
    return STORE.put(PODS, pod, "ADDED")


def delete_pod_locked(ns, name, grace=None):
    pod = STORE.objs[PODS].get((ns, name))
    if pod is None:
        raise PODS.not_found(name)
    if grace is None:
        grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
    gone = STORE.remove(PODS, ns, name)
    retire_root(ns, name, gone["metadata"].get("uid"), grace)
    gone["metadata"]["deletionTimestamp"] = now_ts()
    gone["metadata"]["deletionGracePeriodSeconds"] = grace
    # the owned pods of a deleted sandbox go with it: nothing else owns pods here
    return gone


# ---------------------------------------------------------------- sandboxes

def sb_selector_hash(name):
    return hashlib.sha256(name.encode()).hexdigest()[:8]


def sb_pod_from_template(sb, generate=False):
    """The pod of a Sandbox: named like it, or (generate) NAME-xxxxx."""
    md = sb["metadata"]
    tmpl = sb["spec"].get("podTemplate") or {}
    tmd = tmpl.get("metadata") or {}
    labels = dict(tmd.get("labels") or {})
    labels["agents.x-k8s.io/sandbox-name-hash"] = sb_selector_hash(md["name"])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "namespace": md["namespace"], "labels": labels,
        "annotations": dict(tmd.get("annotations") or {}),
        "ownerReferences": [{"apiVersion": SB_API, "kind": "Sandbox", "name": md["name"], "uid": md["uid"],
                             "controller": True, "blockOwnerDeletion": True}]},
        "spec": copy.deepcopy(tmpl.get("spec") or {})}
    if generate:
        pod["metadata"]["generateName"] = md["name"] + "-"
    else:
        pod["metadata"]["name"] = md["name"]
    name = validate_meta(PODS, pod, md["namespace"])
    default_pod(pod, name)
    return pod


def sb_owns(sb, pod):
    return any(o.get("uid") == sb["metadata"]["uid"] and o.get("controller")
               for o in pod["metadata"].get("ownerReferences", []))


def sb_owned_pods(sb):
    ns = sb["metadata"]["namespace"]
    return [p for (n, _), p in sorted(STORE.objs[PODS].items()) if n == ns and sb_owns(sb, p)]


def sb_set_cond(conds, ctype, status, reason, message, gen):
    for c in conds:
        if c["type"] == ctype:
            if (c["status"], c.get("reason"), c.get("message")) != (status, reason, message):
                c.update(status=status, reason=reason, message=message, lastTransitionTime=now_ts())
            c["observedGeneration"] = gen
            return
    conds.append({"type": ctype, "status": status, "reason": reason, "message": message,
                  "observedGeneration": gen, "lastTransitionTime": now_ts()})


def reconcile_sandbox_locked(key, adopt=False):
    """One pass of the Sandbox controller. The pod is the one the annotation
    agents.x-k8s.io/pod-name names, else the one named like the Sandbox (an
    owned pod wins over a stale annotation); the annotation is cleared when
    that pod is gone or the Sandbox suspended, and set to the pod's name
    once it exists, as agent-sandbox does since v0.3.10. A pod the
    controller makes is named like the Sandbox, but with adopt (the first
    pass under --sandbox-pod-names generated) NAME-xxxxx: the name a pod
    adopted from an agent-sandbox v0.1/v0.2 warm pool has."""
    sb = STORE.objs[SANDBOXES].get(key)
    if sb is None:
        return
    ns, name = key
    spec = sb.get("spec") or {}
    gen = sb["metadata"].get("generation", 1)
    ann = dict(sb["metadata"].get("annotations") or {})
    pod = STORE.objs[PODS].get((ns, ann.get(POD_NAME_ANN) or name))
    owned = pod is not None and sb_owns(sb, pod)
    if not owned:
        mine = sb_owned_pods(sb)
        if mine:
            pod, owned = mine[0], True
    if pod is None or owned and ann.get(POD_NAME_ANN, pod["metadata"]["name"]) != pod["metadata"]["name"]:
        ann.pop(POD_NAME_ANN, None)
    st = copy.deepcopy(sb.get("status") or {})
    conds = st.setdefault("conditions", [])
    expired = False
    if spec.get("shutdownTime"):
        try:
            expired = time.time() >= parse_ts(spec["shutdownTime"])
        except ValueError:
            expired = False
    if expired:
        if owned:
            delete_pod_locked(ns, pod["metadata"]["name"], 0)
        if spec.get("shutdownPolicy") == "Delete":
            STORE.remove(SANDBOXES, ns, name)
            return
        sb_set_cond(conds, "Ready", "False", "SandboxExpired", "Sandbox has expired", gen)
        st.pop("podIPs", None)
    elif spec.get("operatingMode") == "Suspended":
        if owned:
            delete_pod_locked(ns, pod["metadata"]["name"], 0)
        ann.pop(POD_NAME_ANN, None)
        sb_set_cond(conds, "Ready", "False", "SandboxSuspended", "Sandbox is suspended", gen)
        sb_set_cond(conds, "Suspended", "True", "PodTerminated", "Pod is terminated", gen)
        st.pop("podIPs", None)
    else:
        if pod is None:
            try:
                pod = create_pod_locked(sb_pod_from_template(sb, generate=adopt))
                owned = True
            except ApiError as e:
                sb_set_cond(conds, "Ready", "False", "ReconcilerError", e.message, gen)
        if pod is not None and not owned:
            sb_set_cond(conds, "Ready", "False", "ReconcilerError",
                        'pod "%s" exists and is not owned by the sandbox' % pod["metadata"]["name"], gen)
        elif pod is not None:
            ann.setdefault(POD_NAME_ANN, pod["metadata"]["name"])
            phase = pod.get("status", {}).get("phase")
            ready = any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions", []))
            if phase == "Failed":
                sb_set_cond(conds, "Ready", "False", "PodFailed", "Pod has failed", gen)
            elif phase == "Succeeded":
                sb_set_cond(conds, "Ready", "False", "PodSucceeded", "Pod has succeeded", gen)
            elif ready:
                sb_set_cond(conds, "Ready", "True", "DependenciesReady", "Pod is Ready", gen)
            else:
                sb_set_cond(conds, "Ready", "False", "DependenciesNotReady", "Pod is not Ready", gen)
            sb_set_cond(conds, "Suspended", "False", "PodRunning", "Pod is not suspended", gen)
            ps = [c for c in pod["status"].get("conditions", []) if c["type"] == "PodScheduled"]
            if ps:
                sb_set_cond(conds, "PodScheduled", ps[0]["status"], ps[0].get("reason") or "PodScheduled",
                            ps[0].get("message") or "", gen)
            if pod["status"].get("podIPs"):
                st["podIPs"] = [i["ip"] for i in pod["status"]["podIPs"]]
            if pod["spec"].get("nodeName"):
                st["nodeName"] = pod["spec"]["nodeName"]
    st["selector"] = "agents.x-k8s.io/sandbox-name-hash=" + sb_selector_hash(name)
    st["service"] = name
    st["serviceFQDN"] = "%s.%s.svc.cluster.local" % (name, ns)
    if st != sb.get("status") or ann != (sb["metadata"].get("annotations") or {}):
        sb = copy.deepcopy(sb)
        sb["status"] = st
        if ann or "annotations" in sb["metadata"]:
            sb["metadata"]["annotations"] = ann
        STORE.put(SANDBOXES, sb, "MODIFIED")


def controller_loop():
    while True:
        time.sleep(0.2)
        try:
            with STORE.cond:
                now = time.time()
                for key, pod in list(STORE.objs[PODS].items()):
                    st = pod.get("status", {})
                    ev = pod["metadata"].get("annotations", {}).get("fake.taskbox.dev/delete-at")
                    if ev and now >= float(ev):
                        delete_pod_locked(key[0], key[1], 0)
                        continue
                    ads = pod["spec"].get("activeDeadlineSeconds")
                    if ads and st.get("phase") in ("Running", "Pending") and st.get("startTime"):
                        if now >= parse_ts(st["startTime"]) + ads:
                            p = copy.deepcopy(pod)
                            pod_fail(p, "DeadlineExceeded", "Pod was active on the node longer than the "
                                     "specified deadline")
                            kill_root(STORE.pod_root(*key))
                            STORE.put(PODS, p, "MODIFIED")
                for key in list(STORE.objs[SANDBOXES].keys()):
                    reconcile_sandbox_locked(key)
                # garbage collection: pods owned by sandboxes that are gone
                uids = {s["metadata"]["uid"] for s in STORE.objs[SANDBOXES].values()}
                for key, pod in list(STORE.objs[PODS].items()):
                    refs = [o for o in pod["metadata"].get("ownerReferences", []) if o.get("kind") == "Sandbox"]
                    if refs and not any(o.get("uid") in uids for o in refs):
                        delete_pod_locked(key[0], key[1], 0)
        except Exception:
            traceback.print_exc()


# ---------------------------------------------------------------- selectors, patches, tables

def split_top(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return [x.strip() for x in out if x.strip()]


def label_matcher(sel):
    tests = []
    for term in split_top(sel or ""):
        m = re.match(r"^([^!=\s]+)\s+(in|notin)\s+\((.*)\)$", term)
        if m:
            vals = {v.strip() for v in m.group(3).split(",")}
            k, op = m.group(1), m.group(2)
            tests.append(lambda l, k=k, op=op, vals=vals: (l.get(k) in vals) if op == "in" else (l.get(k) not in vals))
            continue
        m = re.match(r"^([^!=]+?)\s*(==|=|!=)\s*(.*)$", term)
        if m:
            k, op, v = m.group(1).strip(), m.group(2), m.group(3).strip()
            tests.append(lambda l, k=k, op=op, v=v: (l.get(k) != v) if op == "!=" else (l.get(k) == v))
            continue
        if term.startswith("!"):
            tests.append(lambda l, k=term[1:].strip(): k not in l)
        elif re.match(r"^[A-Za-z0-9./_-]+$", term):
            tests.append(lambda l, k=term: k in l)
        else:
            raise ApiError(400, "BadRequest", "unable to parse requirement: invalid label selector: %r" % term)
    return lambda obj: all(t(obj.get("metadata", {}).get("labels") or {}) for t in tests)


def field_matcher(sel):
    tests = []
    for term in split_top(sel or ""):
        m = re.match(r"^([^!=]+?)\s*(==|=|!=)\s*(.*)$", term)
        if not m:
            raise ApiError(400, "BadRequest", 'invalid field selector: "%s"' % term)
        path, op, v = m.group(1).strip(), m.group(2), m.group(3).strip()

        def get(o, path=path):
            for p in path.split("."):
                o = o.get(p) if isinstance(o, dict) else None
            return "" if o is None else str(o)
        tests.append(lambda o, get=get, op=op, v=v: (get(o) != v) if op == "!=" else (get(o) == v))
    return lambda obj: all(t(obj) for t in tests)


def page(items, q):
    """One page of a LIST: limit=N (capped by --list-page-cap) and the
    continue token of the page before, as an apiserver pages from etcd: the
    token is opaque to clients and names the last key served. Returns the
    page and its list metadata (continue, remainingItemCount) when more
    remain."""
    cont = qstr(q, "continue")
    if cont:
        try:
            tok = json.loads(base64.urlsafe_b64decode(cont.encode()).decode())
            after = (tok["ns"], tok["name"])
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            raise ApiError(400, "BadRequest", "continue key is not valid: illegal base64 data")
        items = [o for o in items if (o["metadata"]["namespace"], o["metadata"]["name"]) > after]
    try:
        limit = int(qstr(q, "limit", "0") or 0)
    except ValueError:
        raise ApiError(400, "BadRequest", "limit must be an integer")
    if CFG.list_page_cap and limit > CFG.list_page_cap:
        limit = CFG.list_page_cap
    if limit <= 0 or len(items) <= limit:
        return items, {}
    last = items[limit - 1]["metadata"]
    tok = base64.urlsafe_b64encode(json.dumps({"ns": last["namespace"], "name": last["name"],
                                               "rv": STORE.rv}).encode()).decode()
    return items[:limit], {"continue": tok, "remainingItemCount": len(items) - limit}


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def json_patch(doc, ops):
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise ApiError(400, "BadRequest", "json patch must be a list")

    def walk(path, create=False):
        parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
        cur = doc
        for p in parts[:-1]:
            cur = cur[int(p)] if isinstance(cur, list) else cur[p]
        return cur, parts[-1]
    for op in ops:
        try:
            o, path = op.get("op"), op.get("path", "")
            if o == "test":
                c, k = walk(path)
                if (c[int(k)] if isinstance(c, list) else c.get(k)) != op.get("value"):
                    raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request")
                continue
            c, k = walk(path)
            if o in ("add", "replace"):
                if isinstance(c, list):
                    if k == "-":
                        c.append(op["value"])
                    elif o == "add":
                        c.insert(int(k), op["value"])
                    else:
                        c[int(k)] = op["value"]
                else:
                    if o == "replace" and k not in c:
                        raise KeyError(k)
                    c[k] = op["value"]
            elif o == "remove":
                if isinstance(c, list):
                    del c[int(k)]
                else:
                    del c[k]
            else:
                raise ApiError(400, "BadRequest", "unsupported json patch op %r" % o)
        except (KeyError, IndexError, ValueError, TypeError, AttributeError):
            raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request")
    return doc


def pod_display_status(p):
    if p["metadata"].get("deletionTimestamp"):
        return "Terminating"
    st = p.get("status", {})
    if st.get("reason"):
        return st["reason"]
    for cs in st.get("containerStatuses", []):
        w = cs.get("state", {}).get("waiting")
        if w and w.get("reason"):
            return w["reason"]
    return st.get("phase", "Unknown")


def table(res, objs, include):
    now = time.time()
    if res is PODS:
        cols = [("Name", "string", "name", 0), ("Ready", "string", "", 0), ("Status", "string", "", 0),
                ("Restarts", "string", "", 0), ("Age", "string", "", 0), ("IP", "string", "", 1),
                ("Node", "string", "", 1), ("Nominated Node", "string", "", 1), ("Readiness Gates", "string", "", 1)]
    else:
        cols = [("Name", "string", "name", 0), ("Ready", "string", "", 0), ("Reason", "string", "", 0),
                ("Age", "date", "", 0)]
    rows = []
    for o in objs:
        md = o["metadata"]
        age = human_age(now - parse_ts(md["creationTimestamp"]))
        if res is PODS:
            css = o.get("status", {}).get("containerStatuses", [])
            cells = [md["name"], "%d/%d" % (sum(1 for c in css if c.get("ready")), len(o["spec"]["containers"])),
                     pod_display_status(o), 0, age, o.get("status", {}).get("podIP") or "<none>",
                     o["spec"].get("nodeName") or "<none>", "<none>", "<none>"]
        else:
            rc = [c for c in o.get("status", {}).get("conditions", []) if c["type"] == "Ready"]
            cells = [md["name"], rc[0]["status"] if rc else "", rc[0].get("reason", "") if rc else "", age]
        row = {"cells": cells}
        if include == "Object":
            row["object"] = o
        elif include != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": md}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": str(STORE.rv)},
            "columnDefinitions": [{"name": n, "type": t, "format": f, "description": n, "priority": p}
                                  for n, t, f, p in cols], "rows": rows}


# ---------------------------------------------------------------- discovery

def discovery(path, port):
    if path == "/version":
        return {"major": "1", "minor": "33", "gitVersion": "v1.33.0-fake", "gitCommit": "0" * 40,
                "gitTreeState": "clean", "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.24.0",
                "compiler": "gc", "platform": "linux/amd64"}
    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:%d" % port}]}
    gv = {"groupVersion": SB_API, "version": SB_VERSION}
    group = {"name": GROUP, "versions": [gv], "preferredVersion": gv}
    if path == "/apis":
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [group]}
    if path == "/apis/" + GROUP:
        return dict(group, kind="APIGroup", apiVersion="v1")
    verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    if path == "/api/v1":
        return {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
            {"name": "namespaces", "singularName": "namespace", "namespaced": False, "kind": "Namespace",
             "verbs": ["get", "list"], "shortNames": ["ns"]},
            {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod", "verbs": verbs,
             "shortNames": ["po"], "categories": ["all"]},
            {"name": "pods/exec", "singularName": "", "namespaced": True, "kind": "PodExecOptions",
             "verbs": ["create", "get"]},
            {"name": "pods/status", "singularName": "", "namespaced": True, "kind": "Pod",
             "verbs": ["get", "patch", "update"]}]}
    if path == "/apis/" + SB_API:
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": SB_API, "resources": [
            {"name": "sandboxes", "singularName": "sandbox", "namespaced": True, "kind": "Sandbox",
             "verbs": verbs, "shortNames": ["sb"]},
            {"name": "sandboxes/status", "singularName": "", "namespaced": True, "kind": "Sandbox",
             "verbs": ["get", "patch", "update"]}]}
    return None


# ---------------------------------------------------------------- WebSocket exec

class WSClosed(Exception):
    pass


class ExecSession:
    def __init__(self, handler, root, argv, env, uid, gid, groups, opts, proto, drop_after):
        self.h = handler
        self.sock = handler.connection
        self.rfile = handler.rfile
        self.root, self.argv, self.env = root, argv, env
        self.uid, self.gid, self.groups = uid, gid, groups
        self.stdin, self.stdout, self.stderr, self.tty = opts
        self.v5 = proto.startswith("v5")
        self.drop_after = drop_after
        self.sent = 0
        self.wlock = threading.Lock()
        self.dead = threading.Event()
        self.wake = threading.Event()
        self.client_closed = threading.Event()
        self.close_sent = False
        self.stdin_fd = None
        self.stdin_lock = threading.Lock()
        self.master = None

    # framing
    def send_frame(self, opcode, payload=b""):
        n = len(payload)
        if n < 126:
            hdr = struct.pack("!BB", 0x80 | opcode, n)
        elif n < 65536:
            hdr = struct.pack("!BBH", 0x80 | opcode, 126, n)
        else:
            hdr = struct.pack("!BBQ", 0x80 | opcode, 127, n)
        with self.wlock:
            if self.close_sent:
                return
            if opcode == 8:
                self.close_sent = True
            self.sock.sendall(hdr + payload)

    def read_exact(self, n):
        b = self.rfile.read(n) if n else b""
        if len(b) < n:
            raise WSClosed()
        return b

    def recv_frame(self):
        b0, b1 = self.read_exact(2)
        fin, op = b0 & 0x80, b0 & 0x0F
        if b0 & 0x70:
            raise WSClosed()  # no extensions were negotiated
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self.read_exact(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self.read_exact(8))[0]
        if not b1 & 0x80:
            raise WSClosed()  # client frames must be masked
        key = self.read_exact(4)
        data = self.read_exact(n)
        if n:
            mask = (key * (n // 4 + 1))[:n]
            data = (int.from_bytes(data, "big") ^ int.from_bytes(mask, "big")).to_bytes(n, "big")
        return bool(fin), op, data

    def mark_dead(self):
        self.dead.set()
        self.wake.set()
        self.close_stdin()

    def abort(self):
        """Drops the TCP connection without a close frame (a fault)."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            socket.socket.shutdown(self.sock, socket.SHUT_RDWR)
        except OSError:
            pass
        self.mark_dead()

    def send_data(self, ch, data):
        if self.dead.is_set():
            return
        if self.drop_after is not None:
            room = self.drop_after - self.sent
            if len(data) >= room:
                if room > 0:
                    try:
                        self.send_frame(2, bytes([ch]) + data[:room])
                    except OSError:
                        pass
                self.sent += room
                self.abort()
                return
        try:
            self.send_frame(2, bytes([ch]) + data)
            self.sent += len(data)
        except OSError:
            self.mark_dead()

    def close_stdin(self):
        with self.stdin_lock:
            if self.stdin_fd is not None:
                try:
                    os.close(self.stdin_fd)
                except OSError:
                    pass
                self.stdin_fd = None

    def write_stdin(self, data):
        with self.stdin_lock:
            fd = self.stdin_fd
            if fd is None:
                return
            try:
                while data:
                    n = os.write(fd, data)
                    data = data[n:]
            except OSError:
                pass

    # threads
    def reader(self):
        msg, mop = b"", None
        try:
            while True:
                fin, op, data = self.recv_frame()
                if op == 9:
                    self.send_frame(10, data)
                    continue
                if op == 10:
                    continue
                if op == 8:
                    self.client_closed.set()
                    try:
                        self.send_frame(8, data[:2] if len(data) >= 2 else b"")
                    except OSError:
                        pass
                    break
                if op == 0:
                    msg += data
                else:
                    msg, mop = data, op
                if not fin:
                    continue
                self.on_message(msg)
                msg = b""
        except (WSClosed, OSError, ValueError):
            pass
        if not self.finished:
            self.mark_dead()  # the client went away before the command ended
        self.client_closed.set()

    def on_message(self, msg):
        if not msg:
            return
        ch, data = msg[0], msg[1:]
        if DEBUG:
            log("exec <- channel %d: %r" % (ch, data[:80]))
        if ch == 0:
            if self.tty and self.master is not None:
                try:
                    os.write(self.master, data)
                except OSError:
                    pass
            else:
                self.write_stdin(data)
        elif ch == 4 and self.tty and self.master is not None:
            try:
                sz = json.loads(data.decode() or "{}")
                fcntl.ioctl(self.master, termios.TIOCSWINSZ,
                            struct.pack("HHHH", int(sz.get("Height", 24)), int(sz.get("Width", 80)), 0, 0))
            except (ValueError, OSError, TypeError):
                pass
        elif ch == 255 and self.v5 and data[:1] == b"\x00":
            if self.tty and self.master is not None:
                try:
                    os.write(self.master, b"\x04")
                except OSError:
                    pass
            self.close_stdin()

    def pump(self, fd, ch):
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                data = b""  # EIO: the pty's other side is gone
            if not data:
                break
            self.send_data(ch, data)
        try:
            os.close(fd)
        except OSError:
            pass

    def spawn(self):
        root, uid, gid, groups, tty = self.root, self.uid, self.gid, self.groups, self.tty

        def pre():
            os.chroot(root)
            os.chdir("/")
            os.umask(0o022)
            if uid != 0 or gid != 0 or groups:
                os.setgroups(groups)
                os.setgid(gid)
                os.setuid(uid)
            if tty:
                fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        if tty:
            self.master, slave = pty.openpty()
            fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
            try:
                proc = subprocess.Popen(self.argv, env=self.env, preexec_fn=pre, start_new_session=True,
                                        stdin=slave, stdout=slave, stderr=slave, close_fds=True)
            finally:
                os.close(slave)
            pumps = [(os.dup(self.master), 1)]
            self.stdin_fd = None
            return proc, pumps
        proc = subprocess.Popen(self.argv, env=self.env, preexec_fn=pre, start_new_session=True,
                                stdin=subprocess.PIPE if self.stdin else subprocess.DEVNULL,
                                stdout=subprocess.PIPE if self.stdout else subprocess.DEVNULL,
                                stderr=subprocess.PIPE if self.stderr else subprocess.DEVNULL,
                                close_fds=True)
        pumps = []
        if self.stdin:
            self.stdin_fd = os.dup(proc.stdin.fileno())
            proc.stdin.close()
        for f, ch in ((proc.stdout, 1), (proc.stderr, 2)):
            if f is not None:
                pumps.append((os.dup(f.fileno()), ch))
                f.close()
        return proc, pumps

    def run(self):
        self.finished = False
        self.sock.settimeout(None)
        # client-go registers its streams only after the handshake and drops
        # what comes earlier ("Unknown stream id 1, discarding message"); a
        # real apiserver is slower than that (kubelet, runtime), so wait a bit.
        time.sleep(EXEC_START_DELAY)
        first = 1 if self.stdout else (2 if self.stderr and not self.tty else 3)
        self.send_frame(2, bytes([first]))
        rt = threading.Thread(target=self.reader, daemon=True)
        try:
            proc, pumps = self.spawn()
        except Exception as e:
            self.finished = True
            rt.start()
            self.send_status(start_failure(self.argv, e))
            self.finish()
            return
        rt.start()  # only now: stdin that arrives goes to the process
        threads = [threading.Thread(target=self.pump, args=p, daemon=True) for p in pumps]
        for t in threads:
            t.start()

        def waiter():
            proc.wait()
            for t in threads:
                t.join()
            if self.master is not None:
                try:
                    os.close(self.master)
                except OSError:
                    pass
            self.close_stdin()
            self.finished = True
            self.wake.set()
        threading.Thread(target=waiter, daemon=True).start()
        self.wake.wait()
        if self.dead.is_set() and not self.finished:
            return  # the stream is gone; the process lives on, its output drained
        rc = proc.returncode
        code = 128 - rc if rc < 0 else rc
        if code == 0:
            st = {"metadata": {}, "status": "Success"}
        else:
            st = {"metadata": {}, "status": "Failure",
                  "message": "command terminated with non-zero exit code: error executing command %s, exit code %d"
                             % ("[" + " ".join(self.argv) + "]", code),
                  "reason": "NonZeroExitCode",
                  "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}
        self.send_status(st)
        self.finish()

    def send_status(self, st):
        if self.dead.is_set():
            return
        try:
            self.send_frame(2, b"\x03" + json.dumps(st).encode())
        except OSError:
            self.mark_dead()

    def finish(self):
        """Close frame, then a bounded wait for the client's close (the v5
        stream translator). v4 is proxied to the kubelet's legacy stream
        server, which closes the connection right after its close frame:
        so does this, whatever the client still sends."""
        if self.dead.is_set():
            return
        try:
            self.send_frame(8, struct.pack("!H", 1000))
        except OSError:
            return
        if not self.v5:
            try:
                socket.socket.shutdown(self.sock, socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.client_closed.wait(10)


def start_failure(argv, e):
    exe = argv[0]
    if isinstance(e, FileNotFoundError):
        why = ('exec: "%s": executable file not found in $PATH' % exe) if "/" not in exe else \
            ('exec: "%s": stat %s: no such file or directory' % (exe, exe))
    elif isinstance(e, PermissionError):
        why = 'exec: "%s": permission denied' % exe
    elif isinstance(e, OSError) and e.errno == errno.ENOEXEC:
        why = 'exec: "%s": exec format error' % exe
    else:
        why = "%s" % e
    msg = ("Internal error occurred: error executing command in container: failed to exec in container: "
           "failed to start exec \"%s\": OCI runtime exec failed: exec failed: unable to start container "
           "process: %s: unknown" % (uuid.uuid4().hex, why))
    return {"metadata": {}, "status": "Failure", "message": msg, "reason": "InternalError",
            "details": {"causes": [{"message": msg}]}, "code": 500}


def passwd_lookup(root, uid):
    try:
        for line in open(os.path.join(root, "etc/passwd")):
            f = line.strip().split(":")
            if len(f) >= 6 and f[2] == str(uid):
                return int(f[3]), f[5]
    except (OSError, ValueError):
        pass
    return 0, "/"


# ---------------------------------------------------------------- HTTP

def qbool(q, k):
    return (q.get(k) or [""])[-1].lower() in ("true", "1", "yes")


def qstr(q, k, default=None):
    v = q.get(k)
    return v[-1] if v else default


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, addr, handler, sslctx):
        self.sslctx = sslctx
        ThreadingHTTPServer.__init__(self, addr, handler)

    def get_request(self):
        sock, addr = self.socket.accept()
        if self.sslctx:
            sock = self.sslctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address):
        e = sys.exc_info()[1]
        if isinstance(e, (ssl.SSLError, ConnectionError, socket.timeout, OSError)):
            return
        traceback.print_exc()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-kube-apiserver"
    sys_version = ""

    def setup(self):
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(15)
            self.request.do_handshake()
            self.request.settimeout(None)
        BaseHTTPRequestHandler.setup(self)

    def log_message(self, *a):
        pass

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = lambda self: self.dispatch()

    # responses
    def send_json(self, code, obj, headers=None, ctype="application/json"):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.status_code = code

    def read_body(self):
        n = self.headers.get("Content-Length")
        if n:
            return self.rfile.read(int(n))
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return b""

    def json_body(self):
        try:
            v = json.loads(self.body.decode() or "null")
        except (ValueError, UnicodeDecodeError) as e:
            raise ApiError(400, "BadRequest", "the object provided is unrecognized or malformed: %s" % e)
        return v

    def authenticate(self, path):
        if CFG.tls:
            try:
                cert = self.connection.getpeercert()
            except (ValueError, ssl.SSLError):
                cert = None
            if cert:
                for rdn in cert.get("subject", ()):
                    for k, v in rdn:
                        if k == "commonName":
                            return v
                return "client-cert"
        auth = self.headers.get("Authorization", "")
        if CFG.token and auth.startswith("Bearer ") and hmac.compare_digest(auth[7:].strip(), CFG.token):
            return "taskbox-test"
        if not CFG.token and not CFG.tls:
            return "system:anonymous"
        if path in ("/healthz", "/livez", "/readyz", "/version"):
            return "system:anonymous"
        raise ApiError(401, "Unauthorized", "Unauthorized")

    def dispatch(self):
        self.status_code = 0
        self.user = ""
        self.ws_proto = None
        u = urlsplit(self.path)
        path, query = u.path, u.query
        q = parse_qs(query, keep_blank_values=True)
        try:
            self.body = self.read_body()
            self.user = self.authenticate(path)
            if path.startswith("/fake/"):
                return self.control(path, q)
            line = "%s %s%s" % (self.command, path, "?" + query if query else "")
            f = FAULTS.take(line, "status")
            if f:
                raise fault_error(f, path, self.command, self.user)
            self.route(path, q)
        except ApiError as e:
            h = dict(e.headers)
            if e.code == 401:
                h["Www-Authenticate"] = 'Basic realm="kubernetes-master"'
            try:
                self.send_json(e.code, e.status(), h)
            except OSError:
                self.close_connection = True
        except (BrokenPipeError, ConnectionError, ssl.SSLError):
            self.close_connection = True
        except Exception as e:
            traceback.print_exc()
            try:
                self.send_json(500, ApiError(500, "InternalError", "Internal error occurred: %s" % e).status())
            except OSError:
                self.close_connection = True
        finally:
            e = {"time": round(time.time(), 3), "method": self.command, "path": path, "query": query,
                 "status": self.status_code, "user": self.user}
            if self.ws_proto:
                e["subprotocol"] = self.ws_proto
            REQLOG.add(e)

    # routing
    def route(self, path, q):
        m = self.command
        d = discovery(path, self.server.server_address[1])
        if d is not None and m == "GET":
            return self.send_json(200, d)
        if path in ("/healthz", "/livez", "/readyz"):
            data = b"ok"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(data)
            self.status_code = 200
            return
        r = re.match(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/exec$", path)
        if r:
            return self.exec(r.group(1), r.group(2), q)
        r = re.match(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)(/status)?$", path)
        if r:
            return self.item(PODS, r.group(1), r.group(2), q)
        r = re.match(r"^/api/v1/namespaces/([^/]+)/pods$", path)
        if r:
            return self.collection(PODS, r.group(1), q)
        if path == "/api/v1/pods":
            return self.collection(PODS, None, q)
        base = "/apis/" + SB_API
        r = re.match("^" + re.escape(base) + r"/namespaces/([^/]+)/sandboxes/([^/]+)(/status)?$", path)
        if r:
            return self.item(SANDBOXES, r.group(1), r.group(2), q)
        r = re.match("^" + re.escape(base) + r"/namespaces/([^/]+)/sandboxes$", path)
        if r:
            return self.collection(SANDBOXES, r.group(1), q)
        if path == base + "/sandboxes":
            return self.collection(SANDBOXES, None, q)
        r = re.match(r"^/api/v1/namespaces/([^/]+)$", path)
        if r and m == "GET":
            return self.send_json(200, namespace_obj(r.group(1)))
        if path == "/api/v1/namespaces" and m == "GET":
            return self.send_json(200, {"kind": "NamespaceList", "apiVersion": "v1",
                                        "metadata": {"resourceVersion": str(STORE.rv)},
                                        "items": [namespace_obj("default")]})
        if d is not None or r:
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        raise ApiError(404, "NotFound", "the server could not find the requested resource",
                       {"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]})

    def wants_table(self):
        return "as=Table" in self.headers.get("Accept", "")

    def collection(self, res, ns, q):
        if ns is not None and not DNS1123_LABEL.match(ns):
            raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns)
        if self.command == "GET":
            lm = label_matcher(qstr(q, "labelSelector"))
            fm = field_matcher(qstr(q, "fieldSelector"))
            if qbool(q, "watch"):
                return self.watch(res, ns, q, lambda o: lm(o) and fm(o))
            items = [o for o in STORE.list(res, ns) if lm(o) and fm(o)]
            items, more = page(items, q)
            if self.wants_table():
                t = table(res, items, qstr(q, "includeObject", "Metadata"))
                t["metadata"].update(more)
                return self.send_json(200, t)
            for o in items:
                o.pop("kind", None)
                o.pop("apiVersion", None)
            return self.send_json(200, {"kind": res.kind + "List", "apiVersion": res.api_version,
                                        "metadata": dict({"resourceVersion": str(STORE.rv)}, **more),
                                        "items": items})
        if self.command == "POST" and ns is not None:
            obj = self.json_body()
            if not isinstance(obj, dict):
                raise ApiError(400, "BadRequest", "the object provided is unrecognized or malformed")
            if obj.get("kind") not in (None, res.kind) or obj.get("apiVersion") not in (None, res.api_version):
                raise ApiError(400, "BadRequest", "the API version in the data (%s) does not match the expected "
                               "API version (%s)" % (obj.get("apiVersion"), res.api_version))
            obj["kind"], obj["apiVersion"] = res.kind, res.api_version
            name = validate_meta(res, obj, ns)
            dry = "All" in q.get("dryRun", [])
            with STORE.cond:
                if res is PODS:
                    default_pod(obj, name)
                    if dry:
                        if STORE.objs[PODS].get((ns, name)):
                            raise PODS.exists(name)
                        return self.send_json(201, obj)
                    out = create_pod_locked(obj)
                else:
                    spec = obj.get("spec")
                    if not isinstance(spec, dict) or not isinstance(spec.get("podTemplate"), dict):
                        raise SANDBOXES.invalid(name, "spec.podTemplate", "Required value")
                    if not (spec["podTemplate"].get("spec") or {}).get("containers"):
                        raise SANDBOXES.invalid(name, "spec.podTemplate.spec.containers", "Required value")
                    if spec.get("shutdownTime"):
                        try:
                            parse_ts(spec["shutdownTime"])
                        except ValueError:
                            raise SANDBOXES.invalid(name, "spec.shutdownTime", "must be an RFC 3339 date-time",
                                                    spec["shutdownTime"])
                    if STORE.objs[SANDBOXES].get((ns, name)):
                        raise SANDBOXES.exists(name)
                    obj.pop("status", None)
                    if dry:
                        return self.send_json(201, obj)
                    out = STORE.put(SANDBOXES, obj, "ADDED")
                    reconcile_sandbox_locked((ns, name), adopt=CFG.sandbox_pod_names == "generated")
                    out = STORE.get(SANDBOXES, ns, name) or out
            return self.send_json(201, out)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def item(self, res, ns, name, q):
        m = self.command
        if m == "GET":
            o = STORE.get(res, ns, name)
            if o is None:
                raise res.not_found(name)
            if self.wants_table():
                return self.send_json(200, table(res, [o], qstr(q, "includeObject", "Metadata")))
            return self.send_json(200, o)
        if m == "DELETE":
            grace = qstr(q, "gracePeriodSeconds")
            try:
                body = self.json_body() or {}
            except ApiError:
                body = {}
            if grace is None and isinstance(body, dict) and body.get("gracePeriodSeconds") is not None:
                grace = body["gracePeriodSeconds"]
            with STORE.cond:
                cur = STORE.objs[res].get((ns, name))
                if cur is not None and cur["metadata"].get("finalizers"):
                    # kept, marked, until its finalizers are removed
                    cur = copy.deepcopy(cur)
                    md = cur["metadata"]
                    if not md.get("deletionTimestamp"):
                        md["deletionTimestamp"] = now_ts()
                        md["deletionGracePeriodSeconds"] = int(grace or 0)
                    return self.send_json(200, STORE.put(res, cur, "MODIFIED"))
                if res is PODS:
                    out = delete_pod_locked(ns, name, None if grace is None else int(grace))
                else:
                    out = STORE.remove(SANDBOXES, ns, name)
                    if out is None:
                        raise res.not_found(name)
                    # the garbage collector follows ownerReferences, whatever the pods' names
                    for pod in sb_owned_pods(out):
                        delete_pod_locked(ns, pod["metadata"]["name"], 0)
                    out["metadata"]["deletionTimestamp"] = now_ts()
            return self.send_json(200, out)
        if m in ("PATCH", "PUT"):
            ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
            body = self.json_body()
            with STORE.cond:
                cur = STORE.objs[res].get((ns, name))
                if cur is None:
                    raise res.not_found(name)
                cur = copy.deepcopy(cur)
                if m == "PUT":
                    new = body
                    if not isinstance(new, dict):
                        raise ApiError(400, "BadRequest", "the object provided is unrecognized or malformed")
                    rv = (new.get("metadata") or {}).get("resourceVersion")
                    if rv and rv != cur["metadata"]["resourceVersion"]:
                        raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has '
                                       'been modified; please apply your changes to the latest version and try '
                                       'again' % (res.qualified, name), {"name": name, "kind": res.plural})
                elif ctype == "application/merge-patch+json":
                    new = merge_patch(cur, body)
                elif ctype == "application/strategic-merge-patch+json" and res is PODS:
                    new = merge_patch(cur, body)
                elif ctype == "application/json-patch+json":
                    new = json_patch(cur, body)
                else:
                    raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format "
                                   "- accepted media types include: application/json-patch+json, "
                                   "application/merge-patch+json, application/apply-patch+yaml")
                if not isinstance(new, dict):
                    raise ApiError(422, "Invalid", "the patched object is not an object")
                out = self.apply_update(res, cur, new, name)
            return self.send_json(200, out)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def apply_update(self, res, cur, new, name):
        md = new.setdefault("metadata", {})
        for k in ("name", "namespace", "uid", "creationTimestamp"):
            if md.get(k) != cur["metadata"].get(k):
                if k == "uid" and md.get(k) is None or k == "creationTimestamp":
                    md[k] = cur["metadata"].get(k)
                    continue
                raise res.invalid(name, "metadata." + k, "field is immutable", md.get(k))
        for k in ("labels", "annotations"):
            for lv in (md.get(k) or {}).values():
                if not isinstance(lv, str):
                    raise ApiError(400, "BadRequest", "json: cannot unmarshal into Go struct field "
                                   "ObjectMeta.metadata.%s of type string" % k)
        new["kind"], new["apiVersion"] = res.kind, res.api_version
        new["status"] = cur.get("status", {})
        if res is PODS:
            a, b = copy.deepcopy(cur["spec"]), copy.deepcopy(new.get("spec") or {})
            ca, cb = a.pop("activeDeadlineSeconds", None), b.pop("activeDeadlineSeconds", None)
            if a != b:
                raise PODS.invalid(name, "spec", "Forbidden: pod updates may not change fields other than "
                                   "`spec.containers[*].image`,`spec.initContainers[*].image`,"
                                   "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
                                   "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if "
                                   "it was previously negative)")
            if cb is not None and ca is not None and cb > ca or (ca is not None and cb is None):
                raise PODS.invalid(name, "spec.activeDeadlineSeconds", "must be less than or equal to the "
                                   "previous value", cb)
        else:
            if (new.get("spec") or {}) != (cur.get("spec") or {}):
                md["generation"] = cur["metadata"].get("generation", 1) + 1
            st = (new.get("spec") or {}).get("shutdownTime")
            if st:
                try:
                    parse_ts(st)
                except ValueError:
                    raise SANDBOXES.invalid(name, "spec.shutdownTime", "must be an RFC 3339 date-time", st)
        md["resourceVersion"] = cur["metadata"]["resourceVersion"]
        for k in ("deletionTimestamp", "deletionGracePeriodSeconds"):
            md.pop(k, None)
            if k in cur["metadata"]:
                md[k] = cur["metadata"][k]
        if md.get("deletionTimestamp") and not md.get("finalizers"):
            # the last finalizer went: the deletion completes
            ns = md["namespace"]
            if res is PODS:
                return delete_pod_locked(ns, name, 0)
            gone = STORE.remove(SANDBOXES, ns, name)
            for pod in sb_owned_pods(gone):
                delete_pod_locked(ns, pod["metadata"]["name"], 0)
            return gone
        out = STORE.put(res, new, "MODIFIED")
        if res is SANDBOXES:
            reconcile_sandbox_locked((md["namespace"], md["name"]))
            out = STORE.get(SANDBOXES, md["namespace"], md["name"]) or out
        return out

    def watch(self, res, ns, q, match):
        timeout = min(int(qstr(q, "timeoutSeconds", "1800") or 1800), CFG.lifetime)
        rv = qstr(q, "resourceVersion", "")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.status_code = 200

        def chunk(b):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))

        with STORE.cond:
            cursor = STORE.rv
            initial = [] if rv not in ("", "0") else [o for o in STORE.list(res, ns) if match(o)]
            if rv not in ("", "0"):
                cursor = int(rv)
        try:
            for o in initial:
                chunk(json.dumps({"type": "ADDED", "object": o}).encode() + b"\n")
            end = time.time() + timeout
            while time.time() < end:
                with STORE.cond:
                    STORE.cond.wait(1)
                    evs = [e for e in STORE.events if e[0] > cursor]
                for erv, eres, etype, obj in evs:
                    cursor = erv
                    if eres is res and (ns is None or obj["metadata"]["namespace"] == ns) and match(obj):
                        chunk(json.dumps({"type": etype, "object": obj}).encode() + b"\n")
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    # exec
    def exec(self, ns, name, q):
        upgrade = self.headers.get("Upgrade", "")
        if "spdy" in upgrade.lower():
            raise ApiError(400, "BadRequest", "this fake apiserver serves pods/exec over WebSocket only "
                           "(v5.channel.k8s.io, v4.channel.k8s.io): SPDY/3.1 is not supported; use kubectl "
                           "1.30 or later")
        if self.command not in ("GET", "POST"):
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        pod = STORE.get(PODS, ns, name)
        if pod is None:
            raise PODS.not_found(name)
        if upgrade.lower() != "websocket":
            raise ApiError(400, "BadRequest", "Upgrade request required")
        argv = q.get("command") or []
        if not argv:
            raise ApiError(400, "BadRequest", "you must specify at least 1 command")
        st = pod.get("status", {})
        if st.get("phase") in ("Succeeded", "Failed"):
            raise ApiError(400, "BadRequest", "cannot exec into a container in a completed pod; current phase is %s"
                           % st["phase"])
        names = [c["name"] for c in pod["spec"]["containers"]]
        container = qstr(q, "container")
        if not container:
            if len(names) > 1:
                raise ApiError(400, "BadRequest", "a container name must be specified for pod %s, choose one of: "
                               "[%s]" % (name, " ".join(names)))
            container = names[0]
        if container not in names:
            raise ApiError(400, "BadRequest", "container %s is not valid for pod %s" % (container, name))
        if not pod["spec"].get("nodeName"):
            raise ApiError(400, "BadRequest", "pod %s does not have a host assigned" % name)
        cs = [c for c in st.get("containerStatuses", []) if c["name"] == container]
        if not cs or "running" not in cs[0].get("state", {}):
            raise ApiError(400, "BadRequest", 'unable to upgrade connection: container not found ("%s")' % container)
        opts = (qbool(q, "stdin"), qbool(q, "stdout"), qbool(q, "stderr"), qbool(q, "tty"))
        if not (opts[0] or opts[1] or opts[2]):
            raise ApiError(400, "BadRequest", "you must specify at least 1 of stdin, stdout, stderr")
        offered = [p.strip() for p in self.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
        # v5 goes to the apiserver's stream translator whenever offered; else
        # the kubelet's legacy server speaks v4.
        proto = next((p for p in ("v5.channel.k8s.io", "v4.channel.k8s.io")
                      if p in offered and p in CFG.exec_protocols), None)
        if proto is None:
            raise ApiError(400, "BadRequest", "this fake apiserver needs the WebSocket subprotocol "
                           "%s (offered: %s)" % (" or ".join(CFG.exec_protocols), ", ".join(offered) or "none"))
        key = self.headers.get("Sec-WebSocket-Key", "")
        if not key or self.headers.get("Sec-WebSocket-Version", "") != "13":
            raise ApiError(400, "BadRequest", "bad WebSocket handshake (Sec-WebSocket-Key/Version 13)")
        c = [c for c in pod["spec"]["containers"] if c["name"] == container][0]
        root = STORE.pod_root(ns, name)
        sc = dict(pod["spec"].get("securityContext") or {})
        sc.update({k: v for k, v in (c.get("securityContext") or {}).items() if v is not None})
        uid = int(sc.get("runAsUser", 0) or 0)
        pgid, home = passwd_lookup(root, uid)
        gid = int(sc["runAsGroup"]) if sc.get("runAsGroup") is not None else pgid
        groups = [int(g) for g in sc.get("supplementalGroups") or []]
        if sc.get("fsGroup") is not None:
            groups.append(int(sc["fsGroup"]))
        env = {"PATH": PATH_ENV, "HOSTNAME": name, "HOME": "/root" if uid == 0 else home}
        if opts[3]:
            env["TERM"] = "xterm"
        for e in c.get("env") or []:
            if e.get("name"):
                env[e["name"]] = str(e.get("value", ""))
        line = "%s %s" % (self.command, self.path)
        f = FAULTS.take(line, "drop")
        drop = int(f["drop_exec_after_bytes"]) if f else None
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.wfile.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: %s\r\n\r\n" % (accept, proto)).encode())
        self.status_code = 101
        self.ws_proto = proto
        self.close_connection = True
        ExecSession(self, root, argv, env, uid, gid, groups, opts, proto, drop).run()

    # test control
    def control(self, path, q):
        m = self.command
        if path == "/fake/faults":
            if m == "POST":
                body = self.json_body()
                for f in body if isinstance(body, list) else [body]:
                    try:
                        FAULTS.add(f)
                    except re.error as e:
                        raise ApiError(400, "BadRequest", "bad match regex: %s" % e)
                return self.send_json(200, {"armed": FAULTS.items})
            if m == "DELETE":
                with FAULTS.lock:
                    FAULTS.items = []
                return self.send_json(200, {"armed": []})
            with FAULTS.lock:
                return self.send_json(200, {"armed": list(FAULTS.items)})
        if path == "/fake/log":
            if m == "DELETE":
                with REQLOG.lock:
                    REQLOG.items = []
                return self.send_json(200, [])
            with REQLOG.lock:
                items = list(REQLOG.items)
            return self.send_json(200, items)
        r = re.match(r"^/fake/evict/([^/]+)/([^/]+)$", path)
        if r and m == "POST":
            ns, name = r.groups()
            keep = float(qstr(q, "keep", "2"))
            with STORE.cond:
                pod = STORE.objs[PODS].get((ns, name))
                if pod is None:
                    raise PODS.not_found(name)
                pod = copy.deepcopy(pod)
                pod_fail(pod, "Evicted", "The node was low on resource: memory. Threshold quantity: 100Mi, "
                         "available: 12Mi.", 137, "OOMKilled")
                pod["metadata"].setdefault("annotations", {})["fake.taskbox.dev/delete-at"] = str(time.time() + keep)
                kill_root(STORE.pod_root(ns, name))
                out = STORE.put(PODS, pod, "MODIFIED")
            return self.send_json(200, out)
        r = re.match(r"^/fake/pods/([^/]+)/([^/]+)/pids$", path)
        if r:
            return self.send_json(200, pids_in_root(STORE.pod_root(*r.groups())))
        raise ApiError(404, "NotFound", "no such control endpoint")


def fault_error(f, path, method, user):
    code = int(f["status"])
    msg = f.get("message")
    res, name, ns = "", "", "default"
    r = re.match(r"^/api(?:s/[^/]+)?/v1[^/]*/namespaces/([^/]+)/([^/]+)(?:/([^/]+))?(?:/([^/]+))?", path)
    if r:
        ns, res, name, sub = r.group(1), r.group(2), r.group(3) or "", r.group(4)
        if sub:
            res += "/" + sub
    if code == 401:
        return ApiError(401, "Unauthorized", msg or "Unauthorized")
    if code == 403:
        verb = {"GET": "get", "POST": "create", "DELETE": "delete", "PATCH": "patch", "PUT": "update"}.get(method, "get")
        if res.endswith("/exec"):
            verb = "create"
        elif method == "GET" and not name:
            verb = "list"
        what = '%s "%s"' % (res.split("/")[0], name) if name else res or "resource"
        return ApiError(403, "Forbidden", msg or '%s is forbidden: User "%s" cannot %s resource "%s" in API group "" '
                        'in the namespace "%s"' % (what, user, verb, res, ns),
                        {"name": name, "kind": res.split("/")[0]})
    if code == 429:
        ra = int(f.get("retry_after", 1))
        return ApiError(429, "TooManyRequests", msg or "Too many requests, please try again later.",
                        {"retryAfterSeconds": ra}, {"Retry-After": ra})
    if code == 404:
        return ApiError(404, "NotFound", msg or "the server could not find the requested resource")
    if code == 409:
        return ApiError(409, "Conflict", msg or "Operation cannot be fulfilled: the object has been modified")
    if code == 503:
        return ApiError(503, "ServiceUnavailable", msg or "the server is currently unable to handle the request",
                        None, {"Retry-After": int(f.get("retry_after", 1))} if f.get("retry_after") else None)
    return ApiError(code, "InternalError", msg or "Internal error occurred: injected fault")


def namespace_obj(ns):
    return {"kind": "Namespace", "apiVersion": "v1", "metadata": {
        "name": ns, "uid": str(uuid.uuid5(uuid.NAMESPACE_DNS, ns)), "resourceVersion": "1",
        "creationTimestamp": "2025-01-01T00:00:00Z", "labels": {"kubernetes.io/metadata.name": ns}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


# ---------------------------------------------------------------- TLS and kubeconfig

def make_pki(pki):
    files = {k: os.path.join(pki, k) for k in
             ("ca.crt", "ca.key", "server.crt", "server.key", "client.crt", "client.key")}
    if all(os.path.exists(p) for p in files.values()):
        return files
    os.makedirs(pki, exist_ok=True)

    def run(*args):
        r = subprocess.run(["openssl"] + list(args), cwd=pki, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit("fake-apiserver: openssl %s failed: %s" % (args[0], r.stderr.strip()))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("req", "-x509", *ec, "-days", "3", "-subj", "/CN=taskbox-fake-ca", "-keyout", "ca.key", "-out", "ca.crt",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    with open(os.path.join(pki, "server.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\nbasicConstraints=CA:FALSE\n")
    with open(os.path.join(pki, "client.ext"), "w") as f:
        f.write("extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                "basicConstraints=CA:FALSE\n")
    for who, subj in (("server", "/CN=127.0.0.1"), ("client", "/O=system:masters/CN=taskbox-test")):
        run("req", *ec, "-subj", subj, "-keyout", who + ".key", "-out", who + ".csr")
        run("x509", "-req", "-in", who + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "3", "-extfile", who + ".ext", "-out", who + ".crt")
    return files


def b64file(p):
    return base64.b64encode(open(p, "rb").read()).decode()


def write_kubeconfig(path, url, pki):
    q = json.dumps
    clusters = [("fake", {"server": url} if not pki else {"server": url, "certificate-authority": pki["ca.crt"]})]
    users = []
    if CFG.token:
        users.append(("fake-token", {"token": CFG.token}))
    if pki:
        users.append(("fake-cert", {"client-certificate": pki["client.crt"], "client-key": pki["client.key"]}))
        users.append(("fake-cert-data", {"client-certificate-data": b64file(pki["client.crt"]),
                                         "client-key-data": b64file(pki["client.key"])}))
        clusters.append(("fake-data", {"server": url, "certificate-authority-data": b64file(pki["ca.crt"])}))
    if not users:
        users.append(("fake-anonymous", {}))
    default_user = users[0][0]
    contexts = [("fake", "fake", default_user)]
    if pki:
        contexts.append(("cert", "fake", "fake-cert"))
        contexts.append(("fake-data", "fake-data", "fake-token" if CFG.token else "fake-cert-data"))
        contexts.append(("cert-data", "fake-data", "fake-cert-data"))
    out = ["apiVersion: v1", "kind: Config", "preferences: {}", "current-context: fake", "clusters:"]
    for n, c in clusters:
        out += ["- name: %s" % n, "  cluster:"] + ["    %s: %s" % (k, q(v)) for k, v in c.items()]
    out.append("users:")
    for n, u in users:
        out += ["- name: %s" % n] + (["  user:"] + ["    %s: %s" % (k, q(v)) for k, v in u.items()]
                                     if u else ["  user: {}"])
    out.append("contexts:")
    for n, cl, u in contexts:
        out += ["- name: %s" % n, "  context:", "    cluster: %s" % cl, "    user: %s" % u, "    namespace: default"]
    write_atomic(path, "\n".join(out) + "\n")
    os.chmod(path, 0o600)


# ---------------------------------------------------------------- main

def kill_all_pods(state):
    pods = os.path.join(state, "pods")
    for root in (pods, os.path.join(state, "trash")):
        if os.path.isdir(root):
            kill_root(root)
    unmount_under(state)


def main():
    global CFG, STORE, FAULTS, REQLOG, BASE_ROOT
    ap = argparse.ArgumentParser(description="a loopback fake kube-apiserver for taskbox's tests")
    ap.add_argument("--state", required=True)
    ap.add_argument("--ready-file")
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("--token")
    ap.add_argument("--lifetime", type=float, default=600)
    ap.add_argument("--rootfs")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--exec-protocols", default="v5.channel.k8s.io,v4.channel.k8s.io",
                    help="the channel.k8s.io subprotocols pods/exec serves, comma-separated")
    ap.add_argument("--sandbox-pod-names", choices=("sandbox", "generated"), default="sandbox",
                    help="how the Sandbox controller names the pod it makes")
    ap.add_argument("--list-page-cap", type=int, default=0,
                    help="serve at most this many objects per LIST page whatever limit asks (0: limit)")
    ap.add_argument("--cleanup", action="store_true",
                    help="kill every process of the state dir's pods, remove the state dir, exit")
    CFG = ap.parse_args()
    CFG.state = os.path.abspath(CFG.state)
    CFG.exec_protocols = [p.strip() for p in CFG.exec_protocols.split(",") if p.strip()]
    if not CFG.exec_protocols:
        ap.error("--exec-protocols names no subprotocol")
    for p in CFG.exec_protocols:
        if p not in ("v5.channel.k8s.io", "v4.channel.k8s.io"):
            ap.error("--exec-protocols: %s is not v5.channel.k8s.io or v4.channel.k8s.io" % p)
    if CFG.cleanup:
        kill_all_pods(CFG.state)
        shutil.rmtree(CFG.state, ignore_errors=True)
        return 0
    if not CFG.ready_file:
        ap.error("--ready-file is required")
    os.makedirs(CFG.state, exist_ok=True)
    if CFG.rootfs:
        BASE_ROOT = os.path.abspath(CFG.rootfs)
        if not os.path.isdir(BASE_ROOT):
            ap.error("--rootfs %s is not a directory" % CFG.rootfs)
    else:
        BASE_ROOT = os.path.join(CFG.state, "base")
        make_busybox_base(BASE_ROOT)
    STORE = Store(CFG.state)
    FAULTS = Faults()
    REQLOG = RequestLog()
    pki = None
    sslctx = None
    if CFG.tls:
        pki = make_pki(os.path.join(CFG.state, "pki"))
        sslctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        sslctx.load_cert_chain(pki["server.crt"], pki["server.key"])
        sslctx.load_verify_locations(pki["ca.crt"])
        sslctx.verify_mode = ssl.CERT_OPTIONAL
        sslctx.set_alpn_protocols(["http/1.1"])
    srv = Server(("127.0.0.1", CFG.port), Handler, sslctx)
    port = srv.server_address[1]
    url = "%s://127.0.0.1:%d" % ("https" if CFG.tls else "http", port)
    kubeconfig = os.path.join(CFG.state, "kubeconfig")
    write_kubeconfig(kubeconfig, url, pki)

    def expire():
        time.sleep(CFG.lifetime)
        log("lifetime of %g s is over: killing the pods' processes and exiting" % CFG.lifetime)
        kill_all_pods(CFG.state)
        os._exit(0)
    threading.Thread(target=expire, daemon=True).start()
    threading.Thread(target=controller_loop, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    ready = {"url": url, "ca": pki["ca.crt"] if pki else None, "client_cert": pki["client.crt"] if pki else None,
             "client_key": pki["client.key"] if pki else None, "token": CFG.token, "kubeconfig": kubeconfig,
             "pid": os.getpid(), "port": port, "state": CFG.state}
    write_atomic(CFG.ready_file, json.dumps(ready, indent=1) + "\n")
    log("listening on %s (state %s)" % (url, CFG.state))
    srv.serve_forever(poll_interval=0.5)


if __name__ == "__main__":
    sys.exit(main())
