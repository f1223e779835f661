import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import t from 'tap';
import { testDatabase, testDatabaseUrl } from '../helpers/database.js';

/** `npm run worker -- <name>` as an operator runs it: node on scripts/worker.ts. Starting tsx takes seconds on a busy machine. */
t.setTimeout(300_000);
const root = join(import.meta.dirname, '../..');

function worker(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/worker.ts', ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  t.teardown(() => void child.kill('SIGKILL'));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

const messages = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { msg: string }).msg);

t.test('an unknown or missing name is refused with the list of workers, before opening a database', async (t) => {
  const unknown = worker(['metering-flush'], {});
  t.equal(await unknown.exited, 1);
  t.equal(
    unknown.stderr(),
    'unknown worker "metering-flush"; the workers are: housekeeping, webhooks (inside the server only: proposals, and the metering and audit flushers)\n',
  );
  const missing = worker([], {});
  t.equal(await missing.exited, 1);
  t.equal(missing.stderr(), 'usage: npm run worker -- <name>; the workers are: housekeeping, webhooks\n');
});

t.test('housekeeping runs as its own process and stops with drain on SIGTERM, exit 0', async (t) => {
  // PostgreSQL: this process's test database; PGlite: none in this process, only the worker's own.
  if (process.env.TEST_DATABASE_URL) await testDatabase();
  const url = process.env.TEST_DATABASE_URL ? testDatabaseUrl() : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'worker-cli-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // On PGlite a directory of its own: the data directory is locked to one process.
  const run = worker(['housekeeping'], url ? { DATABASE_URL: url } : { DATA_DIR: join(dataDir, 'data') });
  const running = url
    ? 'worker housekeeping running on PostgreSQL'
    : `worker housekeeping running on embedded PostgreSQL in ${join(dataDir, 'data')}`;
  for (
    const deadline = Date.now() + 240_000;
    !run.stdout().includes(running) && run.child.exitCode === null && Date.now() < deadline;
  ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.match(run.stdout(), running, `running: ${run.stderr()}`);
  run.child.kill('SIGTERM');
  t.equal(await run.exited, 0);
  t.same(messages(run.stdout()), [running, 'stopping: finishing the run in flight', 'stopped']);
  t.equal(run.stderr(), '');
});
