// The k8s plugin against the fake apiserver, op by op through the plugin
// driver, and what only a cluster does to it: settings refused by name, an
// image that cannot be pulled, a pod that cannot be scheduled, the
// apiserver down and back, 401 (and a rotated token file), 403 on
// pods/exec naming the RBAC rule, 429, a pod deleted or evicted behind our
// back, and an exec stream dropped mid-way (never a made-up exit code); then
// one task through the real server whose reads are dropped and read again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, startServer, writeConfig } from "../lib/client.mjs";
import { pluginPath } from "./fake.mjs";
import { exec, k8sHarness, sleep, text } from "./harness.mjs";
import { RC, unb64 } from "./plugin-driver.mjs";

// Started here, before the tests are declared: without it they skip.
const { fake, skip, newDriver, driver, sandbox } = await k8sHarness();
const podOf = (id) => id.split(".")[0];

test("settings are validated and unknown ones refused by name", { skip: skip() }, async () => {
  const d = newDriver();
  for (const [s, word] of [
    [{ colour: "blue" }, "settings.colour"],
    [{ kind: "vm" }, "settings.kind"],
    [{ namespace: "Not_A_Label" }, "settings.namespace"],
    [{ in_cluster: true, kubeconfig: "/x" }, "settings.in_cluster"],
    [{ templates: { py: { image: "x", colour: 1 } } }, "settings.templates.py.colour"],
    [{ templates: { py: {} } }, "settings.templates.py.image"],
    [{ templates: { py: { image: "x", labels: { "taskbox.dev/id": "1" } } } }, "settings.templates.py.labels"],
    [{ max_concurrent_execs: -1 }, "settings.max_concurrent_execs"],
    [{ connection_reuse: 301 }, "settings.connection_reuse"],
    [{ workdir: "relative" }, "settings.workdir"],
    [{ env: { "BAD NAME": "1" } }, "'BAD NAME'"],
    [{ kubeconfig: "/nonexistent/kubeconfig" }, "settings.kubeconfig"],
    [{ context: "nope" }, "settings.context"],
  ]) {
    const r = await d.op({ op: "init", settings: { kubeconfig: fake.kubeconfig, ...s } });
    assert.equal(r.rc, RC.INVALID, `${JSON.stringify(s)}: ${r.err}`);
    assert.ok(r.err.includes(word), `${r.err} names ${word}`);
  }
  // An exec credential plugin gets a clear error.
  const kc = join(fake.dir, "exec-kubeconfig");
  writeFileSync(
    kc,
    `apiVersion: v1
kind: Config
current-context: x
clusters: [{name: c, cluster: {server: "${fake.url}"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}}}]
`,
  );
  const r = await d.op({ op: "init", settings: { kubeconfig: kc } });
  assert.equal(r.rc, RC.UNSUPPORTED);
  assert.match(r.err, /exec credential plugin/);
  // The other contexts of the fake's kubeconfig: client cert files, inline.
  for (const context of ["cert", "fake-data", "cert-data"]) {
    const ok = await d.op({ op: "init", settings: { kubeconfig: fake.kubeconfig, context } });
    assert.equal(ok.rc, RC.OK, `${context}: ${ok.err}`);
    await d.op({ op: "fini" });
  }
});

