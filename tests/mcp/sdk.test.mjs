// The official MCP TypeScript SDK client against the real binary: version
// negotiation, listing and calling tools, argument errors, progress,
// cancellation and concurrency. Any transport or schema error fails.
import { test } from "node:test";
import assert from "node:assert/strict";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { startServer, callTool } from "../lib/client.mjs";
import { spawnRaw, initialize } from "./raw.mjs";

const VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

async function withServer(args, fn) {
  const server = await startServer({ args });
  const errors = [];
  server.client.onerror = (e) => errors.push(e);
  try {
    await fn(server.client);
  } finally {
    await server.close();
  }
  assert.deepEqual(errors.map(String), [], "transport or schema errors");
}

function textJson(result) {
  const block = result.content.find((c) => c.type === "text");
  assert.ok(block, "a text block");
  return JSON.parse(block.text);
}

test("the SDK negotiates, lists and calls the fixture tools", async () => {
  await withServer(["--test-tools"], async (client) => {
    const info = client.getServerVersion();
    assert.equal(info.name, "taskbox");
    assert.match(info.version, /^\d+\.\d+/);
    assert.deepEqual(client.getServerCapabilities().tools, { listChanged: false });

    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ["test_simple_text", "test_error_handling", "test_echo", "test_sleep"])
      assert.ok(names.includes(n), `${n} listed`);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, "object", `${t.name} inputSchema`);
      assert.equal(t.inputSchema.additionalProperties, false, `${t.name} closed`);
      assert.ok(t.description, `${t.name} description`);
    }

    // listTools first: the SDK then checks structuredContent against outputSchema.
    const simple = await callTool(client, "test_simple_text");
    assert.equal(simple.isError, false);
    assert.deepEqual(simple.structuredContent, {
      text: "This is a simple text response for testing.",
    });
    assert.deepEqual(textJson(simple), simple.structuredContent);

    const echo = await callTool(client, "test_echo", {
      name: "ab_c",
      text: "éé😀",
      count: 10,
      ratio: 0.5,
      mode: "slow",
      tags: ["x"],
      nested: { x: 1 },
    });
    assert.equal(echo.isError, false);
    assert.equal(echo.structuredContent.echo.text, "éé😀");
    assert.deepEqual(textJson(echo), echo.structuredContent);

    const failing = await callTool(client, "test_error_handling");
    assert.equal(failing.isError, true);
    assert.match(failing.content[0].text, /intentionally returns an error/);
  });
});

test("bad arguments come back as isError results naming field and rule", async () => {
  await withServer(["--test-tools"], async (client) => {
    await client.listTools();
    const cases = [
      [{}, /field 'name': missing/],
      [{ name: "ab", extra: 1 }, /field 'extra': unknown field/],
      [{ name: 7 }, /field 'name': wrong type: expected string/],
      [{ name: "ab", count: 0 }, /field 'count': out of range/],
      [{ name: "ab", count: 2.5 }, /field 'count': wrong type: expected integer/],
      [{ name: "ab", ratio: 1 }, /field 'ratio': out of range/],
      [{ name: "abcdefghi" }, /field 'name': too long: 9 characters, at most 8/],
      [{ name: "ab", text: "ééééé" }, /field 'text': too long: 5 characters/],
      [{ name: "AB" }, /field 'name': bad pattern/],
      [{ name: "ab", mode: "medium" }, /field 'mode': not one of the allowed values/],
      [{ name: "ab", tags: [1] }, /field 'tags\[0\]': wrong type/],
      [{ name: "ab", nested: { y: 1 } }, /field 'nested.y': unknown field/],
    ];
    for (const [args, want] of cases) {
      const r = await callTool(client, "test_echo", args);
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.equal(r.structuredContent, undefined);
      assert.match(textJson(r).error, want, JSON.stringify(args));
    }
  });
});

test("an unknown tool is a -32602 protocol error", async () => {
  await withServer(["--test-tools"], async (client) => {
    await assert.rejects(callTool(client, "no_such_tool"), (e) => {
      assert.ok(e instanceof McpError);
      assert.equal(e.code, -32602);
      assert.match(e.message, /Unknown tool: no_such_tool/);
      return true;
    });
    assert.deepEqual(await client.ping(), {});
  });
});

test("fixture tools are absent without the test switch", async () => {
  await withServer([], async (client) => {
    const { tools } = await client.listTools();
    assert.ok(!tools.some((t) => /^test_|json_schema_2020_12/.test(t.name)));
    await assert.rejects(callTool(client, "test_simple_text"), /Unknown tool/);
  });
});

test("progress, cancellation and a ping that never waits for a call", async () => {
  await withServer(["--test-tools", "--workers", "2"], async (client) => {
    await client.listTools();
    const seen = [];
    const r = await callTool(client, "test_tool_with_progress", {}, {
      onprogress: (p) => seen.push(p),
    });
    assert.equal(r.isError, false);
    assert.deepEqual(seen.map((p) => p.progress), [0, 50, 100]);
    assert.ok(seen.every((p) => p.total === 100));

    const slow = callTool(client, "test_sleep", { ms: 1500 });
    const t0 = Date.now();
    assert.deepEqual(await client.ping(), {});
    assert.ok(Date.now() - t0 < 1000, "ping answered while a call runs");
    const done = await slow;
    assert.equal(done.structuredContent.cancelled, false);

    const ac = new AbortController();
    const cancelled = callTool(client, "test_sleep", { ms: 60000 }, { signal: ac.signal });
    setTimeout(() => ac.abort("test"), 200);
    await assert.rejects(cancelled);
    assert.deepEqual(await client.ping(), {});
    const after = await callTool(client, "test_sleep", { ms: 1 });
    assert.equal(after.structuredContent.ms, 1);
  });
});

