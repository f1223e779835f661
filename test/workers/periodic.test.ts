import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import t from 'tap';
import type { DB } from '../../src/db/schema.js';
import { periodic } from '../../src/workers/periodic.js';
import type { WorkerContext } from '../../src/workers/worker.js';

function capturingContext() {
  const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
  const ctx: WorkerContext = {
    db: {} as Kysely<DB>,
    log: { info: () => {}, warn: (obj, msg) => warnings.push({ obj: obj as Record<string, unknown>, msg }) },
  };
  return { ctx, warnings };
}

/** A run that waits until released: lets a test hold one in flight. */
function gatedRuns() {
  let started = 0;
  let release = () => {};
  const run = async () => {
    started++;
    await new Promise<void>((resolve) => (release = resolve));
  };
  return { run, started: () => started, release: () => release() };
}

async function until(condition: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 5_000; !condition() && Date.now() < deadline; ) await sleep(5);
}

t.test('a tick that finds the previous run going is skipped: never two runs at once', async (t) => {
  const runs = gatedRuns();
  const worker = periodic({ name: 'slow', intervalMs: 5, run: runs.run });
  worker.start(capturingContext().ctx);
  t.teardown(() => worker.stop());
  await until(() => runs.started() === 1);
  await sleep(60);
  t.equal(runs.started(), 1, 'a dozen ticks passed during the run');
  runs.release();
  await until(() => runs.started() === 2);
  t.equal(runs.started(), 2, 'the next tick after the run ends starts one');
  runs.release();
});

t.test('stop waits for the run in flight, then drains, and no run starts after it', async (t) => {
  const runs = gatedRuns();
  const events: string[] = [];
  const worker = periodic({
    name: 'draining',
    intervalMs: 5,
    run: runs.run,
    drain: async () => void events.push('drained'),
  });
  worker.start(capturingContext().ctx);
  await until(() => runs.started() === 1);
  const stopped = worker.stop().then(() => events.push('stopped'));
  await sleep(30);
  t.same(events, [], 'still waiting for the run');
  events.push('run released');
  runs.release();
  await stopped;
  t.same(events, ['run released', 'drained', 'stopped']);
  await sleep(30);
  t.equal(runs.started(), 1, 'no run after stop');
});

t.test('its timer never holds the process open', async (t) => {
  const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
  const before = timers();
  const worker = periodic({ name: 'unref', intervalMs: 60_000, run: async () => {} });
  worker.start(capturingContext().ctx);
  t.equal(timers(), before, 'not among the resources that keep the event loop alive');
  await worker.stop();
});

t.test('a failed run is logged, not thrown, and the next interval runs again', async (t) => {
  const { ctx, warnings } = capturingContext();
  let runs = 0;
  const worker = periodic({
    name: 'flaky',
    intervalMs: 5,
    run: async () => {
      if (++runs === 1) throw new Error('database unavailable');
    },
  });
  worker.start(ctx);
  t.teardown(() => worker.stop());
  await until(() => runs >= 2);
  t.ok(runs >= 2, 'ran again after the failure');
  t.equal(warnings.length, 1);
  t.match(warnings[0], {
    obj: { worker: 'flaky', err: { message: 'database unavailable' } },
    msg: 'flaky failed; it runs again in 5 ms',
  });
});

t.test('a worker starts once', async (t) => {
  const worker = periodic({ name: 'once', intervalMs: 60_000, run: async () => {} });
  worker.start(capturingContext().ctx);
  t.teardown(() => worker.stop());
  t.throws(() => worker.start(capturingContext().ctx), { message: 'worker once was already started' });
});
