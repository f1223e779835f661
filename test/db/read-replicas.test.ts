import { sql } from 'kysely';
import type { InjectOptions } from 'fastify';
import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { walPosition } from '../../src/db/read-replicas.js';
import { testDatabase, testDatabaseUrl } from '../helpers/database.js';
import { bearer, createTestIntegration, issueTestToken } from '../helpers/identity.js';
import { startStreamingReplica } from '../helpers/replica.js';
import { testKeyEncryption } from '../helpers/secrets.js';
import { until } from '../helpers/until.js';

t.test('WAL positions compare as numbers', async (t) => {
  t.ok(walPosition('1/0') > walPosition('0/FFFFFFFF'));
  t.equal(walPosition('16/B374D848'), 0x16b374d848n);
});

const skip = !process.env.TEST_DATABASE_URL
  ? 'a streaming replica needs PostgreSQL'
  : process.env.DATABASE_POOLER
    ? 'the replica streams from the cluster, not through the pooler'
    : false;

t.test('reads on a streaming replica', { skip }, async (t) => {
  const { db } = await testDatabase();
  const url = testDatabaseUrl() as string;
  const [{ name }] = (await sql<{ name: string }>`select current_database() as name`.execute(db)).rows;
  const replica = startStreamingReplica(t, process.env.TEST_DATABASE_URL as string);
  const writer = await createTestIntegration(db);
  const reader = await createTestIntegration(db, { agencyId: writer.agencyId });

  /** An app whose reads may go to the replica while it is within `maxLagMs` of the primary. */
  async function routedApp(t: Test, maxLagMs: number) {
    const database = await openDatabase({
      databaseUrl: url,
      readUrls: [replica.urlOf(name)],
      readMaxLagMs: maxLagMs,
      migrate: false,
      poolMax: 4,
    });
    const config = loadConfig({});
    const app = await buildApp({
      config: { ...config, inProcessWorkers: [], pressure: { ...config.pressure, eventLoopDelayMs: 0 } },
      database,
      keyEncryption: testKeyEncryption,
    });
    t.teardown(async () => {
      await app.close();
      await database.close();
    });
    const api = { app, request: (options: InjectOptions) => app.inject(options) };
    const [writerToken, readerToken] = [
      await issueTestToken(api, writer, 'phi'),
      await issueTestToken(api, reader, 'phi'),
    ];
    const createTask = async () => {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/ext/tasks',
        headers: { ...bearer(writerToken), 'idempotency-key': `replica-${Math.random()}` },
        payload: { title: 'Replica check', priority: 'normal' },
      });
      t.equal(res.statusCode, 200, res.body);
      return res.json().data.id as string;
    };
    const read = async (token: string, id: string) =>
      (await app.inject({ method: 'GET', url: `/api/v1/ext/tasks/${id}`, headers: bearer(token) })).statusCode;
    return {
      database,
      createTask,
      readAs: { writer: (id: string) => read(writerToken, id), reader: (id: string) => read(readerToken, id) },
    };
  }

  const probe = await openDatabase({ databaseUrl: replica.urlOf(name), migrate: false, poolMax: 1 });
  t.teardown(() => probe.close());
  await until(
    'the replica has the test database, migrated',
    () =>
      probe.db
        .selectFrom('write_positions')
        .select('lsn')
        .limit(1)
        .execute()
        .then(
          () => true,
          () => false,
        ),
    60_000,
  );

  t.test(
    'within the bound, another integration reads the replica (a commit not yet applied is not there) and the writer reads its own write',
    async (t) => {
      const { database, createTask, readAs } = await routedApp(t, 30_000);
      await until(
        'the replica is within the bound',
        async () => (await database.replicas!.readerFor(reader.agencyId, reader.extensionId)) !== database.db,
        60_000,
      );
      replica.delayApply(4_000);
      t.teardown(() => replica.delayApply(0));
      const id = await createTask();
      t.equal(await readAs.writer(id), 200, 'the writer reads its own write at once, on any handle that has it');
      t.equal(
        await readAs.reader(id),
        404,
        'the other integration read the replica, which has not applied the commit yet',
      );
      await until('the replica applies the commit', async () => (await readAs.reader(id)) === 200, 30_000);
      t.pass('then it reads it there');
    },
  );

  t.test('beyond the bound every read goes to the primary', async (t) => {
    const { database, createTask, readAs } = await routedApp(t, 500);
    await sql`create table if not exists wal_ticks (n int)`.execute(db);
    replica.delayApply(3_000);
    let ticking = true;
    const ticks = (async () => {
      while (ticking) await sql`insert into wal_ticks values (1)`.execute(db).then(() => sleep(20));
    })();
    t.teardown(async () => {
      ticking = false;
      await ticks;
      replica.delayApply(0);
    });
    // Under a steady stream of commits the replica falls behind by its apply delay, past the 500 ms bound. The router
    // also answers the primary while it has no recent sample (a slow poll on a loaded machine), so the replica's own
    // replay time says first that the delay took effect.
    await until(
      'the replica replays more than a second behind',
      async () =>
        (
          await sql<{
            behind: boolean;
          }>`select now() - pg_last_xact_replay_timestamp() > interval '1 second' as behind`.execute(probe.db)
        ).rows[0].behind,
      30_000,
    );
    await until(
      'the replica is past the bound',
      async () => (await database.replicas!.readerFor(reader.agencyId, reader.extensionId)) === database.db,
    );
    const id = await createTask();
    t.equal(
      await readAs.reader(id),
      200,
      'another integration reads the commit at once: the lagging replica is not used',
    );
  });
});