test("every op against the fake, and the errors a sandbox's life gives", { skip: skip() }, async () => {
  const d = await driver({ templates: { default: { image: "busybox" }, bad: { image: "fake/pull-error" },
    nowhere: { image: "fake/unschedulable" } } });
  const id = await sandbox(d);
  assert.match(id, /^tb-[0-9a-f]{16}\.[0-9a-f-]{36}$/);
  const r = await exec(d, ["sh", "-c", 'printf "%s|%s|%s" "$1" "$GREETING" "$(pwd)"; echo oops >&2; exit 3', "sh",
    "a b 'c'"], { env: ["GREETING=hi there"] });
  assert.equal(r.rc, RC.OK, r.err);
  assert.equal(r.exit_code, 3);
  assert.equal(text(r), "a b 'c'|hi there|/workspace");
  assert.equal(text(r, "stderr"), "oops\n", "the wrapper's pid line is not in stderr");
  const missing = await exec(d, ["no-such-command-here"]);
  assert.equal(missing.rc, RC.OK);
  assert.equal(missing.exit_code, 127);
  const badCwd = await exec(d, ["pwd"], { cwd: "/no/such/dir" });
  assert.equal(badCwd.rc, RC.NOT_FOUND, badCwd.err);
  const killed = await exec(d, ["sh", "-c", "kill -TERM $$"]);
  assert.equal(killed.exit_code, 128 + 15);
  const slow = await exec(d, ["sh", "-c", "sleep 30 & sleep 30"], { timeout_ms: 1000 });
  assert.equal(slow.rc, RC.OK, slow.err);
  assert.equal(slow.timed_out, true);
  const limited = await exec(d, ["sh", "-c", "head -c 100000 /dev/zero"], { output_limit: 1000 });
  assert.equal(unb64(limited.stdout).length, 1000);
  assert.equal(limited.out_truncated, true);

  const data = Buffer.from([0, 1, 2, 3, 255, 10, 65, 66]);
  let w = await d.op({ op: "write_file", path: "deep/er/f.bin", data: data.toString("base64"), mode: 0o640 });
  assert.equal(w.rc, RC.OK, w.err);
  assert.equal(text(await exec(d, ["stat", "-c", "%a %s", "deep/er/f.bin"])), "640 8\n");
  w = await d.op({ op: "write_file", path: "empty", data: "", mode: 0o600 });
  assert.equal(w.rc, RC.OK, w.err);
  const big = Buffer.alloc(3 * 1024 * 1024 + 7, 7);
  w = await d.op({ op: "write_file", path: "big.bin", data: big.toString("base64"), mode: 0o600 });
  assert.equal(w.rc, RC.OK, w.err);
  let p = await d.op({ op: "read_file", path: "big.bin", offset: 3 * 1024 * 1024, length: 100 });
  assert.equal(p.rc, RC.OK, p.err);
  assert.equal(unb64(p.data).length, 7);
  assert.equal(p.file_size, big.length);
  p = await d.op({ op: "read_file", path: "deep/er/f.bin", offset: 4, length: 2 });
  assert.deepEqual([...unb64(p.data)], [255, 10]);
  p = await d.op({ op: "read_file", path: "deep/er/f.bin", offset: 8, length: 5 });
  assert.equal(p.rc, RC.OK);
  assert.equal(p.data, "");
  assert.equal(p.file_size, 8);
  p = await d.op({ op: "read_file", path: "nope", offset: 0, length: 5 });
  assert.equal(p.rc, RC.NOT_FOUND);
  // read_files: every item in one exec, each as read_file would answer.
  const batch = await d.op({ op: "read_files", items: [
    { path: "deep/er/f.bin", offset: 4, length: 2 },
    { path: "nope", offset: 0, length: 5 },
    { path: "big.bin", offset: 3 * 1024 * 1024, length: 100 },
    { path: "empty", offset: 0, length: 10 },
  ] });
  assert.equal(batch.rc, RC.OK, batch.err);
  assert.deepEqual(batch.items.map((i) => i.status), [RC.OK, RC.NOT_FOUND, RC.OK, RC.OK]);
  assert.deepEqual([...unb64(batch.items[0].data)], [255, 10]);
  assert.equal(batch.items[0].file_size, 8);
  assert.equal(unb64(batch.items[2].data).length, 7);
  assert.equal(batch.items[2].file_size, big.length);
  assert.equal(batch.items[3].file_size, 0);
  const dirItem = await d.op({ op: "read_files", items: [{ path: "deep", offset: 0, length: 5 }] });
  assert.equal(dirItem.rc, RC.INVALID);
  assert.match(dirItem.err, /deep/);
  // An argument longer than a URL should carry goes through a file (up to
  // Linux's 128 KiB for one argument).
  const long = "y".repeat(100000) + "\n";
  const echo = await exec(d, ["sh", "-c", 'printf %s "$1" | wc -c', "sh", long]);
  assert.equal(text(echo).trim(), String(long.length));

  const renew = await d.op({ op: "renew", lifetime: 600 });
  assert.equal(renew.rc, RC.OK, renew.err);
  const pod = await fake.pod("default", podOf(id));
  const expires = Date.parse(pod.json.metadata.annotations["taskbox.dev/expires-at"]);
  assert.ok(Math.abs(expires - (Date.now() + 600000)) < 10000, "renew moves the expiry");
  assert.equal(pod.json.spec.activeDeadlineSeconds, 86400, "max_lifetime is the hard cap");
  assert.equal(pod.json.metadata.labels["app.kubernetes.io/managed-by"], "taskbox");
  assert.equal(pod.json.spec.automountServiceAccountToken, false);

  assert.equal((await d.op({ op: "close" })).rc, RC.OK);
  assert.equal((await d.op({ op: "destroy", id })).rc, RC.OK);
  assert.equal((await d.op({ op: "destroy", id })).rc, RC.NOT_FOUND, "destroying twice");
  assert.equal((await d.op({ op: "connect", id })).rc, RC.NOT_FOUND, "a destroyed sandbox");
  assert.equal((await d.op({ op: "connect", id: "tb-00.abc" })).rc, RC.NOT_FOUND);
  assert.equal((await d.op({ op: "connect", id: "../etc" })).rc, RC.NOT_FOUND);

  let c = await d.op({ op: "create", template: "bad" });
  assert.equal(c.rc, RC.NOT_FOUND, c.err);
  assert.match(c.err, /ErrImagePull|ImagePullBackOff/);
  c = await d.op({ op: "create", template: "nowhere" });
  assert.equal(c.rc, RC.UNAVAILABLE, c.err);
  assert.match(c.err, /Unschedulable|cannot be scheduled/);
  c = await d.op({ op: "create", template: "nonesuch" });
  assert.equal(c.rc, RC.NOT_FOUND);
  const left = await fake.call("GET", "/api/v1/namespaces/default/pods?labelSelector=taskbox.dev%2Ftemplate%3Dbad");
  assert.equal(left.json.items.filter((i) => !i.metadata.deletionTimestamp).length, 0, "a failed create cleans up");
});

