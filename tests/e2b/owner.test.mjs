// Ownership on the e2b plugin (ABI 1.5) against the fake: create records
// the owner in the sandbox's metadata, describe answers from what connect
// learnt (or one request), list asks the API's metadata query page by page
// and filters again on its side, and only taskbox's sandboxes show.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startFake } from "./fake/spawn.mjs";
import { Driver, RC } from "./plugin-driver.mjs";

let fake;
const drivers = [];

before(async () => {
  fake = await startFake();
});

after(async () => {
  const codes = [];
  for (const d of drivers) codes.push(await d.close());
  await fake.stop();
  drivers.forEach((d, i) => assert.equal(codes[i], 0, d.stderr));
});

async function driver(extra = {}) {
  const d = new Driver({ E2B_API_KEY: fake.apiKey });
  drivers.push(d);
  const init = await d.op({ op: "init", settings: { api_url: fake.apiUrl, sandbox_url: fake.sandboxUrl, ...extra } });
  assert.equal(init.rc, RC.OK, init.err);
  return d;
}

async function create(d, owner, more = {}) {
  const c = await d.op({ op: "create", lifetime: 300, ...(owner === undefined ? {} : { owner }), ...more });
  assert.equal(c.rc, RC.OK, c.err);
  return c.id;
}

async function describe(d, id) {
  const k = await d.op({ op: "connect", id });
  assert.equal(k.rc, RC.OK, k.err);
  const r = await d.op({ op: "describe" });
  assert.equal(r.rc, RC.OK, r.err);
  await d.op({ op: "close" });
  return r.info;
}

async function list(d, owner, more = {}) {
  const r = await d.op({ op: "list", ...(owner === undefined ? {} : { owner }), ...more });
  assert.equal(r.rc, RC.OK, r.err);
  return r.items;
}

// Makes a sandbox straight through the API, as another client would.
async function apiCreate(metadata) {
  const res = await fetch(`${fake.apiUrl}/v2/sandboxes`, {
    method: "POST",
    headers: { "X-API-Key": fake.apiKey, "Content-Type": "application/json" },
    body: JSON.stringify({ templateID: "base", timeout: 300, metadata }),
  });
  assert.equal(res.status, 201);
  return (await res.json()).sandboxID;
}

const apiRequests = async () => (await fake.requests()).filter((r) => r.plane === "api" && !r.url.startsWith("/_fake/"));
const ids = (items) => items.map((i) => i.id).sort();
const OWNERS = ["alice@example.com", "bob smith", null];

test("create records the owner in the metadata and describe answers it with the times", async () => {
  // connect extends a sandbox to default_lifetime: shorter than create's.
  const d = await driver({ default_lifetime: 60 });
  const t0 = Math.floor(Date.now() / 1000);
  for (const owner of OWNERS) {
    const id = await create(d, owner ?? undefined);
    const meta = (await fake.info(id)).metadata;
    assert.deepEqual(meta, owner ? { taskbox: "1", taskbox_owner: owner } : { taskbox: "1" }, "the API holds the owner");
    const info = await describe(d, id);
    assert.equal(info.id, id);
    assert.equal(info.owner, owner ?? "", "describe gives the owner back");
    assert.ok(Math.abs(info.created_s - t0) <= 5, `created_s ${info.created_s} is about now (${t0})`);
    assert.ok(Math.abs(info.expires_s - (t0 + 300)) <= 5, `expires_s ${info.expires_s} is the lifetime from now`);
  }
  const empty = await create(d, "");
  assert.equal((await describe(d, empty)).owner, "", "an empty owner is no owner");
  const old = await create(d, "alice@example.com", { old_host: true });
  assert.equal((await describe(d, old)).owner, "", "a create_req that ends before owner records none");
  const untagged = await apiCreate({});
  assert.equal((await describe(d, untagged)).owner, "", "a sandbox made before taskbox recorded owners has none");
});

