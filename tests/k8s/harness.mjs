// What the k8s node tests share: the fake apiserver, started before the
// tests are declared (without it they skip, saying why), plugin drivers
// closed after them (each must exit 0), and op helpers.
import { after } from "node:test";
import assert from "node:assert/strict";
import { startFake } from "./fake.mjs";
import { K8sDriver, RC, unb64 } from "./plugin-driver.mjs";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const exec = (d, argv, more = {}) => d.op({ op: "exec", argv, timeout_ms: 10000, ...more });
export const text = (r, stream = "stdout") => unb64(r[stream]).toString();

// Starts the fake with fakeOpts (startFake's); returns it (null when it
// cannot run here), skip() for each test's skip option, newDriver(env): a
// plugin driver not yet initialised, driver(settings): one initialised on
// the fake, and sandbox(d, more): the id of a sandbox created and connected
// through d.
export async function k8sHarness(fakeOpts = {}) {
  const fake = await startFake(fakeOpts);
  const drivers = [];

  after(async () => {
    const codes = [];
    for (const d of drivers) codes.push(await d.close());
    if (fake) await fake.stop();
    drivers.forEach((d, i) => assert.equal(codes[i], 0, d.stderr));
  });

  // A driver not yet initialised (env: its environment's additions;
  // binary: another driver of the build than tests/e2b/e2b-driver).
  function newDriver(env = {}, binary = undefined) {
    const d = new K8sDriver(env, binary);
    drivers.push(d);
    return d;
  }

  async function driver(settings = {}, binary = undefined) {
    const d = newDriver({}, binary);
    const init = await d.op({
      op: "init",
      settings: { kubeconfig: fake.kubeconfig, connection_reuse: 0, ...settings },
    });
    assert.equal(init.rc, RC.OK, init.err);
    return d;
  }

  async function sandbox(d, more = {}) {
    const c = await d.op({ op: "create", lifetime: 300, ...more });
    assert.equal(c.rc, RC.OK, c.err);
    const k = await d.op({ op: "connect", id: c.id });
    assert.equal(k.rc, RC.OK, k.err);
    return c.id;
  }

  const skip = () => (fake ? false : "no busybox to build the pods' root");
  return { fake, skip, newDriver, driver, sandbox };
}
