// The E2B fake's added latency (server.mjs --latency-ms,
// TASKBOX_E2B_FAKE_LATENCY_MS, POST /_fake/latency): every request on
// either plane is answered at least that long after it was sent, a Connect
// stream's first envelope included, and the official e2b SDK still judges
// the fake correct with 50 ms on every request.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startFake } from "./fake/spawn.mjs";

const SLOW_MS = 250;
const SDK_MS = 50;

let slow; // started with --latency-ms SLOW_MS
let byEnv; // started with TASKBOX_E2B_FAKE_LATENCY_MS
let sdkFake; // SDK_MS, for the SDK
let Sandbox;

before(async () => {
  slow = await startFake({ latencyMs: SLOW_MS });
  byEnv = await startFake({ env: { TASKBOX_E2B_FAKE_LATENCY_MS: String(SLOW_MS + 100) } });
  sdkFake = await startFake({ latencyMs: SDK_MS });
  // The SDK reads these at each call; the sandboxes below are sdkFake's.
  process.env.E2B_API_URL = sdkFake.apiUrl;
  process.env.E2B_SANDBOX_URL = sdkFake.sandboxUrl;
  process.env.E2B_API_KEY = sdkFake.apiKey;
  ({ Sandbox } = await import("e2b"));
});

after(async () => {
  for (const f of [slow, byEnv, sdkFake]) if (f) await f.stop();
});

// fetch, timed from the call to the whole body (or, with firstByte, to
// the body's first chunk).
async function timed(url, init = {}, { firstByte = false } = {}) {
  const t0 = performance.now();
  const res = await fetch(url, init);
  const chunks = [];
  let first = NaN;
  if (!res.body) return { status: res.status, body: Buffer.alloc(0), ms: performance.now() - t0 };
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (Number.isNaN(first)) first = performance.now() - t0;
    chunks.push(value);
  }
  const ms = performance.now() - t0;
  return { status: res.status, body: Buffer.concat(chunks), ms: firstByte ? first : ms };
}

async function newSandbox(fake) {
  const r = await fetch(`${fake.apiUrl}/v2/sandboxes`, {
    method: "POST",
    headers: { "X-API-Key": fake.apiKey, "Content-Type": "application/json" },
    body: JSON.stringify({ templateID: "base", timeout: 60 }),
  });
  assert.equal(r.status, 201);
  return r.json();
}

const envdHeaders = (sbx) => ({
  "X-Access-Token": sbx.envdAccessToken,
  "E2b-Sandbox-Id": sbx.sandboxID,
  "E2b-Sandbox-Port": "49983",
});

function startEnvelope(cmd) {
  const msg = Buffer.from(JSON.stringify({ process: { cmd: "/bin/sh", args: ["-c", cmd] }, stdin: false }));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(msg.length, 1);
  return Buffer.concat([head, msg]);
}

test("every request on either plane takes at least the latency given by --latency-ms", async () => {
  assert.deepEqual(await slow.latency(), { ms: SLOW_MS });
  const health = await timed(`${slow.apiUrl}/health`);
  assert.equal(health.status, 200);
  assert.ok(health.ms >= SLOW_MS, `control plane /health: ${health.ms.toFixed(1)} ms`);

  const t0 = performance.now();
  const sbx = await newSandbox(slow);
  assert.ok(performance.now() - t0 >= SLOW_MS, "POST /v2/sandboxes");

  const envdHealth = await timed(`${slow.sandboxUrl}/health`, { headers: envdHeaders(sbx) });
  assert.equal(envdHealth.status, 204);
  assert.ok(envdHealth.ms >= SLOW_MS, `envd /health: ${envdHealth.ms.toFixed(1)} ms`);

  const upload = new FormData();
  upload.append("file", new Blob(["small\n"]), "small.txt");
  const up = await timed(`${slow.sandboxUrl}/files?path=small.txt`, { method: "POST", headers: envdHeaders(sbx), body: upload });
  assert.equal(up.status, 200, up.body.toString());
  assert.ok(up.ms >= SLOW_MS, `POST /files: ${up.ms.toFixed(1)} ms`);
  const down = await timed(`${slow.sandboxUrl}/files?path=small.txt`, { headers: envdHeaders(sbx) });
  assert.equal(down.status, 200);
  assert.equal(down.body.toString(), "small\n");
  assert.ok(down.ms >= SLOW_MS, `GET /files: ${down.ms.toFixed(1)} ms`);

  // A Connect stream: its first envelope comes no sooner than the latency,
  // and the stream is whole.
  const stream = await timed(
    `${slow.sandboxUrl}/process.Process/Start`,
    {
      method: "POST",
      headers: { ...envdHeaders(sbx), "Content-Type": "application/connect+json", "Connect-Protocol-Version": "1" },
      body: startEnvelope("echo streamed"),
    },
    { firstByte: true },
  );
  assert.equal(stream.status, 200);
  assert.ok(stream.ms >= SLOW_MS, `Process/Start's first byte: ${stream.ms.toFixed(1)} ms`);
  assert.match(stream.body.toString(), /"end"/, "the stream runs to its end event");

  // The same on a kept-alive connection (fetch keeps connections alive).
  for (let i = 0; i < 2; i++) {
    const again = await timed(`${slow.apiUrl}/health`);
    assert.ok(again.ms >= SLOW_MS, `control plane /health again: ${again.ms.toFixed(1)} ms`);
  }
});

