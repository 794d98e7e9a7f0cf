// The fake's sandboxes: each one a private temporary directory that serves as
// the sandbox user's home, with a lifetime, a state (running or paused) and
// an envd access token. Destroying one kills every process that carries its
// E2B_SANDBOX_ID in its environment (also daemons that left the process
// group) and removes its directory.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ENVD_VERSION = "0.5.7";

export class Sandboxes {
  constructor() {
    this.byId = new Map();
    this.root = mkdtempSync(join(tmpdir(), "e2b-fake-"));
  }

  create(templateID, timeoutS, envVars = {}, metadata = {}) {
    const id = "i" + randomBytes(10).toString("hex");
    const dir = mkdtempSync(join(this.root, `${id}-`));
    const sbx = {
      id,
      templateID,
      envVars,
      metadata,
      home: dir,
      token: randomBytes(16).toString("hex"),
      state: "running",
      startedAt: new Date(),
      endAt: null,
      timer: null,
      processes: new Map(),
    };
    this.byId.set(id, sbx);
    this.setTimeout(sbx, timeoutS);
    return sbx;
  }

  get(id) {
    return this.byId.get(id);
  }

  // Sets the sandbox to expire timeoutS seconds from now.
  setTimeout(sbx, timeoutS) {
    if (sbx.timer) clearTimeout(sbx.timer);
    sbx.endAt = new Date(Date.now() + timeoutS * 1000);
    sbx.timer = setTimeout(() => this.kill(sbx.id), timeoutS * 1000);
    sbx.timer.unref();
  }

  // Extends, never shortens, the sandbox's life (connect's rule).
  extend(sbx, timeoutS) {
    const want = Date.now() + timeoutS * 1000;
    if (!sbx.endAt || want > sbx.endAt.getTime()) this.setTimeout(sbx, timeoutS);
  }

  // Kills every process of the sandbox and removes it. Returns false when
  // there was no such sandbox.
  kill(id) {
    const sbx = this.byId.get(id);
    if (!sbx) return false;
    this.byId.delete(id);
    if (sbx.timer) clearTimeout(sbx.timer);
    killMarked(id);
    rmSync(sbx.home, { recursive: true, force: true });
    return true;
  }

  killAll() {
    for (const id of [...this.byId.keys()]) this.kill(id);
    rmSync(this.root, { recursive: true, force: true });
  }
}

// SIGKILLs every process whose environment holds E2B_SANDBOX_ID=id.
function killMarked(id) {
  const marker = Buffer.from(`E2B_SANDBOX_ID=${id}\0`);
  for (let round = 0; round < 3; round++) {
    let found = 0;
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      let env;
      try {
        env = readFileSync(`/proc/${name}/environ`);
      } catch {
        continue;
      }
      if (env.indexOf(marker) < 0) continue;
      try {
        process.kill(Number(name), "SIGKILL");
        found++;
      } catch {
        // already gone
      }
    }
    if (!found) return;
  }
}

// The Sandbox object the API returns for create and connect.
export function sandboxJson(sbx) {
  return {
    templateID: sbx.templateID,
    sandboxID: sbx.id,
    clientID: "fake",
    envdVersion: ENVD_VERSION,
    envdAccessToken: sbx.token,
    trafficAccessToken: null,
    domain: null,
  };
}

export function sandboxDetailJson(sbx) {
  return {
    templateID: sbx.templateID,
    sandboxID: sbx.id,
    clientID: "fake",
    startedAt: sbx.startedAt.toISOString(),
    endAt: sbx.endAt.toISOString(),
    envdVersion: ENVD_VERSION,
    envdAccessToken: sbx.token,
    domain: null,
    cpuCount: 1,
    memoryMB: 512,
    diskSizeMB: 1024,
    metadata: { ...sbx.metadata },
    state: sbx.state,
  };
}

// The ListedSandbox object of the list endpoints.
export function listedSandboxJson(sbx) {
  return {
    templateID: sbx.templateID,
    sandboxID: sbx.id,
    clientID: "fake",
    startedAt: sbx.startedAt.toISOString(),
    endAt: sbx.endAt.toISOString(),
    envdVersion: ENVD_VERSION,
    cpuCount: 1,
    memoryMB: 512,
    diskSizeMB: 1024,
    metadata: { ...sbx.metadata },
    state: sbx.state,
  };
}
