"""The Kubernetes API's OpenAPI v2 document, as kubectl downloads it.

kubectl validates manifests on the client against /openapi/v2, which it
reads as protobuf (gnostic's openapi_v2.Document), not JSON. The schemas
come from the npm package kubernetes-models 4.3.1 (pinned in
tests/package.json; its last release that ships them as data): its
_schemas/*.mjs hold upstream Kubernetes' OpenAPI definitions (v1.27.1),
one per file, turned into JSON Schema for ajv. Turning them back takes
three steps: a nullable field's {"oneOf": [X, {"type": "null"}]} is X
again, "$ref": "NAME#" is "#/definitions/NAME", and IntOrString and
Quantity are the strings they are upstream. Each kind's definition gets
its x-kubernetes-group-version-kind from its apiVersion and kind enums,
which is how kubectl finds the schema of an object. What the package
left out (descriptions, x-kubernetes-* hints, and so the few properties
named "description", as PriorityClass's) kubectl's check does not need,
but for those properties, which none of deploy/kubernetes's kinds has.

  document(node_modules) -> the protobuf bytes
"""
import glob
import json
import os
import re

# What kubernetes-models rewrote into oneOfs, as upstream publishes them.
UPSTREAM = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
}
NULL = {"type": "null"}


def load(node_modules):
    """{definition name: its JSON Schema}, from the packages' _schemas."""
    defs = {}
    for pkg in ("kubernetes-models", "@kubernetes-models/apimachinery"):
        for f in sorted(glob.glob(os.path.join(node_modules, pkg, "_schemas", "*.mjs"))):
            text = open(f).read()
            name = re.search(r'register\("([^"]+)", schema\)', text).group(1)
            literal = re.search(r"^const schema = (.*?);\nexport ", text, re.S | re.M).group(1)
            defs[name] = json.loads(literal)
    if not defs:
        raise SystemExit("no kubernetes-models schemas under " + node_modules)
    return defs


def swagger(s):
    """A kubernetes-models schema as the OpenAPI v2 schema it came from."""
    if "oneOf" in s and NULL in s["oneOf"] and len(s["oneOf"]) == 2:
        return swagger([x for x in s["oneOf"] if x != NULL][0])
    out = {}
    for k, v in s.items():
        if k == "$ref":
            out[k] = "#/definitions/" + v.rstrip("#")
        elif k == "properties":
            out[k] = {n: swagger(p) for n, p in v.items()}
        elif k in ("items", "additionalProperties") and isinstance(v, dict):
            out[k] = swagger(v)
        elif k != "nullable":
            out[k] = v
    return out


def gvk(s):
    """[{group, version, kind}] of a kind's definition, else []."""
    props = s.get("properties", {})
    api, kind = props.get("apiVersion", {}).get("enum"), props.get("kind", {}).get("enum")
    if not (api and kind and len(api) == len(kind) == 1):
        return []
    group, _, version = api[0].rpartition("/")
    return [{"group": group, "kind": kind[0], "version": version}]


# Protobuf: every field written here is length-delimited (wire type 2).
def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def named(name, value):  # NamedSchema and NamedAny: name = 1, value = 2
    return field(1, name) + field(2, value)


def schema_pb(s, extensions=()):
    """gnostic openapi_v2.Schema: the fields kubectl's validation reads."""
    out = b""
    if "$ref" in s:
        out += field(1, s["$ref"])
    if "format" in s:
        out += field(2, s["format"])
    for r in s.get("required", []):
        out += field(19, r)
    if isinstance(s.get("additionalProperties"), dict):
        out += field(21, field(1, schema_pb(s["additionalProperties"])))
    if "type" in s:
        out += field(22, field(1, s["type"]))
    if "items" in s:
        out += field(23, field(1, schema_pb(s["items"])))
    if "properties" in s:
        out += field(25, b"".join(field(1, named(n, schema_pb(p)))
                                  for n, p in sorted(s["properties"].items())))
    for name, value in extensions:  # Any: yaml = 2 (JSON is YAML)
        out += field(31, named(name, field(2, json.dumps(value))))
    return out


def document(node_modules):
    defs = {name: swagger(s) for name, s in load(node_modules).items()}
    defs.update(UPSTREAM)
    definitions = b""
    for name, s in sorted(defs.items()):
        ext = [("x-kubernetes-group-version-kind", gvk(s))] if gvk(s) else []
        definitions += field(1, named(name, schema_pb(s, ext)))
    info = field(1, "Kubernetes") + field(2, "v1.27 (kubernetes-models)")
    return field(1, "2.0") + field(2, info) + field(9, definitions)