test("TASKBOX_E2B_FAKE_LATENCY_MS sets the latency, POST /_fake/latency changes it", async () => {
  assert.deepEqual(await byEnv.latency(), { ms: SLOW_MS + 100 });
  const a = await timed(`${byEnv.apiUrl}/health`);
  assert.ok(a.ms >= SLOW_MS + 100, `with the variable: ${a.ms.toFixed(1)} ms`);
  assert.deepEqual(await byEnv.setLatency(SLOW_MS + 200), { ms: SLOW_MS + 200 });
  const b = await timed(`${byEnv.apiUrl}/health`);
  assert.ok(b.ms >= SLOW_MS + 200, `after the switch: ${b.ms.toFixed(1)} ms`);
  assert.deepEqual(await byEnv.setLatency(0), { ms: 0 });
  assert.equal((await timed(`${byEnv.apiUrl}/health`)).status, 200, "no latency still answers");
});

test("the fake refuses a latency that is not a number of ms", async () => {
  await assert.rejects(startFake({ latencyMs: "soon" }), /exited with 2/);
  await assert.rejects(startFake({ env: { TASKBOX_E2B_FAKE_LATENCY_MS: "-5" } }), /exited with 2/);
  await assert.rejects(startFake({ args: ["--no-such-flag"] }), /exited with 2/);
  const r = await fetch(`${slow.apiUrl}/_fake/latency`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"ms": -1}' });
  assert.equal(r.status, 400);
  assert.deepEqual(await slow.latency(), { ms: SLOW_MS }, "a refused change leaves the latency as it was");
});

test(`the SDK drives a sandbox's whole life against the fake with ${SDK_MS} ms on every request`, async () => {
  await sdkFake.clearRequests();
  const t0 = performance.now();
  const sbx = await Sandbox.create({ timeoutMs: 60_000, envs: { SANDBOX_WIDE: "yes" } });
  assert.ok(performance.now() - t0 >= SDK_MS, "the SDK's requests meet the latency");
  assert.equal((await sbx.commands.run("printf %s $SANDBOX_WIDE")).stdout, "yes");

  const run = await sbx.commands.run("echo hello; echo oops >&2; exit 3").catch((e) => e);
  assert.equal(run.exitCode, 3);
  assert.equal(run.stdout, "hello\n");
  assert.equal(run.stderr, "oops\n");

  const bg = await sbx.commands.run("sleep 0.3; echo done > bg.txt; echo finished", { background: true });
  assert.ok(bg.pid > 0);
  const waited = await bg.wait();
  assert.equal(waited.exitCode, 0);
  assert.equal(waited.stdout, "finished\n");
  assert.equal(await sbx.files.read("bg.txt"), "done\n");

  await sbx.files.write("dir/note.txt", "written through latency");
  assert.equal((await sbx.commands.run("cat dir/note.txt")).stdout, "written through latency");
  await assert.rejects(sbx.files.read("missing.txt"), /does not exist/);

  const timedOut = await sbx.commands.run("sleep 5", { timeoutMs: 300 }).catch((e) => e);
  assert.ok(timedOut instanceof Error, "a command past its timeout fails");

  const again = await Sandbox.connect(sbx.sandboxId);
  assert.equal((await again.commands.run("cat bg.txt")).stdout, "done\n");
  assert.equal(await sdkFake.pause(sbx.sandboxId), 204);
  const resumed = await Sandbox.connect(sbx.sandboxId);
  assert.equal((await resumed.commands.run("echo back")).stdout, "back\n", "connect resumes a paused sandbox");

  await resumed.kill();
  assert.equal(await sdkFake.info(sbx.sandboxId), null, "the killed sandbox is gone");
  await assert.rejects(resumed.commands.run("true"), (e) => e.name === "SandboxNotFoundError");

  const reqs = await sdkFake.requests();
  assert.ok(reqs.some((r) => r.plane === "api") && reqs.some((r) => r.plane === "envd"), "both planes were used");
});