test("an expired pod is GONE to connect, and the reaper deletes it", { skip: skip() }, async () => {
  const d = await driver({ reap_interval: 1 });
  const c = await d.op({ op: "create", lifetime: 1 });
  assert.equal(c.rc, RC.OK, c.err);
  await sleep(1500);
  const k = await d.op({ op: "connect", id: c.id });
  assert.ok([RC.GONE, RC.NOT_FOUND].includes(k.rc), `${k.rc}: ${k.err}`);
  let gone = false;
  for (let i = 0; i < 100 && !gone; i++) {
    const p = await fake.pod("default", podOf(c.id));
    gone = p.status === 404 || Boolean(p.json?.metadata?.deletionTimestamp);
    if (!gone) await sleep(100);
  }
  assert.ok(gone, "the reaper deleted the expired pod");
});

test("kind sandbox: connect resumes a suspended Sandbox; a pod made anew gets its home", { skip: skip() }, async () => {
  const d = await driver({ kind: "sandbox" });
  const id = await sandbox(d);
  const name = podOf(id);
  const sbPath = `/apis/agents.x-k8s.io/v1beta1/namespaces/default/sandboxes/${name}`;
  const sb = await fake.call("GET", sbPath);
  assert.equal(sb.json.spec.shutdownPolicy, "Delete");
  assert.ok(sb.json.spec.shutdownTime, "the expiry is the Sandbox's shutdownTime");
  assert.equal((await exec(d, ["sh", "-c", "echo kept > f"])).exit_code, 0);
  const susp = await fake.call("PATCH", sbPath, { spec: { operatingMode: "Suspended" } },
    "application/merge-patch+json");
  assert.equal(susp.status, 200, susp.text);
  const podGone = async () => {
    for (let i = 0; i < 100; i++) {
      if ((await fake.pod("default", name)).status === 404) return true;
      await sleep(100);
    }
    return false;
  };
  assert.ok(await podGone(), "suspending ends the pod");
  const k = await d.op({ op: "connect", id });
  assert.equal(k.rc, RC.OK, k.err);
  const again = await exec(d, ["sh", "-c", "pwd; cat f 2>/dev/null || echo fresh"]);
  assert.equal(again.rc, RC.OK, again.err);
  assert.equal(text(again), "/workspace\nfresh\n", "a resumed pod starts afresh, with its home");
  const renew = await d.op({ op: "renew", lifetime: 900 });
  assert.equal(renew.rc, RC.OK, renew.err);
  const after = await fake.call("GET", sbPath);
  assert.ok(Math.abs(Date.parse(after.json.spec.shutdownTime) - (Date.now() + 900000)) < 10000, "renew moves shutdownTime");
  assert.equal((await d.op({ op: "destroy", id })).rc, RC.OK);
  assert.equal((await fake.call("GET", sbPath)).status, 404);
});

