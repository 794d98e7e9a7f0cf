// A short MCP session through the official SDK client against an installed
// taskbox, for the package tests: over stdio (a command that starts the
// server) or over HTTP (a URL, and a token from $TASKBOX_TEST_TOKEN).
//
//   node session.mjs stdio|http TARGET run [PROVIDER]
//        create a sandbox, run a command, start a task and read its
//        output, destroy the sandbox; prints "session ok"
//   node session.mjs stdio|http TARGET start [PROVIDER]
//        create a sandbox and start a task that ends later; prints
//        "SANDBOX TASK"
//   node session.mjs stdio|http TARGET finish SANDBOX TASK
//        wait for that task, check its output, destroy the sandbox
//
// For stdio, TARGET is the command line, split on spaces. Exits 1 with the
// reason on any failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [kind, target, verb, ...rest] = process.argv.slice(2);

function transport() {
  if (kind === "stdio") {
    const [command, ...args] = target.split(" ");
    return new StdioClientTransport({ command, args, stderr: "inherit" });
  }
  const headers = {};
  if (process.env.TASKBOX_TEST_TOKEN) headers.Authorization = `Bearer ${process.env.TASKBOX_TEST_TOKEN}`;
  return new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
}

async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  const body = JSON.parse(r.content[0].text);
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(body)}`);
  return body;
}

// Waits for a task to end (within 120 s); returns its last page.
async function waitTask(client, sandbox_id, task_id) {
  const deadline = Date.now() + 120000;
  let page;
  while (Date.now() < deadline) {
    page = await call(client, "get_task", { sandbox_id, task_id, wait: 30 });
    if (page.state !== "running") return page;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`task ${task_id} still running after 120 s: ${JSON.stringify(page)}`);
}

const client = new Client({ name: "taskbox-package-test", version: "1.0.0" });
try {
  await client.connect(transport());
  if (verb === "run") {
    const provider = rest[0];
    const { sandbox_id } = await call(client, "create_sandbox", provider ? { provider, timeout: 600 } : { timeout: 600 });
    const ran = await call(client, "run_command", { sandbox_id, command: "echo ran-$((6*7))" });
    if (!String(ran.stdout).includes("ran-42")) throw new Error(`run_command: ${JSON.stringify(ran)}`);
    const task = await call(client, "start_task", { sandbox_id, command: "sleep 1; echo task-done" });
    const page = await waitTask(client, sandbox_id, task.task_id);
    if (page.state !== "succeeded" || !page.stdout.includes("task-done"))
      throw new Error(`get_task: ${JSON.stringify(page)}`);
    await call(client, "kill_sandbox", { sandbox_id });
    console.log("session ok");
  } else if (verb === "start") {
    const provider = rest[0];
    const { sandbox_id } = await call(client, "create_sandbox", provider ? { provider, timeout: 600 } : { timeout: 600 });
    const task = await call(client, "start_task", { sandbox_id, command: "sleep 8; echo survived" });
    console.log(`${sandbox_id} ${task.task_id}`);
  } else if (verb === "finish") {
    const [sandbox_id, task_id] = rest;
    const page = await waitTask(client, sandbox_id, task_id);
    if (page.state !== "succeeded" || !page.stdout.includes("survived"))
      throw new Error(`get_task after the restart: ${JSON.stringify(page)}`);
    await call(client, "kill_sandbox", { sandbox_id });
    console.log("task reached after the restart");
  } else {
    throw new Error(`unknown verb ${verb}`);
  }
} catch (e) {
  console.error(`session failed: ${e.message}`);
  process.exitCode = 1;
} finally {
  await client.close().catch(() => {});
}
