// A short scripted session through the official MCP SDK client on the local
// provider, printed for a person to read: create a sandbox, start a task,
// drop the connection by killing the server, reconnect with a fresh server
// process, read the task's saved output page by page, cancel a second long
// task, and destroy the sandbox.
//
// Run it with tests/demo/run.sh (which builds taskbox when needed), or with
// TASKBOX_BIN and TASKBOX_PLUGIN_PATH set: node tests/demo/session.mjs
import { rmSync } from "node:fs";
import { join } from "node:path";
import { callTool, scratchDir, startServer, writeConfig } from "../lib/client.mjs";

const dir = scratchDir("taskbox-demo-");
const config = writeConfig(dir, {
  default: "local",
  providers: {
    local: {
      plugin: "local",
      // The supervisor runs as `python3` from the sandbox's PATH; prefer the
      // system's over version-manager shims, which cost seconds per call.
      settings: { root: join(dir, "state"), env: { PATH: `/usr/bin:/bin:${process.env.PATH || ""}` } },
    },
  },
});

function say(text) {
  process.stdout.write(`\n== ${text}\n`);
}

// The fields worth reading in each result; the rest is in the full JSON.
const SHOWN = {
  get_task: ["state", "exit_code", "stdout", "stdout_next_offset", "stdout_size", "stderr", "error"],
  cancel_task: ["state", "exit_code", "started_at", "finished_at", "error"],
  start_task: ["task_id", "state"],
};

function show(name, args, result) {
  const body = result.structuredContent ?? JSON.parse(result.content[0].text);
  const brief = (o, keys) => (keys ? Object.fromEntries(keys.map((k) => [k, o[k]])) : o);
  const shownArgs = { ...args };
  if (shownArgs.sandbox_id) shownArgs.sandbox_id = "…";
  if (shownArgs.task_id) shownArgs.task_id = shownArgs.task_id.slice(0, 8) + "…";
  process.stdout.write(`-> ${name} ${JSON.stringify(shownArgs)}\n`);
  if (result.isError) {
    process.stdout.write(`<- ERROR ${JSON.stringify(body)}\n`);
    throw new Error(`${name} failed: ${body.error}`);
  }
  process.stdout.write(`<- ${JSON.stringify(brief(body, SHOWN[name]))}\n`);
  return body;
}

async function call(server, name, args) {
  return show(name, args, await callTool(server.client, name, args));
}

async function connect(label) {
  const s = await startServer({ args: ["--config", config], stderr: "pipe" });
  process.stdout.write(`(${label}: taskbox server pid ${s.pid})\n`);
  return s;
}

let server;
try {
  say("1. A client connects and creates a sandbox");
  server = await connect("first server");
  const { sandbox_id } = await call(server, "create_sandbox", { timeout: 600 });

  say("2. It starts a background task and saves the handle");
  const task = await call(server, "start_task", {
    sandbox_id,
    command: "printf 'BEFORE\\n'; sleep 3; printf 'AFTER\\n'; echo 'a warning' >&2; exit 3",
    timeout: 120,
  });
  process.stdout.write(`   saved handle: sandbox_id ${sandbox_id}, task_id ${task.task_id}\n`);

  say("3. The client dies: its server process is killed with SIGKILL");
  server.kill("SIGKILL");
  await server.close().catch(() => {});
  server = undefined;

  say("4. A fresh server process; the saved handle still works, and get_task waits for output instead of being polled");
  server = await connect("second server");
  let page;
  let offset = 0;
  for (;;) {
    page = await call(server, "get_task", {
      sandbox_id,
      task_id: task.task_id,
      stdout_offset: offset,
      limit: 4,
      // No polling loop: the call waits up to 30 s for new output or the end.
      wait: 30,
    });
    offset = page.stdout_next_offset;
    if (page.state !== "running" && offset >= page.stdout_size) break;
  }
  process.stdout.write(
    `   state ${page.state}, exit code ${page.exit_code}: the saved outcome, read in 4-byte pages\n`,
  );
  const errors = await call(server, "get_task", { sandbox_id, task_id: task.task_id, stdout_offset: offset });
  process.stdout.write(`   stderr: ${JSON.stringify(errors.stderr)}\n`);

  say("5. A second, long task is cancelled (TERM, then KILL, to its process group)");
  const long = await call(server, "start_task", { sandbox_id, command: "sleep 600" });
  await call(server, "cancel_task", { sandbox_id, task_id: long.task_id });

  say("6. Clean up: the retained sandbox is destroyed");
  await call(server, "kill_sandbox", { sandbox_id });
  await server.close();
  server = undefined;
  say("Done.");
} catch (e) {
  process.stderr.write(`demo failed: ${e.message}\n`);
  process.exitCode = 1;
} finally {
  if (server) await server.close().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
