// Waits on a provider whose sandboxes' processes the server cannot see
// share one watch per sandbox (core/tasks/remote_watch.c): one `watch`
// verb in each sandbox names every task its waits concern, and its answers
// wake them. Exported as sharedWatchSuite(provider), one file per remote
// provider. The sandboxes' processes are this host's (the fakes and the
// engine run them here), so the verbs are counted in /proc.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { callTool, scratchDir, startServer, writeConfig } from "../lib/client.mjs";
import { watchVerbs } from "../lib/verbs.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Waits until f() is truthy, or fails after ms with what().
async function until(f, ms, what) {
  const end = Date.now() + ms;
  while (!f()) {
    assert.ok(Date.now() < end, what());
    await sleep(200);
  }
}

// Runs f over items, at most n at once.
async function pool(items, n, f) {
  const out = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: n }, worker));
  return out;
}

// killed: also the test of a watch verb killed in the sandbox (the host's
// restart is the same on every provider: run where it costs little).
// waits: how many (200 unless given), on two sandboxes; perTask: the
// waits on each task, so waits / perTask tasks (each start is an exec: on a
// container engine 200 take minutes).
export function sharedWatchSuite(provider, { killed = true, waits: total = 200, perTask = 1 } = {}) {
  const perBox = total / 2 / perTask;
  describe(`one watch per sandbox: ${provider.name}`, { timeout: 900000 }, () => {
    let setup, s;

    // No backend here is a failure, as in the contract suite.
    before(async () => {
      setup = await provider.setup();
      const cfg = writeConfig(scratchDir(), setup.config);
      s = await startServer({ args: ["--config", cfg], env: setup.env || {} });
    });

    after(async () => {
      if (s) await s.close();
      if (setup) await provider.teardown();
    });

    async function call(name, args) {
      const r = await callTool(s.client, name, args, { timeout: 300000 });
      assert.ok(!r.isError, `${name}: ${JSON.stringify(r.content)}`);
      return r.structuredContent;
    }

    // A client's wait for a task's end: get_task with wait 60, asked again
    // while it answers "running" (on a loaded machine the waits may be
    // asked again before the verbs settle). early() says whether an end
    // seen now would be before its gate opened.
    async function waitEnd(sandbox_id, task_id, early) {
      for (;;) {
        const v = await call("get_task", { sandbox_id, task_id, wait: 60 });
        if (v.state !== "running") {
          assert.ok(!early(), `task ${task_id} answered ${v.state} before its gate opened`);
          return v;
        }
      }
    }

    // n tasks in a new sandbox that end, each with its own exit code,
    // once the sandbox's gate opens: each is blocked reading a FIFO (no
    // process polls: 200 tasks polling starved a loaded engine's execs),
    // and a writer's open and close releases them all.
    async function gatedTasks(n, tag) {
      // Long lives: starting 200 tasks on a loaded engine takes minutes.
      const { sandbox_id } = await call("create_sandbox", { timeout: 3600 });
      const gate = `gate-${tag}`;
      const made = await call("run_command", { sandbox_id, command: `mkfifo ${gate}` });
      assert.equal(made.exit_code, 0, JSON.stringify(made));
      const tasks = await pool([...Array(n).keys()], 4, (i) =>
        call("start_task", { sandbox_id, timeout: 3600, command: `read _ < ${gate} || true; exit ${(i % 200) + 1}` }),
      );
      for (const t of tasks) assert.equal(t.state, "running", `a task did not start: ${JSON.stringify(t)}`);
      return { sandbox_id, gate, tasks, ids: new Set(tasks.map((t) => t.task_id)) };
    }

    // Opens box's gate: a writer's open and close of the FIFO ends every
    // task blocked reading it.
    async function openGate(box) {
      const r = await call("run_command", { sandbox_id: box.sandbox_id, command: `: > ${box.gate}` });
      assert.equal(r.exit_code, 0, JSON.stringify(r));
    }

    // The watch verbs naming a sandbox's tasks, once they settle at want.
    // On a loaded engine the waits' first views (each a round trip) and
    // the verb's restarts (on docker each abandoned verb's group is killed
    // through an exec of its own) take minutes to let all 100 join.
    async function settled(box, want) {
      let verbs = [];
      const named = () => new Set(verbs.flatMap((v) => v.tasks.filter((t) => box.ids.has(t))));
      await until(
        () => {
          verbs = watchVerbs(box.ids);
          return verbs.length === want && named().size === box.ids.size;
        },
        240000,
        () => `${verbs.length} watch verbs name ${named().size} of ${box.ids.size} tasks`,
      );
      return verbs;
    }

    // Five plain get_tasks of task in sandbox_id, one after another: their
    // times in ms, each answered (a server that stops answering fails here).
    async function plainGets(sandbox_id, task_id) {
      const ms = [];
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        assert.equal((await call("get_task", { sandbox_id, task_id })).state, "running");
        ms.push(performance.now() - t0);
      }
      return ms.sort((x, y) => x - y);
    }

    test(`${total} waits on two sandboxes (${perTask} per task): two watch verbs name all their tasks, a plain get_task answers meanwhile, and every wait answers at its own task's end`, async () => {
      const boxes = [await gatedTasks(perBox, `a${process.pid}`), await gatedTasks(perBox, `b${process.pid}`)];
      const plain = await call("start_task", { sandbox_id: boxes[0].sandbox_id, timeout: 3600, command: "exec sleep 3000" });
      const idle = await plainGets(boxes[0].sandbox_id, plain.task_id);
      let open = false;
      const waitsOf = (b) => b.tasks.flatMap((task) => Array.from({ length: perTask }, () => waitEnd(b.sandbox_id, task.task_id, () => !open)));
      const waits = boxes.flatMap(waitsOf);
      assert.equal(waits.length, total);
      const sent = Date.now();
      for (const b of boxes) await settled(b, 1);
      // The time is the bench's to judge (bench/waits.mjs): here it is
      // shown, and every call must answer.
      const busy = await plainGets(boxes[0].sandbox_id, plain.task_id);
      console.log(`# a plain get_task: p50 ${idle[2].toFixed(1)} ms idle, ${busy[2].toFixed(1)} ms with ${total} waits parked (${(busy[2] / idle[2]).toFixed(2)}x)`);
      // Quiet: the verbs stay, one per sandbox.
      await sleep(2000);
      const counts = boxes.map((b) => watchVerbs(b.ids).length);
      assert.deepEqual(counts, [1, 1], `watch verbs per sandbox ${Date.now() - sent} ms after the waits were sent`);
      open = true;
      for (const b of boxes) await openGate(b);
      const views = await Promise.all(waits);
      let k = 0;
      for (const b of boxes)
        for (let i = 0; i < b.tasks.length; i++)
          for (let j = 0; j < perTask; j++, k++) {
            assert.equal(views[k].task_id, b.tasks[i].task_id);
            assert.equal(views[k].state, "failed", JSON.stringify(views[k]));
            assert.equal(views[k].exit_code, (i % 200) + 1);
          }
      assert.equal((await call("cancel_task", { sandbox_id: boxes[0].sandbox_id, task_id: plain.task_id })).state, "cancelled");
      // With no wait left, no verb is left.
      for (const b of boxes) await until(() => watchVerbs(b.ids).length === 0, 30000, () => "a watch verb outlived its waits");
      for (const b of boxes) await call("kill_sandbox", { sandbox_id: b.sandbox_id });
    });

    if (killed)
    test("a watch verb killed in the sandbox is run again: no wait is lost or answered before its task ends", async () => {
      const b = await gatedTasks(6, `k${process.pid}`);
      let open = false;
      const waits = b.tasks.map((task) => waitEnd(b.sandbox_id, task.task_id, () => !open));
      for (let round = 0; round < 2; round++) {
        const [verb] = await settled(b, 1);
        process.kill(verb.pid, "SIGKILL");
        await until(
          () => watchVerbs(b.ids).some((v) => v.pid !== verb.pid && b.tasks.every((x) => v.tasks.includes(x.task_id))),
          30000,
          () => `no new watch verb after ${verb.pid} was killed`,
        );
      }
      await sleep(1000);
      open = true;
      await openGate(b);
      const views = await Promise.all(waits);
      views.forEach((v, i) => {
        assert.equal(v.state, "failed", JSON.stringify(v));
        assert.equal(v.exit_code, i + 1);
      });
      await call("kill_sandbox", { sandbox_id: b.sandbox_id });
    });
  });
}
