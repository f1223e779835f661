import t from 'tap';
import { RunningHandlers } from '../../src/gateway/core/running-handlers.js';

function pending() {
  let settle!: (ok: boolean) => void;
  const work = new Promise<void>(
    (resolve, reject) => (settle = (ok) => (ok ? resolve() : reject(new Error('failed')))),
  );
  work.catch(() => {});
  return { work, settle };
}

t.test('drain waits for every running handler, failed ones included, and any number of callers may wait', async (t) => {
  const running = new RunningHandlers();
  const [a, b] = [pending(), pending()];
  running.track(a.work);
  running.track(b.work);
  let drained = 0;
  const waits = [running.drain(), running.drain()].map((d) => d.then(() => drained++));
  a.settle(true);
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(drained, 0, 'one handler still runs');
  b.settle(false);
  await Promise.all(waits);
  t.equal(drained, 2, 'both callers woke');
});

t.test('with nothing running, drain resolves at once; later handlers are waited for afresh', async (t) => {
  const running = new RunningHandlers();
  await running.drain();
  const later = pending();
  running.track(later.work);
  let drained = false;
  const wait = running.drain().then(() => (drained = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(drained, false);
  later.settle(true);
  await wait;
  t.equal(drained, true);
});
