// The MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned in
// tests/package.json) against `taskbox serve --http` with a bearer token:
// it lists the tools and calls them over Streamable HTTP, each run a client
// of its own, as a person or a CI job would use it. Its exit codes: 0 done,
// 3 authentication required or refused, 5 a tool's isError result.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { callTool, scratchDir, startServer, writeConfig } from "../lib/client.mjs";
import local from "../contract/providers/local.mjs";

const require = createRequire(import.meta.url);
const launcher = join(
  dirname(require.resolve("@modelcontextprotocol/inspector/package.json")),
  "clients/launcher/build/index.js",
);

let server;
let home;

// Runs `mcp-inspector --cli URL --transport http ... --format json -q`;
// resolves to { code, out (parsed stdout, or null), err }.
function inspector(args, { auth = true } = {}) {
  const argv = [launcher, "--cli", server.url, "--transport", "http",
    // valgrind slows the server's start of each session
    "--connect-timeout", "120000",
    ...(auth ? ["--header", `Authorization: Bearer ${server.token}`] : []),
    // never an interactive OAuth flow
    "--stored-auth-only",
    ...args, "--format", "json", "-q"];
  return new Promise((resolve) => {
    execFile(process.execPath, argv, {
      // its catalog and stores live under HOME: a scratch one
      env: { ...process.env, HOME: home, MCP_AUTO_OPEN_ENABLED: "false" },
      timeout: 180000,
      maxBuffer: 16 << 20,
    }, (error, stdout, stderr) => {
      let out = null;
      try {
        out = JSON.parse(stdout);
      } catch {
        // not JSON: out stays null, the assertions show stdout
      }
      resolve({ code: error ? error.code : 0, out, stdout, err: stderr });
    });
  });
}

describe("the Inspector CLI over HTTP", () => {
  before(async () => {
    const p = await local.setup();
    const cfg = writeConfig(scratchDir("taskbox-inspector-"), p.config);
    home = scratchDir("taskbox-inspector-home-");
    server = await startServer({ transport: "http", args: ["--config", cfg, "--test-tools"], env: p.env });
  });

  after(async () => {
    if (server) await server.close();
    await local.teardown();
  });

  test("tools/list: every tool, with closed input schemas", { timeout: 200000 }, async () => {
    const r = await inspector(["--method", "tools/list"]);
    assert.equal(r.code, 0, `exit ${r.code}: ${r.stdout}${r.err}`);
    const names = r.out.result.tools.map((t) => t.name);
    for (const n of ["create_sandbox", "start_task", "get_task", "cancel_task", "run_command", "test_echo"])
      assert.ok(names.includes(n), `${n} listed: ${names}`);
    // The same list the SDK client gets in its session.
    const sdk = (await server.client.listTools()).tools.map((t) => t.name);
    assert.deepEqual([...names].sort(), [...sdk].sort());
    for (const t of r.out.result.tools) assert.equal(t.inputSchema.additionalProperties, false, t.name);
  });

  test("tools/call: a fixture tool and a real command", { timeout: 200000 }, async () => {
    const echo = await inspector(["--method", "tools/call", "--tool-name", "test_echo",
      "--tool-args-json", JSON.stringify({ name: "ab_c", text: "h\u00e9", count: 3 })]);
    assert.equal(echo.code, 0, `exit ${echo.code}: ${echo.stdout}${echo.err}`);
    assert.equal(echo.out.result.isError, false);
    assert.equal(echo.out.result.structuredContent.echo.text, "h\u00e9");
    assert.equal(echo.out.result.structuredContent.echo.count, 3);

    // A command in a sandbox the SDK client's session made: its output
    // comes back, and what it wrote is there for the SDK client to read.
    const sb = (await callTool(server.client, "create_sandbox", {})).structuredContent.sandbox_id;
    const run = await inspector(["--method", "tools/call", "--tool-name", "run_command",
      "--tool-arg", `sandbox_id=${sb}`, "--tool-arg", "command=echo from-inspector | tee note.txt; exit 2"]);
    assert.equal(run.code, 0, `exit ${run.code}: ${run.stdout}${run.err}`);
    const body = run.out.result.structuredContent;
    assert.equal(body.sandbox_id, sb);
    assert.equal(body.stdout, "from-inspector\n");
    assert.equal(body.exit_code, 2);
    const note = await callTool(server.client, "read_file", { sandbox_id: sb, path: "note.txt" });
    assert.equal(note.structuredContent.content, "from-inspector\n");
    await callTool(server.client, "kill_sandbox", { sandbox_id: sb });
  });

  test("a tool's error result is exit 5", { timeout: 200000 }, async () => {
    const r = await inspector(["--method", "tools/call", "--tool-name", "test_error_handling"]);
    assert.equal(r.code, 5, `exit ${r.code}: ${r.stdout}${r.err}`);
    assert.match(r.err, /isError/);
  });

  test("without the token, or with a wrong one, the server refuses it", { timeout: 200000 }, async () => {
    const none = await inspector(["--method", "tools/list"], { auth: false });
    assert.equal(none.code, 3, `exit ${none.code}: ${none.stdout}${none.err}`);
    assert.equal(none.out, null, "no result on stdout");
    const wrong = await inspector(["--method", "tools/list", "--header", "Authorization: Bearer not-the-token"], { auth: false });
    assert.equal(wrong.code, 3, `exit ${wrong.code}: ${wrong.stdout}${wrong.err}`);
    assert.match(wrong.err, /Unauthorized/);
  });
});
