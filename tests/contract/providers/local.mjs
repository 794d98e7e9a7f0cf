// The local provider for the contract suite: sandboxes are directories
// under a scratch state root, commands run as the current user.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { scratchDir } from "../../lib/client.mjs";

let dir;

export default {
  name: "local",
  // Its sandboxes share the server's PID namespace
  // (TASKBOX_FEATURE_HOST_PIDS): the server watches supervisors by pidfd.
  hostPids: true,

  // sandboxEnv: variables every command in the sandbox must see (the
  // supervisor masks those named like secrets).
  async setup({ sandboxEnv = {} } = {}) {
    dir = scratchDir("taskbox-contract-local-");
    return {
      config: {
        default: "local",
        providers: {
          local: {
            plugin: "local",
            settings: { root: join(dir, "state"), env: sandboxEnv },
          },
        },
      },
      // The supervisor is started as `python3` from the sandbox's PATH,
      // which on the local provider is the server's. Version-manager shims
      // (pyenv and the like) cost seconds per call: prefer the system's.
      env: { PATH: `/usr/bin:/bin:${process.env.PATH || ""}` },
      dir,
    };
  },

  async teardown() {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  },
};