test("the apiserver down and back: a clear error, then everything as before", { skip: skip() }, async () => {
  const d = await driver();
  const id = await sandbox(d);
  const bg = await exec(d, ["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $! > bg.pid"]);
  assert.equal(bg.rc, RC.OK, bg.err);
  await fake.down();
  try {
    const r = await exec(d, ["true"]);
    assert.equal(r.rc, RC.UNAVAILABLE, r.err);
    assert.match(r.err, /cannot reach the apiserver/);
    const k = await d.op({ op: "connect", id });
    assert.equal(k.rc, RC.UNAVAILABLE);
  } finally {
    await fake.up();
  }
  const k = await d.op({ op: "connect", id });
  assert.equal(k.rc, RC.OK, k.err);
  const alive = await exec(d, ["sh", "-c", "kill -0 $(cat bg.pid) && echo alive"]);
  assert.equal(text(alive), "alive\n", "a process outlives the apiserver's restart");
  await d.op({ op: "destroy", id });
});

test("401: AUTH naming the credentials, a rotated token file read again, and in_cluster", { skip: skip() }, async () => {
  const d = await driver();
  const id = await sandbox(d);
  await fake.faults({ status: 401, match: "^GET /api/v1/namespaces/default/pods/tb-[0-9a-f]+$", count: 1 });
  const k = await d.op({ op: "connect", id });
  assert.equal(k.rc, RC.AUTH, k.err);
  assert.match(k.err, /rejected the credentials/);
  await fake.faults({ status: 401, match: "/exec", count: 1 });
  assert.equal((await d.op({ op: "connect", id })).rc, RC.OK);
  const e = await exec(d, ["true"]);
  assert.equal(e.rc, RC.AUTH, e.err);
  await d.op({ op: "destroy", id });

  // A kubeconfig with tokenFile; the apiserver comes back wanting another
  // token (a rotated service-account token), which the file then holds.
  const tokenFile = join(fake.dir, "token");
  writeFileSync(tokenFile, "first-token\n");
  await fake.down();
  await fake.up({ token: "first-token" });
  const kc = join(fake.dir, "token-kubeconfig");
  writeFileSync(
    kc,
    `apiVersion: v1
kind: Config
current-context: t
clusters: [{name: c, cluster: {server: "${fake.url}", certificate-authority: "${fake.info.ca}"}}]
contexts: [{name: t, context: {cluster: c, user: u, namespace: default}}]
users: [{name: u, user: {tokenFile: "${tokenFile}"}}]
`,
  );
  const t = newDriver();
  assert.equal((await t.op({ op: "init", settings: { kubeconfig: kc, connection_reuse: 0 } })).rc, RC.OK);
  const tid = await sandbox(t);
  await fake.down();
  await fake.up({ token: "second-token" });
  writeFileSync(tokenFile, "second-token\n");
  const again = await t.op({ op: "connect", id: tid });
  assert.equal(again.rc, RC.OK, again.err);
  assert.equal((await exec(t, ["true"])).exit_code, 0);
  assert.equal((await t.op({ op: "destroy", id: tid })).rc, RC.OK);

  // in_cluster: the service account's token, CA and namespace files and
  // KUBERNETES_SERVICE_HOST/PORT; the token file read again after a 401.
  const sa = join(fake.dir, "serviceaccount");
  mkdirSync(sa, { recursive: true });
  writeFileSync(join(sa, "token"), "second-token");
  copyFileSync(fake.info.ca, join(sa, "ca.crt"));
  writeFileSync(join(sa, "namespace"), "default\n");
  const ic = newDriver({ KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: String(fake.info.port) });
  const init = await ic.op({ op: "init", settings: { in_cluster: true, service_account_dir: sa, connection_reuse: 0 } });
  assert.equal(init.rc, RC.OK, init.err);
  const icid = await sandbox(ic);
  await fake.down();
  await fake.up({ token: "third-token" });
  writeFileSync(join(sa, "token"), "third-token");
  const e3 = await exec(ic, ["echo", "in cluster"]);
  assert.equal(e3.rc, RC.OK, e3.err);
  assert.equal(text(e3), "in cluster\n");
  assert.equal((await ic.op({ op: "destroy", id: icid })).rc, RC.OK);
  const noEnv = newDriver({ KUBERNETES_SERVICE_HOST: "" });
  const r = await noEnv.op({ op: "init", settings: { in_cluster: true, service_account_dir: sa } });
  assert.equal(r.rc, RC.INVALID);
  assert.match(r.err, /KUBERNETES_SERVICE_HOST/);

  await fake.down();
  await fake.up({ token: null });
});

