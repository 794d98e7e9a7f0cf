// The fake's fidelity, judged by the official e2b SDK: pointed at the fake
// with E2B_API_URL and E2B_SANDBOX_URL it must create a sandbox, run a
// command, run a background command and wait for it, read and write files,
// connect again (also to a paused sandbox) and kill it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startFake } from "./fake/spawn.mjs";

let fake;
let Sandbox;

before(async () => {
  fake = await startFake();
  process.env.E2B_API_URL = fake.apiUrl;
  process.env.E2B_SANDBOX_URL = fake.sandboxUrl;
  process.env.E2B_API_KEY = fake.apiKey;
  ({ Sandbox } = await import("e2b"));
});

after(async () => {
  await fake.stop();
});

test("the SDK drives a sandbox's whole life against the fake", async () => {
  const sbx = await Sandbox.create({ timeoutMs: 60_000, envs: { SANDBOX_WIDE: "yes" } });
  assert.match(sbx.sandboxId, /^[a-z0-9]+$/);
  assert.equal((await sbx.commands.run("printf %s $SANDBOX_WIDE")).stdout, "yes", "envVars reach commands");

  const run = await sbx.commands.run("echo hello; echo oops >&2; exit 3").catch((e) => e);
  assert.equal(run.exitCode, 3, "a nonzero exit is reported");
  assert.equal(run.stdout, "hello\n");
  assert.equal(run.stderr, "oops\n");

  const ok = await sbx.commands.run("pwd; printf %s \"$GREETING\"", { envs: { GREETING: "hi there" } });
  assert.equal(ok.exitCode, 0);
  assert.match(ok.stdout, /\nhi there$/);
  const home = ok.stdout.split("\n")[0];

  const bg = await sbx.commands.run("sleep 0.3; echo done > bg.txt; echo finished", { background: true });
  assert.ok(bg.pid > 0, "a background command has a pid");
  const waited = await bg.wait();
  assert.equal(waited.exitCode, 0);
  assert.equal(waited.stdout, "finished\n");

  assert.equal(await sbx.files.read("bg.txt"), "done\n", "relative paths resolve in the home");
  assert.equal(await sbx.files.read(`${home}/bg.txt`), "done\n");

  await sbx.files.write("dir/sub/note.txt", "written by the SDK");
  const cat = await sbx.commands.run("cat dir/sub/note.txt");
  assert.equal(cat.stdout, "written by the SDK");
  await sbx.files.write("streamed.bin", new Blob([new Uint8Array([0, 1, 2, 255])]).stream());
  const bytes = await sbx.files.read("streamed.bin", { format: "bytes" });
  assert.deepEqual([...bytes], [0, 1, 2, 255]);

  await assert.rejects(sbx.files.read("missing.txt"), /does not exist/);

  const again = await Sandbox.connect(sbx.sandboxId);
  assert.equal((await again.commands.run("cat bg.txt")).stdout, "done\n");

  assert.equal(await fake.pause(sbx.sandboxId), 204);
  const resumed = await Sandbox.connect(sbx.sandboxId);
  assert.equal((await resumed.commands.run("echo back")).stdout, "back\n", "connect resumes a paused sandbox");

  await resumed.kill();
  assert.equal(await fake.info(sbx.sandboxId), null, "the killed sandbox is gone");
  await assert.rejects(resumed.commands.run("true"), (e) => e.name === "SandboxNotFoundError");
});

test("the SDK sees the service's errors from the fake", async () => {
  await assert.rejects(Sandbox.create({ apiKey: "e2b_" + "0".repeat(40) }), (e) => e.name === "AuthenticationError");
  await assert.rejects(Sandbox.connect("inosuchsandbox"), (e) => /not found/i.test(e.message));

  const sbx = await Sandbox.create();
  const timedOut = await sbx.commands.run("sleep 5", { timeoutMs: 300 }).catch((e) => e);
  assert.ok(timedOut instanceof Error, "a command past its timeout fails");
  await sbx.kill();
});

// A body the client streams (Transfer-Encoding: chunked), split at awkward
// places, as a proxy or an SDK may send it.
function chunked(parts) {
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(typeof p === "string" ? new TextEncoder().encode(p) : p);
      c.close();
    },
  });
}

