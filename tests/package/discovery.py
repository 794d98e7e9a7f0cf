#!/usr/bin/env python3
"""A Kubernetes API stub for kubectl's client-side dry run and validation.

`kubectl apply --dry-run=client` validates and decodes manifests on the
client, but first maps each kind to its resource through the server's
discovery documents. This serves those documents, for the kinds of
deploy/kubernetes only, on 127.0.0.1 (plain HTTP), and, given the tests'
node_modules, the OpenAPI v2 document kubectl validates against (built
by openapi.py from upstream's definitions). It answers 404 to anything
else, as a cluster where none of the objects exists yet would; to
/openapi/v3 too, and the v2 document has no paths, so kubectl finds no
server-side field validation and validates each object itself, as it
does against a server older than 1.25.

  discovery.py PORTFILE [NODE_MODULES]    writes its port to PORTFILE
"""
import http.server
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import openapi  # noqa: E402

VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]


def res(name, kind, namespaced=True):
    return {"name": name, "singularName": kind.lower(), "namespaced": namespaced,
            "kind": kind, "verbs": VERBS}


GROUPS = {
    "apps/v1": [res("deployments", "Deployment")],
    "rbac.authorization.k8s.io/v1": [res("roles", "Role"), res("rolebindings", "RoleBinding")],
}
CORE = [res("namespaces", "Namespace", False), res("serviceaccounts", "ServiceAccount"),
        res("configmaps", "ConfigMap"), res("secrets", "Secret"), res("services", "Service"),
        res("pods", "Pod")]


def document(path):
    if path == "/version":
        return {"major": "1", "minor": "33", "gitVersion": "v1.33.0-discovery-stub"}
    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"]}
    if path == "/api/v1":
        return {"kind": "APIResourceList", "groupVersion": "v1", "resources": CORE}
    if path == "/apis":
        groups = []
        for gv in GROUPS:
            g, v = gv.split("/")
            ver = {"groupVersion": gv, "version": v}
            groups.append({"name": g, "versions": [ver], "preferredVersion": ver})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
    for gv, resources in GROUPS.items():
        if path == "/apis/" + gv:
            return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                    "resources": resources}
    return None


OPENAPI_V2 = openapi.document(sys.argv[2]) if len(sys.argv) > 2 else None
PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/openapi/v2" and OPENAPI_V2 is not None:
            status, kind, body = 200, PROTOBUF, OPENAPI_V2
        else:
            doc = document(path)
            status = 200 if doc is not None else 404
            if doc is None:
                doc = {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                       "reason": "NotFound", "code": 404, "message": "not found"}
            kind, body = "application/json", json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
