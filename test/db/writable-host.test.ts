import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { isDatabaseUnavailable } from '../../src/db/sql-state.js';
import { listedHosts, singleHostUrl } from '../../src/db/writable-host.js';
import { testDatabase, testDatabaseUrl, type Teardown } from '../helpers/database.js';
import { bearer, createTestIntegration, issueTestToken } from '../helpers/identity.js';
import { testKeyEncryption } from '../helpers/secrets.js';

t.test('DATABASE_URL lists hosts as libpq does: in the authority or in host and port parameters', async (t) => {
  t.same(listedHosts('postgresql://app:pw@db1:5432,db2:5433,[::1]/app?target_session_attrs=read-write'), [
    { host: 'db1', port: 5432 },
    { host: 'db2', port: 5433 },
    { host: '::1', port: 5432 },
  ]);
  t.same(
    listedHosts('postgresql://app@localhost/app?host=/run/a,/run/b&port=6000'),
    [
      { host: '/run/a', port: 6000 },
      { host: '/run/b', port: 6000 },
    ],
    'unix socket directories; one port for all',
  );
  t.same(listedHosts('postgres://db1/app?port=5000,5001&host=h1,h2'), [
    { host: 'h1', port: 5000 },
    { host: 'h2', port: 5001 },
  ]);
  t.equal(listedHosts('postgresql://app@db/app').length, 1, 'one host: no selection');
  t.equal(
    singleHostUrl('postgresql://app:pw@db1:5432,db2:5433/app?sslmode=disable&target_session_attrs=read-write', {
      host: 'db2',
      port: 5433,
    }),
    'postgresql://app:pw@db2:5433/app?sslmode=disable',
  );
  t.equal(
    singleHostUrl('postgresql://app@localhost/app?host=/run/a,/run/b', { host: '/run/b', port: 5432 }),
    'postgresql://app@localhost:5432/app?host=%2Frun%2Fb',
  );
});

const skip = !process.env.TEST_DATABASE_URL
  ? 'host lists are PostgreSQL'
  : process.env.DATABASE_POOLER === 'transaction'
    ? 'PgBouncer names one server'
    : false;

/** A second throwaway cluster (scripts/postgres-temp.sh), kept until t ends; its admin URL. */
async function secondCluster(t: Teardown): Promise<string> {
  const child = spawn('bash', ['scripts/postgres-temp.sh', 'bash', '-c', 'echo "$TEST_DATABASE_URL"; cat >/dev/null'], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  t.teardown(async () => {
    child.stdin.end();
    if (child.exitCode === null) await once(child, 'exit');
  });
  const [url] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return url;
}

async function onServer(url: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

const socketDir = (url: string) => new URL(url).searchParams.get('host')!;

t.test(
  'with a standby listed first the writable host is used; while none takes writes every call is 503 with Retry-After, and it reconnects by itself',
  { skip },
  async (t) => {
    const { db } = await testDatabase();
    const writable = testDatabaseUrl()!;
    const name = new URL(writable).pathname.slice(1);
    const readOnly = await secondCluster(t);
    // The same database on the other server, read-only as a standby is (libpq's read-write check sees the same).
    await onServer(readOnly, [
      `create database "${name}"`,
      `alter database "${name}" set default_transaction_read_only = on`,
    ]);
    const hosts = `postgresql://postgres@localhost/${name}?host=${socketDir(readOnly)},${socketDir(writable)}&target_session_attrs=read-write`;
    const database = await openDatabase({ databaseUrl: hosts, poolMax: 2, connectTimeoutMs: 2_000, migrate: false });
    t.teardown(() => database.close());
    const [{ dir, read_only }] = (
      await sql<{
        dir: string;
        read_only: string;
      }>`select current_setting('unix_socket_directories') as dir, current_setting('transaction_read_only') as read_only`.execute(
        database.db,
      )
    ).rows;
    t.equal(dir, socketDir(writable), 'the writable server, though listed second');
    t.equal(read_only, 'off');

    // A session turned read-only under it (a primary demoted in place): the write is "unavailable", the session dropped.
    const single = await openDatabase({ databaseUrl: hosts, poolMax: 1, connectTimeoutMs: 2_000, migrate: false });
    t.teardown(() => single.close());
    await sql`set default_transaction_read_only = on`.execute(single.db);
    const write = await sql`create temporary table written (n int)`.execute(single.db).then(
      () => undefined,
      (err: unknown) => err,
    );
    t.ok(isDatabaseUnavailable(write), `a write on a read-only server is retried later (${String(write)})`);
    const [again] = (
      await sql<{ read_only: string }>`select current_setting('transaction_read_only') as read_only`.execute(single.db)
    ).rows;
    t.equal(again.read_only, 'off', 'the next statement gets a new session, not the read-only one');

    const config = loadConfig({});
    const app = await buildApp({
      config: { ...config, pressure: { ...config.pressure, eventLoopDelayMs: 0 }, inProcessWorkers: [] },
      database,
      keyEncryption: testKeyEncryption,
    });
    t.teardown(() => app.close());
    const api = { app, request: (options: InjectOptions) => app.inject(options) };
    const integration = await createTestIntegration(db);
    const token = await issueTestToken(api, integration);
    const createTask = () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/ext/tasks',
        headers: { ...bearer(token), 'idempotency-key': 'writable-host-0001' },
        payload: { title: 'Call back' },
      });

    // Both servers read-only (a primary lost, its standby not yet promoted): the pool's sessions end, as they do when a primary dies.
    await sql.raw(`alter database "${name}" set default_transaction_read_only = on`).execute(db);
    t.teardown(() => sql.raw(`alter database "${name}" reset default_transaction_read_only`).execute(db));
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`.execute(
      db,
    );
    const refused = await createTask();
    t.equal(refused.statusCode, 503, refused.body);
    t.equal(refused.headers['retry-after'], '1');
    t.match(refused.json().error, { code: 'PLATFORM_SERVICE_UNAVAILABLE', retryable: true });

    await sql.raw(`alter database "${name}" reset default_transaction_read_only`).execute(db);
    // Sessions the server ended may still sit in the pool: each is found broken on its next use (503), then replaced.
    let created = await createTask();
    for (
      const deadline = Date.now() + 10_000;
      created.statusCode === 503 && Date.now() < deadline;
      created = await createTask()
    )
      await sleep(100);
    // 200 when an attempt refused after its commit (a post-commit step met a dead session) is answered from its key.
    t.ok(
      [200, 201].includes(created.statusCode),
      `a writable host again: calls are served, without a restart (${created.statusCode})`,
    );
    const tasks = await db
      .selectFrom('tasks')
      .select('id')
      .where('agency_id', '=', integration.agencyId)
      .where('title', '=', 'Call back')
      .execute();
    t.equal(tasks.length, 1, 'one task for the one key');
  },
);
