// Waiting without polling, for any provider: get_task and cancel_task with
// `wait`, list_tasks, and the MCP tasks utility through the official SDK's
// experimental tasks client (the same calls made with the v2 client's
// request where that runs the suite: tasksOf in tests/lib/client.mjs). In
// MCP 2026-07-28 (h.era "modern") tasks are the Tasks extension
// (io.modelcontextprotocol/tasks) instead, driven as raw requests beside the
// SDK v2 client (rawChannel in tests/lib/client.mjs), which rejects its
// shapes. Called from contractSuite with its helpers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { TASKS_EXTENSION, rawChannel, tasksCapabilities, tasksOf } from "../lib/client.mjs";

export function waitingTests(h) {
  const { server, closeServer, killServer, call, createSandbox, start, getTask, ok, failure, data } = h;

  // Reads a task-augmented call's stream to its end.
  async function drain(stream) {
    const seen = [];
    for await (const m of stream) seen.push(m);
    return seen;
  }

  test("get_task wait answers on new output, on the task's end, and when wait runs out", { timeout: 90000 }, async () => {
    const a = await server();
    const sb = await createSandbox(a);
    // Each step waits for a file the test writes, so the order holds on a
    // provider of any speed.
    const gate = `gate-${process.pid}-${Date.now()}`;
    const t = await start(a, sb, `printf A; until [ -e ${gate}.b ]; do sleep 0.1; done; printf B >&2; until [ -e ${gate}.c ]; do sleep 0.1; done; exit 4`);
    // New output past the offsets ends the wait with the task still running.
    const first = await getTask(a, sb, t.task_id, { wait: 30 });
    assert.equal(first.state, "running");
    assert.equal(first.stdout, "A");
    // Then stderr's first byte; then the end.
    ok(await call(a, "write_file", { sandbox_id: sb, path: `${gate}.b`, content: "" }), "gate b");
    const second = await getTask(a, sb, t.task_id, { wait: 30, stdout_offset: 1 });
    assert.equal(second.state, "running");
    assert.equal(second.stderr, "B");
    ok(await call(a, "write_file", { sandbox_id: sb, path: `${gate}.c`, content: "" }), "gate c");
    const last = await getTask(a, sb, t.task_id, { wait: 30, stdout_offset: 1, stderr_offset: 1 });
    assert.equal(last.state, "failed");
    assert.equal(last.exit_code, 4);
    // A finished task answers at once, whatever the wait.
    assert.deepEqual(await getTask(a, sb, t.task_id, { wait: 60, stdout_offset: 1, stderr_offset: 1 }), last);

    // Nothing happens: the wait runs out and the task is still running.
    const idle = await start(a, sb, "sleep 300");
    const out = await getTask(a, sb, idle.task_id, { wait: 1 });
    assert.equal(out.state, "running");
    assert.equal(out.stdout, "");

    // cancel_task waits for the end, not for output.
    const c = ok(await call(a, "cancel_task", { sandbox_id: sb, task_id: idle.task_id, wait: 10 }), "cancel_task wait");
    assert.equal(c.state, "cancelled");
    assert.equal(c.error, null);
    for (const bad of [61, -1, 1.5, "5", null]) {
      const msg = failure(await call(a, "get_task", { sandbox_id: sb, task_id: t.task_id, wait: bad }), `wait ${bad}`);
      assert.match(msg, /wait/, msg);
      const msg2 = failure(await call(a, "cancel_task", { sandbox_id: sb, task_id: t.task_id, wait: bad }), `cancel wait ${bad}`);
      assert.match(msg2, /wait/, msg2);
    }
    await closeServer(a);
  });

  test("notifications/cancelled ends a waiting get_task at once, freeing its worker", { timeout: 45000 }, async () => {
    // One worker: if the cancelled wait kept it, the next call would wait
    // 60 s behind it and this test would time out.
    const a = await server(["--workers", "1"]);
    const sb = await createSandbox(a);
    const t = await start(a, sb, "sleep 300");
    const ac = new AbortController();
    const waiting = call(a, "get_task", { sandbox_id: sb, task_id: t.task_id, wait: 60 }, { signal: ac.signal }).catch((e) => e);
    await new Promise((r) => setTimeout(r, 300));
    ac.abort();
    assert.ok((await waiting) instanceof Error, "the aborted call rejects");
    assert.equal((await getTask(a, sb, t.task_id)).state, "running");
    ok(await call(a, "cancel_task", { sandbox_id: sb, task_id: t.task_id }), "cancel");
    await closeServer(a);
  });

  test("a waiting get_task reports the bytes seen so far as progress", { timeout: 90000 }, async () => {
    const a = await server();
    const sb = await createSandbox(a);
    // The 9 comes only once the test has seen a progress notification:
    // it writes the file the task waits for.
    const gate = `gate-${process.pid}-${Date.now()}`;
    const t = await start(a, sb, `printf 12345; printf 678 >&2; until [ -e ${gate} ]; do sleep 0.1; done; printf 9; sleep 300`);
    // Returns once stderr has its bytes (written after stdout's).
    await getTask(a, sb, t.task_id, { wait: 30, stdout_offset: 5 });
    const progress = [];
    let opened;
    const r = await call(a, "get_task", { sandbox_id: sb, task_id: t.task_id, wait: 30, stdout_offset: 5, stderr_offset: 3 }, {
      onprogress: (p) => {
        progress.push(p);
        opened ??= call(a, "write_file", { sandbox_id: sb, path: gate, content: "" });
      },
    });
    assert.ok(opened, "a progress notification came while the call waited");
    ok(await opened, "gate");
    assert.equal(data(r).state, "running");
    assert.equal(data(r).stdout, "9");
    assert.ok(progress.length >= 1, "at least one progress notification");
    for (const p of progress) {
      assert.equal(p.progress, 8, "progress is the bytes of output seen");
      assert.equal(p.total, undefined, "no made-up total");
    }
    ok(await call(a, "cancel_task", { sandbox_id: sb, task_id: t.task_id }), "cancel");
    await closeServer(a);
  });

  test("list_tasks: newest first, by state, masked, with sizes, from a fresh process", { timeout: 90000 }, async () => {
    const a = await server();
    const sb = await createSandbox(a);
    const t1 = await start(a, sb, "printf abc; exit 2");
    await getTask(a, sb, t1.task_id, { wait: 30, stdout_offset: 3 });
    await new Promise((r) => setTimeout(r, 1100)); // distinct started_at seconds
    const t2 = await start(a, sb, `echo ${h.HOST_SECRET}; sleep 300`);
    await getTask(a, sb, t2.task_id, { wait: 30 });
    await killServer(a);

    const b = await server();
    const all = ok(await call(b, "list_tasks", { sandbox_id: sb }), "list_tasks");
    assert.equal(all.sandbox_id, sb);
    assert.equal(all.next_cursor, null);
    assert.deepEqual(all.tasks.map((x) => x.task_id), [t2.task_id, t1.task_id]);
    const [running, failed] = all.tasks;
    assert.equal(running.state, "running");
    assert.equal(running.exit_code, null);
    assert.ok(!running.command.includes(h.HOST_SECRET), running.command);
    assert.ok(running.command.includes("****"), running.command);
    assert.ok(running.stdout_size > 0);
    assert.equal(failed.state, "failed");
    assert.equal(failed.exit_code, 2);
    assert.equal(failed.stdout_size, 3);
    assert.equal(failed.command, "printf abc; exit 2");
    assert.ok(failed.finished_at >= failed.started_at);
    const only = ok(await call(b, "list_tasks", { sandbox_id: sb, state: "failed" }), "list_tasks state");
    assert.deepEqual(only.tasks.map((x) => x.task_id), [t1.task_id]);
    assert.deepEqual(ok(await call(b, "list_tasks", { sandbox_id: sb, state: "timed_out" }), "none").tasks, []);
    for (const [args, field] of [[{ sandbox_id: sb, state: "done" }, "state"], [{ sandbox_id: sb, cursor: "x" }, "cursor"], [{ sandbox_id: "no:such" }, "sandbox_id"], [{ sandbox_id: sb, limit: 3 }, "limit"]]) {
      const msg = failure(await call(b, "list_tasks", args), JSON.stringify(args));
      assert.match(msg, new RegExp(field), msg);
    }
    // Without sandbox_id and without a session default: refused, named.
    assert.match(failure(await call(b, "list_tasks", {}), "no default"), /sandbox_id/);
    ok(await call(b, "cancel_task", { sandbox_id: sb, task_id: t2.task_id }), "cancel");
    await closeServer(b);
  });

  if (h.era === "modern") {
    modernTasksTest(h);
    return;
  }

  test("MCP tasks: start_task and run_command as tasks, get, result, list, cancel, from a fresh process", { timeout: 120000 }, async () => {
    const a = await server();
    const caps = a.client.getServerCapabilities();
    assert.deepEqual(caps.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tools = (await a.client.listTools()).tools;
    const support = Object.fromEntries(tools.filter((x) => x.execution).map((x) => [x.name, x.execution.taskSupport]));
    assert.deepEqual(support, { start_task: "optional", run_command: "optional" });
    const sb = await createSandbox(a);
    const tasks = tasksOf(a.client);

    // start_task as a task, followed to its end by the SDK's own loop.
    const seen = await drain(tasks.callToolStream({ name: "start_task", arguments: { sandbox_id: sb, command: "sleep 1; echo done" } }, CallToolResultSchema, { task: { ttl: 60000 } }));
    assert.equal(seen[0].type, "taskCreated");
    const created = seen[0].task;
    assert.equal(created.status, "working");
    assert.match(created.taskId, /^[a-z][a-z0-9_-]*:[A-Za-z0-9_.-]+\/[0-9a-f]{32}$/);
    assert.ok(!Number.isNaN(Date.parse(created.createdAt)));
    const end = seen.at(-1);
    assert.equal(end.type, "result", JSON.stringify(end));
    assert.equal(end.result.isError, false);
    assert.equal(end.result.structuredContent.state, "succeeded");
    assert.equal(end.result.structuredContent.stdout, "done\n");
    assert.equal(end.result._meta["io.modelcontextprotocol/related-task"].taskId, created.taskId);
    const [sbOf, taskOf] = created.taskId.split("/");
    assert.equal(sbOf, sb, "the MCP task id is the handle");
    assert.equal((await getTask(a, sb, taskOf)).state, "succeeded");

    // run_command as a task: a failing command is a failed task.
    const ran = await drain(tasks.callToolStream({ name: "run_command", arguments: { sandbox_id: sb, command: "echo out; exit 3" } }, CallToolResultSchema, { task: {} }));
    const failedId = ran[0].task.taskId;
    assert.equal(ran.at(-1).type, "error");
    const failedTask = await tasks.getTask(failedId);
    assert.equal(failedTask.status, "failed");
    assert.match(failedTask.statusMessage, /exit code 3/);
    const failedResult = await tasks.getTaskResult(failedId, CallToolResultSchema);
    assert.equal(failedResult.isError, true);
    const body = JSON.parse(failedResult.content[0].text);
    assert.equal(body.exit_code, 3);
    assert.equal(body.stdout, "out\n");
    assert.equal(body.timed_out, false);

    // A long one: started here, read and cancelled from a fresh process.
    let longId;
    for await (const m of tasks.callToolStream({ name: "start_task", arguments: { sandbox_id: sb, command: "sleep 300" } }, CallToolResultSchema, { task: {} })) {
      if (m.type === "taskCreated") {
        longId = m.task.taskId;
        break;
      }
    }
    // A timeout is a failed task whose message says so.
    let slowId;
    for await (const m of tasks.callToolStream({ name: "start_task", arguments: { sandbox_id: sb, command: "sleep 30", timeout: 1 } }, CallToolResultSchema, { task: {} })) {
      if (m.type === "taskCreated") slowId = m.task.taskId;
    }
    const slow = await tasks.getTask(slowId);
    assert.equal(slow.status, "failed");
    assert.match(slow.statusMessage, /timed_out/);
    await killServer(a);

    const b = await server();
    const bt = tasksOf(b.client);
    assert.equal((await bt.getTask(longId)).status, "working");
    const pending = bt.getTaskResult(longId, CallToolResultSchema);
    const listed = await bt.listTasks();
    const ids = listed.tasks.map((x) => x.taskId);
    assert.ok(ids.includes(longId), "tasks/list shows a task tasks/get found");
    for (const x of listed.tasks) assert.ok(["working", "completed", "failed", "cancelled"].includes(x.status), x.status);
    const cancelled = await bt.cancelTask(longId);
    assert.equal(cancelled.status, "cancelled");
    const final = await pending; // tasks/result was blocked until the end
    assert.equal(final.isError, true);
    assert.equal(JSON.parse(final.content[0].text).state, "cancelled");
    await assert.rejects(bt.cancelTask(longId), (e) => e.code === -32602 && /already cancelled/.test(e.message));
    await assert.rejects(bt.getTask("not-a-task"), (e) => e.code === -32602 && /taskId/.test(e.message));
    await assert.rejects(bt.getTask(`${sb}/${"0".repeat(32)}`), (e) => e.code === -32602);
    await assert.rejects(bt.listTasks("bogus"), (e) => e.code === -32602 && /cursor/.test(e.message));
    // A tool without task support refuses a task, as the spec says.
    await assert.rejects(b.client.request({ method: "tools/call", params: { name: "get_task", arguments: { sandbox_id: sb, task_id: taskOf }, task: {} } }, CallToolResultSchema), (e) => e.code === -32601);
    // Bad arguments of a task-augmented call: refused, named, no task.
    await assert.rejects(drain(bt.callToolStream({ name: "start_task", arguments: { sandbox_id: sb, command: "" } }, CallToolResultSchema, { task: {} })).then((m) => { if (m.at(-1).type === "error") throw m.at(-1).error; }), (e) => /command/.test(e.message));
    await closeServer(b);
  });

  // An MCP task's handle is the task's: write_task feeds one started with
  // stdin "pipe", and its result shows the new fields.
  test("MCP tasks: write_task feeds a start_task run as an MCP task; its result says stdin and ended_by", { timeout: 90000 }, async () => {
    const a = await server();
    const sb = await createSandbox(a);
    const it = tasksOf(a.client)
      .callToolStream({ name: "start_task", arguments: { sandbox_id: sb, command: "wc -l", stdin: "pipe" } }, CallToolResultSchema, { task: { ttl: 60000 } })
      [Symbol.asyncIterator]();
    const first = (await it.next()).value;
    assert.equal(first.type, "taskCreated");
    const [sbOf, taskOf] = first.task.taskId.split("/");
    const w = ok(await call(a, "write_task", { sandbox_id: sbOf, task_id: taskOf, data: "a\nb\n", eof: true }), "write_task");
    assert.equal(w.written, 4);
    let end;
    for (let n = await it.next(); !n.done; n = await it.next()) end = n.value;
    assert.equal(end.type, "result", JSON.stringify(end));
    const body = end.result.structuredContent;
    assert.equal(body.state, "succeeded");
    assert.equal(body.stdout.trim(), "2");
    assert.equal(body.stdin, "pipe");
    assert.equal(body.ended_by, "exit");
    assert.equal(body.signal, null);
    await closeServer(a);
  });
}

const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

// The Tasks extension of MCP 2026-07-28: a tools/call of a tool with
// execution.taskSupport "optional" whose request declares the extension
// answers a CreateTaskResult; tasks/get, tasks/cancel and tasks/update
// follow it. Raw requests on the suite's own client (its transport).
function modernTasksTest(h) {
  const { server, closeServer, killServer, call, createSandbox, getTask, data } = h;
  const T = { capabilities: tasksCapabilities };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  function result(r, what) {
    assert.equal(r.kind, "result", `${what}: ${JSON.stringify(r.error)}`);
    assert.ok(r.result._meta?.[SERVER_INFO]?.name, `${what}: serverInfo in _meta: ${JSON.stringify(r.result)}`);
    return r.result;
  }
  function error(r, code, what) {
    assert.equal(r.kind, "error", `${what}: expected error ${code}, got ${JSON.stringify(r.result)}`);
    assert.equal(r.error.code, code, `${what}: ${JSON.stringify(r.error)}`);
    return r.error;
  }
  // tasks/get until the task is no longer working.
  async function settle(ch, taskId, limitMs = 60000) {
    const end = Date.now() + limitMs;
    for (;;) {
      const t = result(await ch.request("tasks/get", { taskId }, T), "tasks/get");
      assert.equal(t.resultType, "complete");
      assert.equal(t.taskId, taskId);
      if (t.status !== "working") return t;
      if (Date.now() > end) throw new Error(`gave up waiting for task ${taskId}`);
      await sleep(t.pollIntervalMs);
    }
  }
  function created(r, sb, what) {
    const c = result(r, what);
    assert.equal(c.resultType, "task", `${what}: ${JSON.stringify(c)}`);
    // A quick command may have ended by the time the task is answered:
    // then its status is what tasks/get gives (a failing command too is
    // completed), never failed.
    assert.ok(["working", "completed"].includes(c.status), `${what}: status ${c.status}`);
    assert.equal(typeof c.statusMessage, "string");
    const [sbOf, taskOf, ...rest] = c.taskId.split("/");
    assert.equal(sbOf, sb, "the taskId is <sandbox_id>/<task_id>");
    assert.match(taskOf, /^[0-9a-f]{32}$/);
    assert.deepEqual(rest, []);
    assert.ok(!Number.isNaN(Date.parse(c.createdAt)), c.createdAt);
    assert.ok(!Number.isNaN(Date.parse(c.lastUpdatedAt)), c.lastUpdatedAt);
    assert.equal(c.ttlMs, null);
    assert.equal(c.pollIntervalMs, 500);
    return { ...c, task_id: taskOf };
  }
  const callAsTask = (ch, name, args, opts = T) => ch.request("tools/call", { name, arguments: args }, opts);

  test("MCP Tasks extension (2026-07-28): run_command and start_task as tasks, get, cancel, from a fresh process", { timeout: 120000 }, async () => {
    const a = await server();
    const caps = a.client.getServerCapabilities();
    assert.deepEqual(caps.extensions, { [TASKS_EXTENSION]: {} });
    assert.equal(caps.tasks, undefined, "no core tasks capability in 2026-07-28");
    const ra = rawChannel(a);
    // Raw: the SDK v2 client drops execution from a 2026-07-28 tool (the
    // Tool of that revision has no such member; the extension reads it).
    const tools = result(await ra.request("tools/list", {}), "tools/list").tools;
    const support = Object.fromEntries(tools.filter((x) => x.execution).map((x) => [x.name, x.execution.taskSupport]));
    assert.deepEqual(support, { start_task: "optional", run_command: "optional" });
    const sb = await createSandbox(a);

    // start_task as a task, followed to its end: completed, with the
    // result inlined (a full 2026 CallToolResult, with resultType).
    const st = created(await callAsTask(ra, "start_task", { sandbox_id: sb, command: "sleep 1; echo done" }), sb, "start_task as a task");
    const stDone = await settle(ra, st.taskId);
    assert.equal(stDone.status, "completed", JSON.stringify(stDone));
    assert.equal(stDone.result.resultType, "complete");
    assert.equal(stDone.result.isError, false);
    assert.equal(stDone.result.structuredContent.state, "succeeded");
    assert.equal(stDone.result.structuredContent.stdout, "done\n");
    assert.equal(stDone.result._meta?.["io.modelcontextprotocol/related-task"], undefined, "no related-task _meta in 2026-07-28");
    assert.equal(stDone.error, undefined);
    assert.ok(Date.parse(stDone.lastUpdatedAt) >= Date.parse(stDone.createdAt));
    assert.equal((await getTask(a, sb, st.task_id)).state, "succeeded", "the MCP task id is the handle");

    // run_command as a task: a failing command is a completed task whose
    // result is a tool error (only a JSON-RPC error would be "failed").
    const rc = created(await callAsTask(ra, "run_command", { sandbox_id: sb, command: "echo out; exit 3" }), sb, "run_command as a task");
    const rcDone = await settle(ra, rc.taskId);
    assert.equal(rcDone.status, "completed", JSON.stringify(rcDone));
    assert.match(rcDone.statusMessage, /exit code 3/);
    assert.equal(rcDone.result.resultType, "complete");
    assert.equal(rcDone.result.isError, true);
    const body = data(rcDone.result);
    assert.equal(body.exit_code, 3);
    assert.equal(body.stdout, "out\n");
    assert.equal(body.timed_out, false);

    // A timeout is a completed task too, and its message says so.
    const slow = created(await callAsTask(ra, "start_task", { sandbox_id: sb, command: "sleep 30", timeout: 1 }), sb, "start_task with a timeout");
    const slowDone = await settle(ra, slow.taskId);
    assert.equal(slowDone.status, "completed");
    assert.match(slowDone.statusMessage, /timed_out/);
    assert.equal(slowDone.result.isError, true);
    assert.equal(data(slowDone.result).state, "timed_out");

    // A long one: started here, read and cancelled from a fresh process.
    const long = created(await callAsTask(ra, "start_task", { sandbox_id: sb, command: "sleep 300" }), sb, "a long task");
    await killServer(a);

    const b = await server();
    const rb = rawChannel(b);
    const seen = result(await rb.request("tasks/get", { taskId: long.taskId }, T), "tasks/get from a fresh process");
    assert.equal(seen.status, "working");
    assert.equal(seen.createdAt, long.createdAt);
    const ack = result(await rb.request("tasks/cancel", { taskId: long.taskId }, T), "tasks/cancel");
    assert.deepEqual(Object.keys(ack).sort(), ["_meta", "resultType"], JSON.stringify(ack));
    assert.equal(ack.resultType, "complete");
    const cancelled = result(await rb.request("tasks/get", { taskId: long.taskId }, T), "tasks/get after cancel");
    assert.equal(cancelled.status, "cancelled", JSON.stringify(cancelled));
    assert.equal((await getTask(b, sb, long.task_id)).state, "cancelled");
    const again = result(await rb.request("tasks/cancel", { taskId: long.taskId }, T), "a second tasks/cancel");
    assert.equal(again.resultType, "complete", "cancelling an ended task is acknowledged too");
    // taskbox tasks never ask for input.
    error(await rb.request("tasks/update", { taskId: long.taskId, inputResponses: {} }, T), -32602, "tasks/update");
    // Without the extension declared: -32021, naming it.
    const missing = error(await rb.request("tasks/get", { taskId: long.taskId }, { capabilities: {} }), -32021, "tasks/get undeclared");
    assert.deepEqual(missing.data?.requiredCapabilities?.extensions, { [TASKS_EXTENSION]: {} });
    error(await rb.request("tasks/cancel", { taskId: long.taskId }, { capabilities: {} }), -32021, "tasks/cancel undeclared");
    // Unknown or malformed task ids: -32602.
    assert.match(error(await rb.request("tasks/get", { taskId: "not-a-task" }, T), -32602, "a bad taskId").message, /taskId/);
    error(await rb.request("tasks/get", { taskId: `${sb}/${"0".repeat(32)}` }, T), -32602, "an unknown taskId");
    error(await rb.request("tasks/cancel", { taskId: `${sb}/${"0".repeat(32)}` }, T), -32602, "cancel of an unknown taskId");
    // Removed in 2026-07-28.
    error(await rb.request("tasks/list", {}, T), -32601, "tasks/list");
    error(await rb.request("tasks/result", { taskId: long.taskId }, T), -32601, "tasks/result");
    // A tool without task support answers at once, extension or not.
    const direct = result(await callAsTask(rb, "get_task", { sandbox_id: sb, task_id: long.task_id }), "get_task with the extension");
    assert.equal(direct.resultType, "complete");
    assert.equal(direct.structuredContent.state, "cancelled");
    // Without the extension, run_command answers inline.
    const inline = result(await callAsTask(rb, "run_command", { sandbox_id: sb, command: "echo inline" }, { capabilities: {} }), "run_command undeclared");
    assert.equal(inline.resultType, "complete");
    assert.equal(inline.structuredContent.stdout, "inline\n");
    // Bad arguments of a call that would be a task: refused, named, no task.
    const bad = error(await callAsTask(rb, "start_task", { sandbox_id: sb, command: "" }), -32602, "bad arguments");
    assert.match(bad.message, /command/);
    await closeServer(b);
  });

  test("MCP Tasks extension (2026-07-28): write_task feeds a start_task run as a task; its result says stdin and ended_by", { timeout: 90000 }, async () => {
    const a = await server();
    const ra = rawChannel(a);
    const sb = await createSandbox(a);
    const st = created(await callAsTask(ra, "start_task", { sandbox_id: sb, command: "wc -l", stdin: "pipe" }), sb, "start_task with stdin as a task");
    const w = data(await call(a, "write_task", { sandbox_id: sb, task_id: st.task_id, data: "a\nb\n", eof: true }));
    assert.equal(w.written, 4);
    const done = await settle(ra, st.taskId);
    assert.equal(done.status, "completed", JSON.stringify(done));
    const body = done.result.structuredContent;
    assert.equal(body.state, "succeeded");
    assert.equal(body.stdout.trim(), "2");
    assert.equal(body.stdin, "pipe");
    assert.equal(body.ended_by, "exit");
    await closeServer(a);
  });
}