test("403 on pods/exec names the RBAC rule to grant", { skip: skip() }, async () => {
  const d = await driver();
  const id = await sandbox(d);
  await fake.faults({ status: 403, match: "/exec", count: 1,
    message: 'pods "x" is forbidden: User "taskbox" cannot get resource "pods/exec"' });
  const r = await exec(d, ["true"]);
  assert.equal(r.rc, RC.PERMISSION, r.err);
  assert.match(r.err, /get and create on pods\/exec/);
  assert.match(r.err, /cannot get resource/);
  await d.op({ op: "destroy", id });
});

test("429: retried after Retry-After, then RATE_LIMITED", { skip: skip() }, async () => {
  const d = await driver();
  const id = await sandbox(d);
  await fake.faults({ status: 429, match: "^GET /api/v1/namespaces/default/pods/tb-[0-9a-f]+$", count: 1,
    retry_after: 1 });
  const t0 = Date.now();
  const k = await d.op({ op: "connect", id });
  assert.equal(k.rc, RC.OK, k.err);
  assert.ok(Date.now() - t0 >= 900, "it waited for Retry-After");
  await fake.faults({ status: 429, match: "/exec", count: 1, retry_after: 1 });
  assert.equal((await exec(d, ["true"])).exit_code, 0, "an exec upgrade is retried too");
  await fake.faults({ status: 429, match: "^GET /api/v1/namespaces/default/pods/tb-[0-9a-f]+$", count: 10,
    retry_after: 1 });
  const k2 = await d.op({ op: "connect", id });
  assert.equal(k2.rc, RC.RATE_LIMITED, k2.err);
  await fake.clearFaults();
  await d.op({ op: "destroy", id });
});

