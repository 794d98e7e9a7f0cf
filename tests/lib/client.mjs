// The shared harness of the integration tests: the official MCP SDK client
// driving the real taskbox binary over stdio.
//
// Environment (set by `make check` through AM_TESTS_ENVIRONMENT):
//   TASKBOX_BIN            the built binary (required)
//   TASKBOX_PLUGIN_PATH    where the built plugins are
//   TASKBOX_TEST_WRAPPER   optional command prefix, e.g. tests/vg (valgrind)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function taskboxCommand(args = []) {
  const bin = process.env.TASKBOX_BIN;
  if (!bin) throw new Error("TASKBOX_BIN is not set: run through `make check`");
  const wrapper = (process.env.TASKBOX_TEST_WRAPPER || "").split(/\s+/).filter(Boolean);
  const argv = [...wrapper, bin, ...args];
  return { command: argv[0], args: argv.slice(1) };
}

// A scratch directory that outlives nothing important.
export function scratchDir(prefix = "taskbox-test-") {
  return mkdtempSync(join(tmpdir(), prefix));
}

// Writes a config object to a file in dir and returns its path.
export function writeConfig(dir, config) {
  const path = join(dir, "config.json");
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

// Starts a server and connects the SDK client to it.
//   opts.args         extra arguments after `serve`
//   opts.env          extra environment (merged over process.env)
//   opts.protocolVersion  not used by the SDK's connect; see mcp tests
//   opts.stderr       "inherit" (default) or "pipe"
// Returns { client, transport, pid, close(), kill(signal) }.
export async function startServer(opts = {}) {
  const { command, args } = taskboxCommand(["serve", ...(opts.args || [])]);
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...process.env, ...(opts.env || {}) },
    stderr: opts.stderr || "inherit",
  });
  const client = new Client(
    { name: "taskbox-tests", version: "1.0.0" },
    { capabilities: opts.capabilities || {} },
  );
  await client.connect(transport);
  return {
    client,
    transport,
    get pid() {
      return transport.pid;
    },
    async close() {
      await client.close();
    },
    kill(signal = "SIGKILL") {
      if (transport.pid) process.kill(transport.pid, signal);
    },
  };
}

// Calls a tool and returns the SDK's result object.
export async function callTool(client, name, args = {}, options = {}) {
  return client.callTool({ name, arguments: args }, undefined, options);
}

// A minimal assertion helper that names what it compared.
export function check(cond, message) {
  if (!cond) throw new Error(`check failed: ${message}`);
}
