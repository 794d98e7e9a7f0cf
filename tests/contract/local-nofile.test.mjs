// Under a low open-file limit the server degrades gracefully: with
// RLIMIT_NOFILE at 32, 60 running tasks are started, each read twice by
// get_task, and the sandbox is killed, with no call failing (the caches of
// descriptors, pidfds and idle connections are sized from the limit). The
// server runs without the test wrapper: valgrind needs descriptors of its
// own.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { scratchDir } from "../lib/client.mjs";

let client;
after(async () => {
  if (client) await client.close().catch(() => {});
});

test("60 running tasks under RLIMIT_NOFILE 32: every call answers", { timeout: 300000 }, async () => {
  const bin = process.env.TASKBOX_BIN;
  assert.ok(bin, "TASKBOX_BIN is not set: run through `make check`");
  const transport = new StdioClientTransport({
    command: "sh",
    args: ["-c", 'ulimit -n 32 && exec "$0" serve', bin],
    env: { ...process.env, XDG_STATE_HOME: scratchDir("taskbox-nofile-") },
    stderr: "inherit",
  });
  client = new Client({ name: "nofile", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    assert.ok(!r.isError, `${name}: ${r.content?.[0]?.text}`);
    return r.structuredContent;
  };
  const sb = (await call("create_sandbox", {})).sandbox_id;
  const ids = [];
  for (let i = 0; i < 60; i++) ids.push((await call("start_task", { sandbox_id: sb, command: "sleep 120" })).task_id);
  for (let round = 0; round < 2; round++)
    for (const task_id of ids) assert.equal((await call("get_task", { sandbox_id: sb, task_id })).state, "running");
  await call("kill_sandbox", { sandbox_id: sb });
});
