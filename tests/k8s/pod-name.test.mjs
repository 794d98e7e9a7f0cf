// kind sandbox when a Sandbox's pod is not named like the Sandbox: the fake
// with --sandbox-pod-names generated names each Sandbox's first pod
// NAME-xxxxx (as a pod adopted from an agent-sandbox v0.1/v0.2 warm pool is
// named) and records it in the Sandbox annotation agents.x-k8s.io/pod-name,
// which agent-sandbox's controller reads (resolvePodName) and writes for
// every pod since v0.3.10. The plugin must exec in the pod the annotation
// names: through the real server (create_sandbox, run_command, a task read
// by a second server process, kill_sandbox and the pod gone after it), and
// op by op across a suspension, after which the controller names the new
// pod like the Sandbox again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { callTool, startServer, writeConfig } from "../lib/client.mjs";
import { pluginPath } from "./fake.mjs";
import { k8sHarness, sleep } from "./harness.mjs";
import { RC, unb64 } from "./plugin-driver.mjs";

const ANN = "agents.x-k8s.io/pod-name";
// Started here, before the tests are declared: without it they skip.
const { fake, skip, driver } = await k8sHarness({ args: ["--sandbox-pod-names", "generated"] });
const sbPath = (name) => `/apis/agents.x-k8s.io/v1beta1/namespaces/default/sandboxes/${name}`;
// kubernetes' generateName: five of these after the prefix.
const generated = (name) => new RegExp(`^${name}-[bcdfghjklmnpqrstvwxz2456789]{5}$`);

async function until(what, cond, limitMs = 20000) {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await sleep(100);
  }
}

// The pod the Sandbox's annotation names, checked to be the Sandbox's.
async function podOf(name) {
  const sb = await fake.call("GET", sbPath(name));
  assert.equal(sb.status, 200, sb.text);
  const pod = sb.json.metadata.annotations?.[ANN];
  assert.ok(pod, `the Sandbox names its pod: ${JSON.stringify(sb.json.metadata)}`);
  const p = await fake.pod("default", pod);
  assert.equal(p.status, 200, p.text);
  assert.equal(p.json.metadata.ownerReferences[0].uid, sb.json.metadata.uid);
  return pod;
}

// No pod is left that the Sandbox (uid) owned.
async function podsGone(uid) {
  return until("the Sandbox's pods to be gone", async () => {
    const l = await fake.call("GET", "/api/v1/namespaces/default/pods");
    return !l.json.items.some((p) => (p.metadata.ownerReferences || []).some((o) => o.uid === uid));
  });
}

test("through two server processes: create, run, a task read by the second, kill, the pod gone",
  { skip: skip(), timeout: 180000 }, async () => {
    const config = writeConfig(fake.dir, {
      default: "kube",
      providers: { kube: { plugin: "k8s", settings: { kubeconfig: fake.kubeconfig, kind: "sandbox" } } },
    });
    const opts = { args: ["--config", config], env: { TASKBOX_PLUGIN_PATH: pluginPath() } };
    const a = await startServer(opts);
    let b;
    try {
      const call = async (s, name, args) => {
        const r = await callTool(s.client, name, args);
        assert.ok(!r.isError, `${name}: ${r.content?.[0]?.text}`);
        return r.structuredContent || JSON.parse(r.content[0].text);
      };
      const sb = (await call(a, "create_sandbox", { timeout: 600 })).sandbox_id;
      const name = sb.split(":")[1].split(".")[0];
      const uid = (await fake.call("GET", sbPath(name))).json.metadata.uid;
      const pod = await podOf(name);
      assert.match(pod, generated(name));
      assert.equal((await fake.pod("default", name)).status, 404, "no pod is named like the Sandbox");

      // The fake's exec sets HOSTNAME to the pod's name.
      const r = await call(a, "run_command", { sandbox_id: sb, command: 'echo "$HOSTNAME"; pwd; echo e >&2; exit 5' });
      assert.equal(r.exit_code, 5);
      assert.equal(r.stdout, `${pod}\n/workspace\n`);
      assert.equal(r.stderr, "e\n");
      const t = await call(a, "start_task",
        { sandbox_id: sb, command: 'for i in 1 2 3; do echo "tick $i $HOSTNAME"; sleep 0.3; done' });

      b = await startServer(opts);
      let g;
      for (let i = 0; i < 30; i++) {
        g = await call(b, "get_task", { sandbox_id: sb, task_id: t.task_id, wait: 10 });
        if (g.state !== "running") break;
      }
      assert.equal(g.state, "succeeded", JSON.stringify(g));
      assert.equal(g.stdout, `tick 1 ${pod}\ntick 2 ${pod}\ntick 3 ${pod}\n`);
      await call(b, "kill_sandbox", { sandbox_id: sb });
      assert.equal((await fake.call("GET", sbPath(name))).status, 404);
      await podsGone(uid);
      assert.equal((await fake.pod("default", pod)).status, 404);
    } finally {
      await a.close();
      if (b) await b.close();
    }
  });

test("op by op: exec follows the annotation, also when a resume names the pod like the Sandbox",
  { skip: skip(), timeout: 120000 }, async () => {
    const d = await driver({ kind: "sandbox" });
    const c = await d.op({ op: "create", lifetime: 300 });
    assert.equal(c.rc, RC.OK, c.err);
    const name = c.id.split(".")[0];
    const first = await podOf(name);
    assert.match(first, generated(name));
    assert.equal((await d.op({ op: "connect", id: c.id })).rc, RC.OK);
    const host = async () => {
      const r = await d.op({ op: "exec", argv: ["sh", "-c", 'echo "$HOSTNAME"'], timeout_ms: 10000 });
      assert.equal(r.rc, RC.OK, r.err);
      return unb64(r.stdout).toString().trim();
    };
    assert.equal(await host(), first);
    const data = Buffer.from("kept\n").toString("base64");
    const w = await d.op({ op: "write_file", path: "f.txt", data, mode: 0o600 });
    assert.equal(w.rc, RC.OK, w.err);
    const p = await d.op({ op: "read_file", path: "f.txt", offset: 0, length: 100 });
    assert.equal(unb64(p.data).toString(), "kept\n");

    // Suspended: the pod goes, and so does the annotation.
    const susp = await fake.call("PATCH", sbPath(name), { spec: { operatingMode: "Suspended" } },
      "application/merge-patch+json");
    assert.equal(susp.status, 200, susp.text);
    await until("the pod to go", async () => (await fake.pod("default", first)).status === 404);
    const suspended = await fake.call("GET", sbPath(name));
    assert.equal(suspended.json.metadata.annotations?.[ANN], undefined, "no pod to name while suspended");
    // connect resumes it; the new pod is named like the Sandbox.
    const k = await d.op({ op: "connect", id: c.id });
    assert.equal(k.rc, RC.OK, k.err);
    assert.equal(await podOf(name), name);
    assert.equal(await host(), name);

    const uid = (await fake.call("GET", sbPath(name))).json.metadata.uid;
    assert.equal((await d.op({ op: "close" })).rc, RC.OK);
    assert.equal((await d.op({ op: "destroy", id: c.id })).rc, RC.OK);
    await podsGone(uid);
  });
