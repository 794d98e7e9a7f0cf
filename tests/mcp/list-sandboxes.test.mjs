// list_sandboxes through the SDK client on stdio (principal local, an
// admin), with two instances: the local provider and fake_abi14, a plugin
// built against the frozen ABI 1.4 header, which has no list op.
//   - the local instance's sandboxes are listed with their owner, provider
//     and RFC 3339 times, ordered by sandbox_id, paged by cursor
//   - the old instance is named in unlisted, saying it cannot list; the
//     call still answers
//   - a killed sandbox is listed no more; a cursor it never gave is refused
//     naming the field
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { callTool, scratchDir, startServer, writeConfig } from "../lib/client.mjs";

let server, dir;

before(async () => {
  dir = scratchDir("taskbox-list-sandboxes-");
  const cfg = writeConfig(dir, {
    default: "work",
    providers: {
      work: { plugin: "local", settings: { root: join(dir, "state") } },
      old: { plugin: "fake_abi14" },
    },
  });
  const fakes = process.env.TASKBOX_FAKEPLUGIN_DIR;
  assert.ok(fakes, "run through make check (TASKBOX_FAKEPLUGIN_DIR)");
  server = await startServer({
    args: ["--config", cfg],
    env: {
      TASKBOX_PLUGIN_PATH: `${process.env.TASKBOX_PLUGIN_PATH || ""}:${fakes}`,
      PATH: `/usr/bin:/bin:${process.env.PATH || ""}`,
    },
  });
});

after(async () => {
  if (server) await server.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function ok(name, args) {
  const r = await callTool(server.client, name, args);
  assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r)}`);
  return r.structuredContent;
}

test("list_sandboxes lists every sandbox of the instances that can list, and names the one that cannot", { timeout: 120000 }, async () => {
  const made = [];
  for (let i = 0; i < 3; i++) made.push((await ok("create_sandbox", { timeout: 600 })).sandbox_id);
  const all = await ok("list_sandboxes", {});
  assert.deepEqual(all.sandboxes.map((s) => s.sandbox_id), [...made].sort());
  for (const s of all.sandboxes) {
    assert.equal(s.owner, "local");
    assert.equal(s.provider, "work");
    assert.match(s.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const life = Date.parse(s.expires_at) - Date.parse(s.created_at);
    assert.ok(life >= 598000 && life <= 602000, `lifetime ${life} ms`);
  }
  assert.equal(all.unlisted.length, 1, JSON.stringify(all.unlisted));
  assert.equal(all.unlisted[0].provider, "old");
  assert.match(all.unlisted[0].error, /provider instance old cannot list its sandboxes .*offers no list/);
  assert.equal(all.next_cursor, null);

  // Two pages of two and one; the same sandboxes in the same order.
  const p1 = await ok("list_sandboxes", { limit: 2 });
  assert.equal(p1.sandboxes.length, 2);
  const p2 = await ok("list_sandboxes", { limit: 2, cursor: p1.next_cursor });
  assert.equal(p2.next_cursor, null);
  assert.deepEqual([...p1.sandboxes, ...p2.sandboxes].map((s) => s.sandbox_id), all.sandboxes.map((s) => s.sandbox_id));

  // An admin may ask for every owner's, or one owner's.
  assert.equal((await ok("list_sandboxes", { owner: "*" })).sandboxes.length, 3);
  assert.equal((await ok("list_sandboxes", { owner: "nobody" })).sandboxes.length, 0);

  await ok("kill_sandbox", { sandbox_id: made[1] });
  const left = await ok("list_sandboxes", {});
  assert.deepEqual(left.sandboxes.map((s) => s.sandbox_id), [made[0], made[2]].sort());

  const bad = await callTool(server.client, "list_sandboxes", { cursor: "not-a-cursor" });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /cursor: not a next_cursor that list_sandboxes returned/);
});
