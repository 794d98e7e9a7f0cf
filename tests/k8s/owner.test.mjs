// Ownership (ABI 1.5) on the k8s plugin, kind pod and kind sandbox side by
// side in one namespace of the fake apiserver, through tests/k8s/owner-driver:
// create records the owner (annotation taskbox.dev/owner, label
// taskbox.dev/owner-hash), describe answers from what connect learnt,
// list pages (the fake serves one object per page) with a label selector
// and keeps only live sandboxes of its own kind whose owner is exactly the
// one asked for; deleted, finalized-but-not-yet-gone and expired objects,
// objects not made by taskbox and a forged owner-hash label stay out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { k8sHarness } from "./harness.mjs";
import { RC } from "./plugin-driver.mjs";

const { fake, skip, driver } = await k8sHarness({ args: ["--list-page-cap", "1"] });
const NS = "owners";
const OWNER = "taskbox.dev/owner";
const HASH = "taskbox.dev/owner-hash";
const now = () => Math.floor(Date.now() / 1000);
const ids = (r) => r.items.map((i) => i.id).sort();
const path = (kind, name = "") =>
  (kind === "pod" ? `/api/v1/namespaces/${NS}/pods` : `/apis/agents.x-k8s.io/v1beta1/namespaces/${NS}/sandboxes`) +
  (name ? `/${name}` : "");
const nameOf = (id) => id.split(".")[0];

async function list(d, owner, more = {}) {
  const r = await d.op({ op: "list", ...(owner === undefined ? {} : { owner }), ...more });
  assert.equal(r.rc, RC.OK, r.err);
  return r;
}

async function make(d, owner) {
  const c = await d.op({ op: "create", lifetime: 300, ...(owner === undefined ? {} : { owner }) });
  assert.equal(c.rc, RC.OK, c.err);
  return c.id;
}

