// A sandbox's command cannot speak for the server: it cannot open the
// server's stdout through /proc/<pid>/fd/1 and write a forged JSON-RPC
// message there. The server runs as a user other than root (as root, this
// test drops to nobody with setpriv), on the local provider, isolation none,
// with its stdout a pipe of that user's, as when a client of that user
// starts it (a shell pipes it through cat to the test's client).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { callTool, scratchDir, writeConfig } from "../lib/client.mjs";

const asRoot = process.getuid() === 0;
const state = scratchDir("taskbox-stdout-guard-");
chmodSync(state, 0o777);
const cfg = writeConfig(scratchDir("taskbox-stdout-guard-cfg-"), {
  default: "local",
  providers: { local: { plugin: "local", settings: { root: `${state}/local` } } },
});
chmodSync(cfg, 0o644);
chmodSync(cfg.replace(/\/config\.json$/, ""), 0o755);

let client;
after(async () => {
  if (client) await client.close().catch(() => {});
});

test("a command cannot write onto the server's stdout", { timeout: 60000 }, async () => {
  const bin = process.env.TASKBOX_BIN;
  assert.ok(bin, "TASKBOX_BIN is not set: run through `make check`");
  const relay = ["sh", "-c", '"$@" | cat', "sh", bin, "serve", "--config", cfg];
  const argv = asRoot
    ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", ...relay]
    : relay;
  const transport = new StdioClientTransport({
    command: argv[0],
    args: argv.slice(1),
    env: { ...process.env, HOME: state, XDG_STATE_HOME: state },
    stderr: "inherit",
  });
  client = new Client({ name: "stdout-guard", version: "1.0.0" }, { capabilities: {} });
  const seen = [];
  await client.connect(transport);
  const orig = transport.onmessage;
  transport.onmessage = (msg) => {
    seen.push(msg);
    orig(msg);
  };
  // The server is the relay shell's child named taskbox.
  const children = execFileSync("cat", [`/proc/${transport.pid}/task/${transport.pid}/children`], { encoding: "utf8" })
    .trim().split(/\s+/);
  const pid = children.find((c) => execFileSync("cat", [`/proc/${c}/comm`], { encoding: "utf8" }).trim() === "taskbox");
  assert.ok(pid, `the server among ${children}`);
  const uid = execFileSync("sh", ["-c", `awk '/^Uid:/ { print $2 }' /proc/${pid}/status`], { encoding: "utf8" }).trim();
  assert.notEqual(uid, "0", "the server runs as a user other than root");

  const box = await callTool(client, "create_sandbox", {});
  assert.ok(!box.isError, box.content?.[0]?.text);
  const sandbox_id = box.structuredContent.sandbox_id;
  const forged = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "error", data: "forged by a sandbox" } });
  const r = await callTool(client, "run_command", {
    sandbox_id,
    command: `printf '%s\\n' '${forged}' > /proc/${pid}/fd/1 && echo wrote || echo refused`,
  });
  assert.ok(!r.isError, r.content?.[0]?.text);
  assert.equal(r.structuredContent.stdout, "refused\n", `stderr: ${r.structuredContent.stderr}`);
  // The server still answers, and nothing forged reached the client.
  const again = await callTool(client, "run_command", { sandbox_id, command: "echo fine" });
  assert.equal(again.structuredContent.stdout, "fine\n");
  assert.ok(!JSON.stringify(seen).includes("forged by a sandbox"));
  await callTool(client, "kill_sandbox", { sandbox_id });
});
