// The docker provider for the contract suite: a real engine (podman's
// Docker API service) started by tests/docker/engine.sh in a scratch
// directory, with the locally built test image (busybox + python3).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { scratchDir } from "../../lib/client.mjs";

let dir;

function engine(verb, env = {}) {
  const src = process.env.TASKBOX_SRCDIR;
  if (!src) throw new Error("TASKBOX_SRCDIR is not set: run through `make check`");
  return execFileSync("sh", [join(src, "tests/docker/engine.sh"), verb, dir], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
}

// The provider on an engine with its init binary (noInit false), or on one
// without (podman's init_path naming no file), with the plugin's init
// setting left at its default, "auto".
export function dockerProvider({ noInit = false } = {}) {
  return {
  name: noInit ? "docker (engine without init)" : "docker",

  async setup({ sandboxEnv = {} } = {}) {
    dir = scratchDir("taskbox-contract-docker-");
    engine("start", { TASKBOX_ENGINE_NO_INIT: noInit ? "1" : "0" });
    const vars = Object.fromEntries(
      engine("env")
        .trim()
        .split("\n")
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
    return {
      config: {
        default: "box",
        providers: {
          box: {
            plugin: "docker",
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