test("a pod deleted or evicted behind our back is GONE, never a made-up result", { skip: skip() }, async () => {
  const d = await driver();
  let id = await sandbox(d);
  await fake.call("DELETE", `/api/v1/namespaces/default/pods/${podOf(id)}`);
  let r = await exec(d, ["echo", "hi"]);
  assert.equal(r.rc, RC.GONE, r.err);
  r = await d.op({ op: "read_file", path: "x", offset: 0, length: 1 });
  assert.equal(r.rc, RC.GONE, r.err);
  assert.equal((await d.op({ op: "connect", id })).rc, RC.NOT_FOUND);

  id = await sandbox(d);
  await fake.evict("default", podOf(id));
  r = await exec(d, ["echo", "hi"]);
  assert.equal(r.rc, RC.GONE, r.err);
  assert.match(r.err, /Evicted/);
  assert.equal((await d.op({ op: "renew", lifetime: 60 })).rc, RC.GONE);
  assert.equal((await d.op({ op: "connect", id })).rc, RC.GONE);
});

test("an exec stream dropped mid-way is IO, and the command lives on", { skip: skip() }, async () => {
  const d = await driver();
  const id = await sandbox(d);
  await fake.faults({ drop_exec_after_bytes: 2000, count: 1 });
  const r = await exec(d, ["sh", "-c", "echo $$ > long.pid; seq 1 100000; sleep 30"], { timeout_ms: 60000 });
  assert.equal(r.rc, RC.IO, r.err);
  assert.match(r.err, /broke off/);
  const alive = await exec(d, ["sh", "-c", "kill -0 $(cat long.pid) && echo alive"]);
  assert.equal(text(alive), "alive\n");
  await d.op({ op: "destroy", id });
});

test("a task goes on when reading it is dropped, and is read again", { skip: skip(), timeout: 120000 }, async () => {
  const dir = fake.dir;
  const config = writeConfig(dir, {
    default: "kube",
    providers: { kube: { plugin: "k8s", settings: { kubeconfig: fake.kubeconfig } } },
  });
  const s = await startServer({ args: ["--config", config], env: { TASKBOX_PLUGIN_PATH: pluginPath() }, client: "v2" });
  try {
    const call = async (name, args) => {
      const r = await callTool(s.client, name, args);
      return { err: r.isError, data: r.structuredContent || JSON.parse(r.content[0].text) };
    };
    const sb = (await call("create_sandbox", {})).data.sandbox_id;
    const t = (await call("start_task", { sandbox_id: sb, command: "for i in $(seq 1 40); do echo line $i; sleep 0.1; done" }))
      .data;
    assert.ok(t.task_id, JSON.stringify(t));
    // Every exec drops after a few bytes for a while: reads fail or say
    // unknown, never a made-up end.
    await fake.faults({ drop_exec_after_bytes: 10, count: 3 });
    for (let i = 0; i < 3; i++) {
      const g = await call("get_task", { sandbox_id: sb, task_id: t.task_id });
      if (!g.err) assert.ok(["running", "unknown", "succeeded"].includes(g.data.state), JSON.stringify(g.data));
      if (!g.err && g.data.state === "succeeded") assert.equal(g.data.exit_code, 0);
    }
    await fake.clearFaults();
    let g;
    for (let i = 0; i < 100; i++) {
      g = await call("get_task", { sandbox_id: sb, task_id: t.task_id });
      if (!g.err && g.data.state === "succeeded") break;
      await sleep(200);
    }
    assert.equal(g.data.state, "succeeded", JSON.stringify(g.data));
    assert.equal(g.data.exit_code, 0);
    assert.match(g.data.stdout, /line 40\n$/);
    await call("kill_sandbox", { sandbox_id: sb });
  } finally {
    await s.close();
  }
});
