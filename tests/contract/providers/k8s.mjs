// The k8s provider for the contract suite: the plugin against the loopback
// fake apiserver (tests/k8s/fake_apiserver.py over TLS with a client
// certificate from its kubeconfig), whose pods run real processes chrooted
// into a busybox + python3 root (tests/k8s/rootfs.sh). kind "pod" makes
// bare Pods, kind "sandbox" agent-sandbox Sandboxes. image "debian:12-slim"
// gets the same root without python3 (the fake's PYTHONLESS_IMAGES), where
// the server copies its static supervisor into each sandbox (as it does by
// default anyway); supervisor sets the instance's "supervisor".
import { pluginPath, startFake } from "../../k8s/fake.mjs";

export function k8sProvider({ kind = "pod", image = "taskbox/test:busybox-python3", supervisor } = {}) {
  let fake;
  const noPython = image.startsWith("debian:");
  return {
    name:
      (kind === "pod" ? "k8s" : `k8s (kind ${kind})`) +
      (noPython ? `, ${image} without python3` : "") +
      (supervisor ? `, "supervisor": "${supervisor}"` : ""),
    noPython,

    async setup({ sandboxEnv = {} } = {}) {
      fake = await startFake();
      if (!fake) throw new Error("the fake apiserver's root filesystem cannot be built here (no busybox)");
      return {
        config: {
          default: "kube",
          providers: {
            kube: {
              plugin: "k8s",
              ...(supervisor ? { supervisor } : {}),
              settings: {
                kubeconfig: fake.kubeconfig,
                kind,
                image,
                env: sandboxEnv,
                // The sandbox run also puts the exec gate under the
                // suite's concurrent calls.
                ...(kind === "sandbox" ? { max_concurrent_execs: 3 } : {}),
              },
            },
          },
        },
        env: { TASKBOX_PLUGIN_PATH: pluginPath() },
        dir: fake.dir,
      };
    },

    async teardown() {
      if (fake) await fake.stop();
      fake = undefined;
    },
  };
}

export default k8sProvider();
