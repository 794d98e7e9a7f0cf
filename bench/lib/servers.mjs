// The three stdio servers the benchmark drives with the same official SDK
// client: taskbox, DesktopCommander (the peer) and the minimal C echo loop.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

// The PATH every server and every spawn of the benchmark gets: the system's
// own directories, so no version-manager shim (a python3 shim costs tens of
// milliseconds per call) favours or penalises anyone.
export const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// A port nothing listens on (TCP port 9, discard, is closed on loopback
// here): DesktopCommander's feature-flag fetch fails at once instead of
// leaving the machine.
const CLOSED_URL = "http://127.0.0.1:9/flags.json";

// Spawns command/args, connects the SDK client (initialize + initialized)
// and lists the tools once as a real client does. connectMs covers spawn and
// initialize only.
async function connect(name, command, args, env) {
  const transport = new StdioClientTransport({ command, args, env, stderr: "pipe" });
  let stderr = "";
  const client = new Client({ name: "taskbox-bench", version: "1.0.0" }, { capabilities: {} });
  const t0 = performance.now();
  const connecting = client.connect(transport);
  transport.stderr?.on("data", (d) => {
    if (stderr.length < 65536) stderr += d.toString();
  });
  try {
    await connecting;
  } catch (e) {
    throw new Error(`${name}: connect failed: ${e.message}\n${stderr}`);
  }
  const connectMs = performance.now() - t0;
  let tools = [];
  if (client.getServerCapabilities()?.tools) tools = (await client.listTools()).tools;
  return {
    name,
    client,
    connectMs,
    tools,
    pid: transport.pid,
    stderr: () => stderr,
    async call(tool, args, options) {
      const r = await client.callTool({ name: tool, arguments: args }, undefined, options);
      if (r.isError) {
        const text = (r.content || []).map((c) => c.text || "").join(" ");
        throw new Error(`${name}: ${tool} failed: ${text}`);
      }
      return r;
    },
    async close() {
      await client.close();
    },
  };
}

// The environment of a taskbox on its default config (the local
// provider), its state kept in stateDir so a run never touches the user's
// own sandboxes.
export function taskboxEnv(stateDir, extraEnv = {}) {
  return {
    PATH: SYSTEM_PATH,
    HOME: stateDir,
    XDG_STATE_HOME: join(stateDir, "state"),
    XDG_CONFIG_HOME: join(stateDir, "config"),
    ...(process.env.TASKBOX_PLUGIN_PATH ? { TASKBOX_PLUGIN_PATH: process.env.TASKBOX_PLUGIN_PATH } : {}),
    ...extraEnv,
  };
}

// taskbox over stdio (see taskboxEnv); serveArgs follow `serve`.
export function connectTaskbox(bin, stateDir, extraEnv = {}, serveArgs = []) {
  return connect("taskbox", bin, ["serve", ...serveArgs], taskboxEnv(stateDir, extraEnv));
}

// Prepares a scratch HOME in which DesktopCommander starts quietly: telemetry
// and onboarding off, its Chrome download pre-empted by an empty stand-in.
export function prepareDesktopCommanderHome(home) {
  const dir = join(home, ".claude-server-commander");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "config.json"),
    JSON.stringify({ telemetryEnabled: false, welcomeOnboardingEligible: false }, null, 2),
  );
  const chrome = join(dir, "puppeteer-cache/chrome/linux-0.0.0/chrome-linux64");
  mkdirSync(chrome, { recursive: true });
  writeFileSync(join(chrome, "chrome"), "", { mode: 0o755 });
}

export function desktopCommanderEntry() {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("@wonderwhy-er/desktop-commander/package.json");
  return join(dirname(pkg), "dist/index.js");
}

export function connectDesktopCommander(home) {
  const env = {
    PATH: SYSTEM_PATH,
    HOME: home,
    DESKTOP_COMMANDER_DISABLE_TELEMETRY: "1",
    DC_FLAG_URL: CLOSED_URL,
  };
  return connect("desktop-commander", process.execPath, [desktopCommanderEntry(), "--no-onboarding"], env);
}

export function connectEcho(bin) {
  return connect("echo", bin, [], { PATH: SYSTEM_PATH });
}
