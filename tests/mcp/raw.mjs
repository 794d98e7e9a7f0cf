// A raw newline-delimited JSON-RPC pipe to one server process, for what
// the SDK client will not send (older protocol versions, malformed input).
import { spawn } from "node:child_process";
import { taskboxCommand } from "../lib/client.mjs";

// opts.env: extra environment, merged over this process's.
export function spawnRaw(args = [], opts = {}) {
  const { command, args: argv } = taskboxCommand(["serve", ...args]);
  const env = opts.env ? { ...process.env, ...opts.env } : undefined;
  const child = spawn(command, argv, { stdio: ["pipe", "pipe", "inherit"], env });
  const messages = [];
  const waiters = [];
  let tail = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    tail += chunk;
    let nl;
    while ((nl = tail.indexOf("\n")) >= 0) {
      const line = tail.slice(0, nl);
      tail = tail.slice(nl + 1);
      // Anything on stdout that is not one JSON message is a failure.
      messages.push(JSON.parse(line));
      for (const w of waiters.splice(0)) w();
    }
  });
  const exited = new Promise((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    messages,
    exited,
    get trailing() {
      return tail;
    },
    send(obj) {
      child.stdin.write((typeof obj === "string" ? obj : JSON.stringify(obj)) + "\n");
    },
    // Resolves with the first message matching pred, waiting up to ms.
    async waitFor(pred, ms = 20000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = messages.find(pred);
        if (found) return found;
        if (Date.now() > deadline) throw new Error("no matching message in time");
        await new Promise((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    async close() {
      child.stdin.end();
      return exited;
    },
  };
}

export function initialize(id, protocolVersion) {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: "raw-test", version: "1.0.0" },
    },
  };
}