test("the fake takes chunked request bodies on both planes", async () => {
  await fake.clearRequests();
  const res = await fetch(`${fake.apiUrl}/v2/sandboxes`, {
    method: "POST",
    headers: { "X-API-Key": fake.apiKey, "Content-Type": "application/json" },
    body: chunked(['{"templ', 'ateID":"base",', '"timeout":30}']),
    duplex: "half",
  });
  assert.equal(res.status, 201);
  const sbx = await res.json();
  const reqs = await fake.requests();
  assert.equal(reqs.find((r) => r.url === "/v2/sandboxes").headers["transfer-encoding"], "chunked");

  const msg = Buffer.from(JSON.stringify({ process: { cmd: "echo", args: ["chunks"] }, stdin: false }));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(msg.length, 1);
  const envelope = Buffer.concat([head, msg]);
  const start = await fetch(`${fake.sandboxUrl}/process.Process/Start`, {
    method: "POST",
    headers: {
      "Content-Type": "application/connect+json",
      "Connect-Protocol-Version": "1",
      "X-Access-Token": sbx.envdAccessToken,
      "E2b-Sandbox-Id": sbx.sandboxID,
      "E2b-Sandbox-Port": "49983",
    },
    body: chunked([envelope.subarray(0, 3), envelope.subarray(3, 9), envelope.subarray(9)]),
    duplex: "half",
  });
  assert.equal(start.status, 200);
  const body = Buffer.from(await start.arrayBuffer());
  const frames = [];
  for (let at = 0; at < body.length; ) {
    const len = body.readUInt32BE(at + 1);
    frames.push({ flags: body[at], msg: JSON.parse(body.subarray(at + 5, at + 5 + len)) });
    at += 5 + len;
  }
  const out = frames.map((f) => f.msg.event?.data?.stdout).filter(Boolean);
  assert.equal(Buffer.concat(out.map((b) => Buffer.from(b, "base64"))).toString(), "chunks\n");
  assert.equal(frames.at(-1).flags, 2, "the stream ends with an end-of-stream envelope");
  assert.ok(frames.some((f) => f.msg.event?.end?.exited), "the end event says the process exited");
});

// Every item of a listing, page after page, and the number of pages.
async function listAll(query, limit) {
  const paginator = Sandbox.list({ query, limit });
  const items = [];
  let pages = 0;
  while (paginator.hasNext) {
    items.push(...(await paginator.nextItems()));
    pages++;
  }
  return { items, pages };
}

test("the SDK's metadata: set at create, read back, and listed by a metadata query page by page", async () => {
  const odd = "bob smith/ops&x=1%+ü";
  const made = [];
  for (const owner of ["alice@example.com", odd, odd, null, odd]) {
    const metadata = owner ? { taskbox: "1", taskbox_owner: owner } : { taskbox: "1" };
    made.push({ owner, sbx: await Sandbox.create({ timeoutMs: 60_000, metadata }) });
  }
  const unrelated = await Sandbox.create({ timeoutMs: 60_000, metadata: { taskbox_owner: odd } });
  try {
    const info = await Sandbox.getInfo(made[1].sbx.sandboxId);
    assert.deepEqual(info.metadata, { taskbox: "1", taskbox_owner: odd }, "getInfo gives the metadata back");
    assert.ok(info.startedAt instanceof Date && info.endAt > info.startedAt);

    const ids = (items) => items.map((s) => s.sandboxId).sort();
    const want = (pred) => made.filter(pred).map((m) => m.sbx.sandboxId).sort();

    await fake.clearRequests();
    const bob = await listAll({ metadata: { taskbox: "1", taskbox_owner: odd } }, 2);
    assert.deepEqual(ids(bob.items), want((m) => m.owner === odd), "exactly the owner's, escaped as the SDK escapes");
    assert.equal(bob.pages, 2, "three sandboxes in pages of two");
    for (const s of bob.items) assert.equal(s.metadata.taskbox_owner, odd);
    const urls = (await fake.requests()).filter((r) => r.url.startsWith("/v2/sandboxes?")).map((r) => r.url);
    assert.equal(urls.length, 2);
    assert.match(urls[1], /nextToken=/, "the second page names the cursor");

    const tagged = await listAll({ metadata: { taskbox: "1" } }, 1);
    assert.deepEqual(ids(tagged.items), want(() => true), "every tagged one, none twice, one per page");
    assert.equal(tagged.pages, made.length);
    const alice = await listAll({ metadata: { taskbox: "1", taskbox_owner: "alice@example.com" } });
    assert.deepEqual(ids(alice.items), want((m) => m.owner === "alice@example.com"));
    const nobody = await listAll({ metadata: { taskbox: "1", taskbox_owner: "bob smith" } });
    assert.deepEqual(nobody.items, [], "a value that is a prefix matches nothing");
    const all = await listAll({});
    assert.ok(ids(all.items).includes(unrelated.sandboxId), "no query: every sandbox");
    const newest = all.items.map((s) => s.startedAt.getTime());
    assert.deepEqual(newest, [...newest].sort((a, b) => b - a), "newest first");

    await fake.pause(made[0].sbx.sandboxId);
    const running = await listAll({ metadata: { taskbox: "1" }, state: ["running"] });
    assert.ok(!ids(running.items).includes(made[0].sbx.sandboxId), "state filters");
    const paused = await listAll({ metadata: { taskbox: "1" }, state: ["paused"] });
    assert.deepEqual(ids(paused.items), [made[0].sbx.sandboxId]);
    assert.equal(paused.items[0].state, "paused");

    await made[2].sbx.kill();
    const after = await listAll({ metadata: { taskbox: "1", taskbox_owner: odd } });
    assert.deepEqual(ids(after.items), want((m) => m.owner === odd && m !== made[2]), "a killed sandbox is not listed");
  } finally {
    for (const { sbx } of made) await Sandbox.kill(sbx.sandboxId);
    await Sandbox.kill(unrelated.sandboxId);
  }
});
