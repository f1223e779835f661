import { sql } from 'kysely';
import t from 'tap';
import { openDatabase } from '../../src/db/database.js';
import { asPrepared } from '../../src/db/reusable-query.js';
import { testDatabase, testDatabaseUrl } from '../helpers/database.js';

const skip = process.env.TEST_DATABASE_URL ? false : 'a pooler is for PostgreSQL';
const pooled = process.env.DATABASE_POOLER === 'transaction';

t.test(
  'behind a transaction pooler the service refuses to start until the role has its session defaults',
  { skip },
  async (t) => {
    const { db } = await testDatabase();
    const url = testDatabaseUrl() as string;
    const [{ name }] = (await sql<{ name: string }>`select current_database() as name`.execute(db)).rows;
    const opening = openDatabase({
      databaseUrl: url,
      pooler: 'transaction',
      statementTimeoutMs: 4_321,
      migrate: false,
    });
    await t.rejects(opening, {
      message: /TimeZone=.* statement_timeout=.*the service needs TimeZone=UTC and statement_timeout=4321 ms/,
    });
    await sql.raw(`alter database "${name}" set statement_timeout = 4321`).execute(db);
    await sql.raw(`alter database "${name}" set "TimeZone" = 'UTC'`).execute(db);
    t.teardown(() => sql.raw(`alter database "${name}" reset all`).execute(db));
    // Connections a pooler already holds keep the old defaults: a new database handle through it may still see them.
    const opened = await openDatabase({
      databaseUrl: url,
      pooler: 'transaction',
      statementTimeoutMs: 4_321,
      migrate: false,
    }).catch(() => undefined);
    if (!pooled) t.ok(opened, 'the same defaults set on the server let it start');
    await opened?.close();
  },
);

t.test(
  'behind PgBouncer a statement marked for preparing runs on any server connection, in the session zone',
  { skip: pooled ? false : 'runs behind scripts/pgbouncer-temp.sh' },
  async (t) => {
    const { db } = await testDatabase();
    const probe = (n: number) =>
      db.executeQuery(
        asPrepared(
          'pooler-probe',
          sql<{
            day: string;
            n: number;
          }>`select '2026-03-01 23:30:00+00'::timestamptz::date::text as day, ${n}::int as n`.compile(db),
        ),
      );
    // More at once than the test pool's connections, so PgBouncer hands them server connections that never saw the text.
    const results = await Promise.all(Array.from({ length: 40 }, (_, n) => probe(n)));
    t.same(
      results.map((r) => r.rows[0].n),
      Array.from({ length: 40 }, (_, n) => n),
    );
    t.same(new Set(results.map((r) => r.rows[0].day)), new Set(['2026-03-01']));
  },
);
