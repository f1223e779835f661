import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { createWorker, inProcessWorkers, workerNames } from '../../src/workers/registry.js';
import { buildTestApp } from '../helpers/app.js';

const names = (workers: { name: string }[]) => workers.map((worker) => worker.name);

t.test('the registry names the workers that need only the database', async (t) => {
  t.same(workerNames, ['housekeeping', 'webhooks']);
  t.equal(createWorker('webhooks').name, 'webhooks');
  t.equal(createWorker('housekeeping').name, 'housekeeping');
  t.throws(() => createWorker('metering-flush'), {
    message:
      'unknown worker "metering-flush"; the workers are: housekeeping, webhooks (inside the server only: proposals, and the metering and audit flushers)',
  });
  t.throws(() => createWorker('constructor'), { message: /^unknown worker "constructor"/ }, 'only its own names');
});

t.test('IN_PROCESS_WORKERS: which of them a server runs', async (t) => {
  t.equal(loadConfig({}).inProcessWorkers, 'all', 'unset: every one');
  t.equal(loadConfig({ IN_PROCESS_WORKERS: 'all' }).inProcessWorkers, 'all');
  t.same(loadConfig({ IN_PROCESS_WORKERS: 'none' }).inProcessWorkers, []);
  t.same(loadConfig({ IN_PROCESS_WORKERS: ' housekeeping, ' }).inProcessWorkers, ['housekeeping']);
  t.same(names(inProcessWorkers('all')), ['housekeeping', 'webhooks']);
  t.same(names(inProcessWorkers([])), [], 'none: housekeeping runs as its own process');
  t.same(names(inProcessWorkers(['housekeeping'])), ['housekeeping']);
});

t.test('a server with an unknown name in IN_PROCESS_WORKERS does not start', async (t) => {
  await t.rejects(buildTestApp({ inProcessWorkers: ['housekeeping', 'imports'] }, t), {
    message:
      'IN_PROCESS_WORKERS names unknown workers (imports): use all, none or a list; the workers are: housekeeping, webhooks (inside the server only: proposals, and the metering and audit flushers)',
  });
});