test("owners recorded, described and listed on Pods and Sandboxes", { skip: skip() }, async () => {
  const settings = { namespace: NS, templates: { default: { image: "busybox" } } };
  const drv = {
    pod: await driver(settings, "tests/k8s/owner-driver"),
    sandbox: await driver({ ...settings, kind: "sandbox" }, "tests/k8s/owner-driver"),
  };
  const owners = ["alice@example.com", "bob smith", undefined];
  const made = { pod: {}, sandbox: {} };
  for (const kind of ["pod", "sandbox"]) {
    const d = drv[kind];
    for (const o of owners) made[kind][o ?? ""] = await make(d, o);
    made[kind].alice2 = await make(d, "alice@example.com");
    // A host before ABI 1.5 sends a shorter request: no owner is read.
    const old = await d.op({ op: "create", lifetime: 300, owner: "carol", struct_size: "old" });
    assert.equal(old.rc, RC.OK, old.err);
    made[kind].old = old.id;
    for (const bad of ["a\nb", "x".repeat(256), "tab\there"]) {
      const r = await d.op({ op: "create", lifetime: 300, owner: bad });
      assert.equal(r.rc, RC.INVALID, `owner ${JSON.stringify(bad)}: ${r.err}`);
      assert.match(r.err, /owner/);
    }
  }

  // On the object: the exact owner as an annotation, its hash as a label;
  // a Sandbox's pod carries neither.
  const alicePod = await fake.call("GET", path("pod", nameOf(made.pod["alice@example.com"])));
  assert.equal(alicePod.json.metadata.annotations[OWNER], "alice@example.com");
  assert.match(alicePod.json.metadata.labels[HASH], /^[0-9a-f]{16}$/);
  const bobSb = await fake.call("GET", path("sandbox", nameOf(made.sandbox["bob smith"])));
  assert.equal(bobSb.json.metadata.annotations[OWNER], "bob smith");
  const bobSbPod = await fake.call("GET", path("pod", nameOf(made.sandbox["bob smith"])));
  assert.equal(bobSbPod.status, 200);
  assert.equal((bobSbPod.json.metadata.annotations || {})[OWNER], undefined);
  assert.equal((bobSbPod.json.metadata.labels || {})[HASH], undefined);
  const nobody = await fake.call("GET", path("pod", nameOf(made.pod[""])));
  assert.equal((nobody.json.metadata.annotations || {})[OWNER], undefined);
  assert.equal(nobody.json.metadata.labels[HASH], undefined);

  for (const kind of ["pod", "sandbox"]) {
    const d = drv[kind];
    // describe: each owner as created, with its times.
    for (const [o, id] of Object.entries(made[kind])) {
      const k = await d.op({ op: "connect", id });
      assert.equal(k.rc, RC.OK, k.err);
      const r = await d.op({ op: "describe" });
      assert.equal(r.rc, RC.OK, r.err);
      const want = o === "alice2" ? "alice@example.com" : o === "old" ? "" : o;
      assert.equal(r.info.id, id);
      assert.equal(r.info.owner, want, `${kind} ${id}`);
      assert.ok(Math.abs(r.info.created_s - now()) < 120, `created_s ${r.info.created_s}`);
      assert.ok(Math.abs(r.info.expires_s - (now() + 300)) < 120, `expires_s ${r.info.expires_s}`);
    }
    // renew moves the expiry describe reports.
    await d.op({ op: "connect", id: made[kind]["bob smith"] });
    const rn = await d.op({ op: "renew", lifetime: 900 });
    assert.equal(rn.rc, RC.OK, rn.err);
    const after = await d.op({ op: "describe" });
    assert.ok(Math.abs(after.info.expires_s - (now() + 900)) < 60, `renewed expires_s ${after.info.expires_s}`);
    await d.op({ op: "close" });
  }

  // Connections answered from the cache describe the same owner.
  const cached = await driver({ ...settings, connection_reuse: 60 }, "tests/k8s/owner-driver");
  for (let i = 0; i < 2; i++) {
    assert.equal((await cached.op({ op: "connect", id: made.pod["bob smith"] })).rc, RC.OK);
    const r = await cached.op({ op: "describe" });
    assert.equal(r.info.owner, "bob smith");
    assert.ok(Math.abs(r.info.expires_s - (now() + 900)) < 60);
  }
  await cached.op({ op: "close" });

  // Not taskbox's, and a forged hash label with another owner's annotation.
  const aliceHash = alicePod.json.metadata.labels[HASH];
  const pod = (name, labels, annotations) => ({
    apiVersion: "v1", kind: "Pod",
    metadata: { name, labels, annotations },
    spec: { containers: [{ name: "main", image: "busybox", command: ["sleep", "3600"] }] },
  });
  let r = await fake.call("POST", path("pod"), pod("stranger", { [HASH]: aliceHash },
    { [OWNER]: "alice@example.com" }));
  assert.equal(r.status, 201, r.text);
  r = await fake.call("POST", path("pod"), pod("forged", { "app.kubernetes.io/managed-by": "taskbox", [HASH]: aliceHash },
    { [OWNER]: "mallory" }));
  assert.equal(r.status, 201, r.text);

  await fake.clearLog();
  for (const kind of ["pod", "sandbox"]) {
    const d = drv[kind];
    const all = Object.values(made[kind]);
    const extra = kind === "pod" ? [`forged.${r.json.metadata.uid}`] : [];
    assert.deepEqual(ids(await list(d)), [...all, ...extra].sort(), `${kind}: list(NULL)`);
    const alice = await list(d, "alice@example.com");
    assert.deepEqual(ids(alice), [made[kind]["alice@example.com"], made[kind].alice2].sort(), `${kind}: alice`);
    assert.ok(alice.items.every((i) => i.owner === "alice@example.com" && i.created_s > 0 && i.expires_s > now()));
    assert.deepEqual(ids(await list(d, "bob smith")), [made[kind]["bob smith"]], `${kind}: bob`);
    assert.deepEqual(ids(await list(d, "")), [made[kind][""], made[kind].old].sort(), `${kind}: no owner`);
    assert.deepEqual(ids(await list(d, "nobody")), []);
    // each stops the listing.
    assert.equal((await list(d, undefined, { stop_after: 2 })).items.length, 2);
  }
  // Every listing went through the label selector, one object per page.
  const lists = (await fake.log()).filter((e) => e.method === "GET" && /\/(pods|sandboxes)$/.test(e.path));
  assert.ok(lists.length > 20, `${lists.length} LIST pages`);
  for (const e of lists) {
    const q = new URLSearchParams(e.query);
    assert.equal(q.get("labelSelector").split(",")[0], "app.kubernetes.io/managed-by=taskbox", e.query);
    assert.ok(Number(q.get("limit")) > 0, e.query);
  }
  assert.ok(lists.some((e) => new URLSearchParams(e.query).get("continue")), "pages followed by continue");
  assert.ok(lists.some((e) => new URLSearchParams(e.query).get("labelSelector").includes(`${HASH}=${aliceHash}`)));

  for (const kind of ["pod", "sandbox"]) {
    const d = drv[kind];
    // Destroyed: not listed.
    assert.equal((await d.op({ op: "destroy", id: made[kind][""] })).rc, RC.OK);
    assert.ok(!ids(await list(d)).includes(made[kind][""]));
    // Being deleted (a finalizer holds it, with deletionTimestamp): not listed.
    const bob = nameOf(made[kind]["bob smith"]);
    r = await fake.call("PATCH", path(kind, bob), { metadata: { finalizers: ["test.taskbox.dev/hold"] } },
      "application/merge-patch+json");
    assert.equal(r.status, 200, r.text);
    assert.equal((await d.op({ op: "destroy", id: made[kind]["bob smith"] })).rc, RC.OK);
    r = await fake.call("GET", path(kind, bob));
    assert.equal(r.status, 200);
    assert.ok(r.json.metadata.deletionTimestamp, "held by its finalizer");
    assert.deepEqual(ids(await list(d, "bob smith")), []);
    assert.ok(!ids(await list(d)).includes(made[kind]["bob smith"]));
    r = await fake.call("PATCH", path(kind, bob), { metadata: { finalizers: null } }, "application/merge-patch+json");
    assert.equal(r.status, 200, r.text);
    assert.equal((await fake.call("GET", path(kind, bob))).status, 404);
    // Past its expiry: not listed.
    const a2 = nameOf(made[kind].alice2);
    r = await fake.call("PATCH", path(kind, a2), { metadata: { annotations: { "taskbox.dev/expires-at": "2020-01-01T00:00:00Z" } } },
      "application/merge-patch+json");
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(ids(await list(d, "alice@example.com")), [made[kind]["alice@example.com"]]);
  }
});
