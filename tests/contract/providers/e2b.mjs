// The e2b provider for the contract suite: the plugin against the loopback
// fake of E2B's control plane and envd (tests/e2b/fake), which runs the
// sandboxes' commands for real on this machine. supervisor "python3" sets
// the instance's "supervisor" (the default runs the static copy).
import { startFake } from "../../e2b/fake/spawn.mjs";

export function e2bProvider({ supervisor } = {}) {
  let fake;
  return {
  name: supervisor ? `e2b, "supervisor": "${supervisor}"` : "e2b",
  // connect extends a sandbox's life to default_lifetime (as E2B's own
  // connect does): a sandbox in use does not run out.
  renewsOnConnect: true,

  async setup({ sandboxEnv = {} } = {}) {
    // envd hands commands its own PATH; prefer the system's python3 over
    // version-manager shims, as the local provider does.
    fake = await startFake({ env: { PATH: `/usr/bin:/bin:${process.env.PATH || ""}` } });
    return {
      config: {
        default: "cloud",
        providers: {
          cloud: {
            plugin: "e2b",
            ...(supervisor ? { supervisor } : {}),
            settings: { api_url: fake.apiUrl, sandbox_url: fake.sandboxUrl, env: sandboxEnv },
          },
        },
      },
      env: { E2B_API_KEY: fake.apiKey },
    };
  },

  async teardown() {
    if (fake) await fake.stop();
    fake = undefined;
  },
  };
}

export default e2bProvider();