test("an owner the ABI does not allow is INVALID and nothing is made", async () => {
  const d = await driver();
  const before = (await list(d)).length;
  for (const owner of ["a\nb", "tab\there", "x".repeat(256), "\x7f", "c1\u0085"]) {
    const c = await d.op({ op: "create", lifetime: 60, owner });
    assert.equal(c.rc, RC.INVALID, JSON.stringify(owner));
    assert.match(c.err, /owner/, "the message names the field");
  }
  const ok = await create(d, "ü/ops: x@y " + "z".repeat(200));
  assert.equal((await describe(d, ok)).owner, "ü/ops: x@y " + "z".repeat(200), "UTF-8, spaces and punctuation are kept");
  assert.equal((await list(d)).length, before + 1);
  await d.op({ op: "destroy", id: ok });
});

test("describe costs at most one request, then none within connection_reuse; renew keeps expires_s right", async () => {
  const d = await driver({ connection_reuse: 60 });
  const id = await create(d, "alice@example.com");
  await fake.clearRequests();
  const first = await describe(d, id);
  const reqs = await apiRequests();
  assert.deepEqual(
    reqs.map((r) => `${r.method} ${r.url}`),
    [`POST /v2/sandboxes/${id}/connect`, `GET /sandboxes/${id}`],
    "one connect, one GET",
  );
  await fake.clearRequests();
  assert.deepEqual(await describe(d, id), first, "the same answer");
  assert.deepEqual(await apiRequests(), [], "from what connect and describe learnt");

  assert.equal((await d.op({ op: "connect", id })).rc, RC.OK);
  const t0 = Math.floor(Date.now() / 1000);
  const renew = await d.op({ op: "renew", lifetime: 900 });
  assert.equal(renew.rc, RC.OK, renew.err);
  const after = await d.op({ op: "describe" });
  await d.op({ op: "close" });
  assert.ok(Math.abs(after.info.expires_s - (t0 + 900)) <= 5, "renew moves expires_s");
  assert.equal(after.info.owner, "alice@example.com");
  const cached = await describe(d, id);
  assert.equal(cached.expires_s, after.info.expires_s, "and the next connection sees it");
  const endAt = Math.floor(Date.parse((await fake.info(id)).endAt) / 1000);
  assert.ok(Math.abs(endAt - after.info.expires_s) <= 3, `the API agrees (${endAt})`);

  const fresh = await driver({ connection_reuse: 0, default_lifetime: 60 });
  await fake.clearRequests();
  const other = await describe(fresh, id);
  assert.equal(other.expires_s, endAt, "another process reads the same");
  assert.equal(other.owner, "alice@example.com");
  assert.equal((await apiRequests()).filter((r) => r.method === "GET").length, 1, "without reuse: one GET");
});

test("describe on a sandbox killed behind the connection's back is GONE", async () => {
  const d = await driver({ connection_reuse: 0 });
  const id = await create(d, "bob smith");
  assert.equal((await d.op({ op: "connect", id })).rc, RC.OK);
  await fake.vanish(id);
  const r = await d.op({ op: "describe" });
  assert.equal(r.rc, RC.GONE, r.err);
  await d.op({ op: "close" });
});

