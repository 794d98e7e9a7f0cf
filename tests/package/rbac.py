#!/usr/bin/env python3
"""Checks deploy/kubernetes' Role against what the k8s provider did.

  rbac.py ROLE_YAML REQUESTS_JSON

REQUESTS_JSON is the Kubernetes fake's request log (GET /fake/log) of a
session through the provider. Each request to a namespaced resource is
mapped to the RBAC verb the apiserver checks (a WebSocket exec, a GET, is
checked as get on pods/exec, and from Kubernetes 1.35 also as create).
Every verb and resource used must be granted, and every one granted must
have been used: prints both sets and exits 1 when they differ.
"""
import json
import re
import sys

import yaml

role = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "Role")
granted = set()
for rule in role["rules"]:
    for group in rule["apiGroups"]:
        for resource in rule["resources"]:
            for verb in rule["verbs"]:
                granted.add((group, resource, verb))

PATH = re.compile(r"^/(?:api/v1|apis/(?P<group>[^/]+)/[^/]+)/namespaces/[^/]+/"
                  r"(?P<res>[^/]+)(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?$")
COLLECTION = {"GET": "list", "POST": "create", "DELETE": "deletecollection"}
OBJECT = {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
used = set()
for r in json.load(open(sys.argv[2])):
    m = PATH.match(r["path"])
    if not m:
        continue  # discovery, /version, the fake's own endpoints
    group = m.group("group") or ""
    resource = m.group("res") + ("/" + m.group("sub") if m.group("sub") else "")
    if m.group("sub") == "exec":
        used |= {(group, resource, "get"), (group, resource, "create")}
    elif m.group("name"):
        used.add((group, resource, OBJECT[r["method"]]))
    else:
        used.add((group, resource, COLLECTION[r["method"]]))


def show(s):
    return ", ".join("%s %s%s" % (v, g + "/" if g else "", res) for g, res, v in sorted(s))


print("used:    " + show(used))
print("granted: " + show(granted))
if used - granted:
    print("used but not granted: " + show(used - granted))
if granted - used:
    print("granted but never used: " + show(granted - used))
sys.exit(0 if used == granted else 1)