test("each protocol version is negotiated over a raw pipe", async () => {
  for (const v of [...VERSIONS, "2099-01-01"]) {
    const raw = spawnRaw(["--test-tools"]);
    raw.send(initialize(1, v));
    const init = await raw.waitFor((m) => m.id === 1);
    const want = VERSIONS.includes(v) ? v : VERSIONS[0];
    assert.equal(init.result.protocolVersion, want, `asked for ${v}`);
    raw.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    raw.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    raw.send({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "test_simple_text", arguments: {} },
    });
    const list = await raw.waitFor((m) => m.id === 2);
    const call = await raw.waitFor((m) => m.id === 3);
    const tool = list.result.tools.find((t) => t.name === "test_sleep");
    const modern = want >= "2025-06-18";
    assert.equal("outputSchema" in tool, modern, `${want} outputSchema`);
    assert.equal("title" in tool, modern, `${want} title`);
    assert.equal("annotations" in tool, want >= "2025-03-26", `${want} annotations`);
    assert.equal("structuredContent" in call.result, modern, `${want} structuredContent`);
    assert.equal(JSON.parse(call.result.content[0].text).text.length > 0, true);
    const { code } = await raw.close();
    assert.equal(code, 0);
    assert.equal(raw.trailing, "");
  }
});

test("the tasks utility is offered from 2025-11-25 only; its params are checked", async () => {
  for (const v of VERSIONS) {
    const raw = spawnRaw(["--test-tools"]);
    raw.send(initialize(1, v));
    const init = await raw.waitFor((m) => m.id === 1);
    const modern = v >= "2025-11-25";
    assert.equal("tasks" in init.result.capabilities, modern, `${v} tasks capability`);
    raw.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    raw.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const list = await raw.waitFor((m) => m.id === 2);
    const start = list.result.tools.find((t) => t.name === "start_task");
    assert.equal(start.execution?.taskSupport, modern ? "optional" : undefined, `${v} execution`);
    // Without the utility, 'task' is ignored; with it, a tool that does
    // not support tasks refuses one.
    raw.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "test_simple_text", arguments: {}, task: {} } });
    const call = await raw.waitFor((m) => m.id === 3);
    if (modern) assert.equal(call.error.code, -32601, JSON.stringify(call));
    else assert.equal(call.result.isError, false, JSON.stringify(call));
    raw.send({ jsonrpc: "2.0", id: 4, method: "tasks/list" });
    const tl = await raw.waitFor((m) => m.id === 4);
    if (modern) assert.ok(Array.isArray(tl.result.tasks), JSON.stringify(tl));
    else assert.equal(tl.error.code, -32601, JSON.stringify(tl));
    if (modern) {
      const bad = [
        [{ method: "tasks/get", params: {} }, /taskId/],
        [{ method: "tasks/result", params: { taskId: 7 } }, /taskId/],
        [{ method: "tasks/cancel", params: { taskId: "" } }, /taskId/],
        [{ method: "tasks/get", params: { taskId: "x".repeat(600) } }, /taskId/],
        [{ method: "tasks/get", params: { taskId: "local:abc/123" } }, /taskId/],
        [{ method: "tasks/list", params: { cursor: 5 } }, /cursor/],
        [{ method: "tasks/list", params: { cursor: "nope" } }, /cursor/],
        [{ method: "tools/call", params: { name: "start_task", arguments: { command: "true" }, task: "x" } }, /'task'/],
        [{ method: "tools/call", params: { name: "start_task", arguments: { command: "true" }, task: { ttl: -1 } } }, /task\.ttl/],
        [{ method: "tools/call", params: { name: "start_task", arguments: { command: 5 }, task: {} } }, /command/],
      ];
      let id = 10;
      for (const [req, re] of bad) {
        raw.send({ jsonrpc: "2.0", id, ...req });
        const r = await raw.waitFor((m) => m.id === id);
        assert.equal(r.error?.code, -32602, JSON.stringify([req, r]));
        assert.match(r.error.message, re);
        id++;
      }
      // The server kept serving through all of it.
      raw.send({ jsonrpc: "2.0", id: 99, method: "ping" });
      await raw.waitFor((m) => m.id === 99);
    }
    const { code } = await raw.close();
    assert.equal(code, 0);
  }
});

test("a cancelled call is never answered; a duplicate id in flight is refused", async () => {
  const raw = spawnRaw(["--test-tools"]);
  raw.send(initialize(0, "2025-11-25"));
  await raw.waitFor((m) => m.id === 0);
  const sleep = (id, ms) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "test_sleep", arguments: { ms }, _meta: { progressToken: `p${id}` } },
  });
  raw.send(sleep("a", 60000));
  await raw.waitFor((m) => m.params?.progressToken === "pa");
  raw.send(sleep("a", 1));
  const dup = await raw.waitFor((m) => m.id === "a");
  assert.equal(dup.error.code, -32600);
  raw.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "a" } });
  raw.send({ jsonrpc: "2.0", id: "b", method: "ping" });
  await raw.waitFor((m) => m.id === "b");
  raw.send(sleep("c", 300));
  await raw.waitFor((m) => m.id === "c" && m.result);
  assert.equal(raw.messages.filter((m) => m.id === "a").length, 1, "no answer for the cancelled call");
  const { code } = await raw.close();
  assert.equal(code, 0);
});