test("list: by owner only that owner's, all without one, only taskbox's, not the destroyed, page after page", async () => {
  await fake.listPageMax(0);
  const d = await driver();
  for (const s of await list(d)) await d.op({ op: "destroy", id: s.id });
  const made = [];
  for (let i = 0; i < 3; i++) for (const owner of OWNERS) made.push({ owner: owner ?? "", id: await create(d, owner ?? undefined) });
  const stranger = await apiCreate({ taskbox_owner: "alice@example.com" });
  const unrelated = await apiCreate({});
  const mine = (owner) => made.filter((m) => owner === undefined || m.owner === owner).map((m) => m.id).sort();

  for (const owner of ["alice@example.com", "bob smith"]) {
    const items = await list(d, owner);
    assert.deepEqual(ids(items), mine(owner), `list(${owner}) is exactly ${owner}'s`);
    for (const i of items) {
      assert.equal(i.owner, owner);
      assert.ok(i.created_s > 0 && i.expires_s > i.created_s);
    }
  }
  assert.deepEqual(ids(await list(d, "")), mine(""), "list(\"\"): the ones without an owner");
  assert.deepEqual(await list(d, "bob"), [], "a prefix of an owner is another owner");
  const all = await list(d);
  assert.deepEqual(ids(all), mine(undefined), "list(NULL): every one of taskbox's");
  assert.ok(!ids(all).includes(stranger) && !ids(all).includes(unrelated), "sandboxes not tagged as taskbox's are not listed");

  await fake.clearRequests();
  await list(d, "bob smith");
  const q = (await apiRequests()).find((r) => r.url.startsWith("/v2/sandboxes?")).url;
  assert.match(q, /metadata=taskbox%3D1%26taskbox_owner%3Dbob%252520smith&/, "the owner is asked of the API");

  const gone = made.find((m) => m.owner === "bob smith");
  assert.equal((await d.op({ op: "destroy", id: gone.id })).rc, RC.OK);
  made.splice(made.indexOf(gone), 1);
  assert.deepEqual(ids(await list(d, "bob smith")), mine("bob smith"), "a destroyed sandbox is not listed");

  await fake.listPageMax(2);
  await fake.clearRequests();
  assert.deepEqual(ids(await list(d)), mine(undefined), "pages of two: none lost, none twice");
  const pages = (await apiRequests()).filter((r) => r.url.startsWith("/v2/sandboxes?"));
  assert.equal(pages.length, Math.ceil(made.length / 2), "every page asked once");
  assert.ok(pages.slice(1).every((r) => /&nextToken=/.test(r.url)), "later pages name the cursor");

  await fake.clearRequests();
  const some = await list(d, undefined, { stop_after: 3 });
  assert.equal(some.length, 3, "each returning nonzero stops the listing");
  assert.equal((await apiRequests()).length, 2, "and no further page is asked");
  await fake.listPageMax(0);
});

test("list filters on its side too when the API ignores the query", async () => {
  const d = await driver();
  const alice = await create(d, "alice@example.com");
  const bob = await create(d, "bob smith");
  const stranger = await apiCreate({ taskbox_owner: "alice@example.com" });
  await fake.faults({ ignore_metadata_query: true });
  try {
    const items = await list(d, "alice@example.com");
    assert.ok(ids(items).includes(alice));
    assert.ok(!ids(items).includes(bob) && !ids(items).includes(stranger), "only alice's, only taskbox's");
    assert.ok(items.every((i) => i.owner === "alice@example.com"));
    assert.ok(!ids(await list(d)).includes(stranger));
  } finally {
    await fake.faults({});
  }
});

test("a paused sandbox is listed with no expiry; a list the API refuses fails with its code", async () => {
  const d = await driver();
  const id = await create(d, "bob smith");
  assert.equal(await fake.pause(id), 204);
  const item = (await list(d, "bob smith")).find((i) => i.id === id);
  assert.ok(item, "a paused sandbox is live");
  assert.equal(item.expires_s, 0, "a paused sandbox does not expire until it runs again");
  const bad = new Driver({ E2B_API_KEY: "e2b_" + "0".repeat(40) });
  drivers.push(bad);
  await bad.op({ op: "init", settings: { api_url: fake.apiUrl, sandbox_url: fake.sandboxUrl } });
  const r = await bad.op({ op: "list" });
  assert.equal(r.rc, RC.AUTH, r.err);
  assert.match(r.err, /list/);
  const inv = await d.op({ op: "list", owner: "a\nb" });
  assert.equal(inv.rc, RC.INVALID);
});
