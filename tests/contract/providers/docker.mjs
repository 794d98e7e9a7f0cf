// The docker provider for the contract suite: a real engine (podman's
// Docker API service) started by tests/docker/engine.sh in a scratch
// directory, with the locally built test image (busybox + python3).
import { engineWith } from "../../docker/engine.mjs";
import { scratchDir } from "../../lib/client.mjs";

let dir;

// engine.sh VERB on this provider's directory; no engine here is a failure.
function engine(verb, env = {}) {
  const out = engineWith(env, verb, dir);
  if (!out) throw new Error(`engine.sh ${verb}: no engine here (exit 77)`);
  return out;
}

// The provider on an engine with its init binary (noInit false), or on one
// without (podman's init_path naming no file), with the plugin's init
// setting left at its default, "auto"; supervisor sets the instance's
// "supervisor" (the default runs the static copy).
export function dockerProvider({ noInit = false, supervisor } = {}) {
  return {
  name: (noInit ? "docker (engine without init)" : "docker") + (supervisor ? `, "supervisor": "${supervisor}"` : ""),

  async setup({ sandboxEnv = {} } = {}) {
    dir = scratchDir("taskbox-contract-docker-");
    engine("start", { TASKBOX_ENGINE_NO_INIT: noInit ? "1" : "0" });
    const vars = engine("env");
    return {
      config: {
        default: "box",
        providers: {
          box: {
            plugin: "docker",
            ...(supervisor ? { supervisor } : {}),
            settings: {
              host: vars.DOCKER_HOST,
              image: vars.TASKBOX_DOCKER_IMAGE,
              env: sandboxEnv,
            },
          },
        },
      },
      env: {},
      dir,
    };
  },

  async teardown() {
    if (dir) engine("stop");
    dir = undefined;
  },
  };
}

export default dockerProvider();
