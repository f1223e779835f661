import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import t from 'tap';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../db/migrations/index.js';
import { testDatabase } from '../helpers/database.js';

const expectedEngine = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';

t.test(`engine is ${expectedEngine}`, async (t) => {
  const { engine } = await testDatabase();
  t.equal(engine, expectedEngine);
});

t.test('migrations are applied, and running them again is a no-op', async (t) => {
  const { db } = await testDatabase();
  const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  t.same(
    applied.rows.map((r) => r.name),
    Object.keys(migrations),
  );
  t.same(await migrateToLatest(db), []);
});

t.test('a database migrated by a newer release fails migration with a clear error', async (t) => {
  const { db } = await testDatabase();
  const future = '9999_from_a_newer_release';
  await sql`insert into kysely_migration (name, timestamp) values (${future}, ${new Date().toISOString()})`.execute(db);
  t.teardown(() => sql`delete from kysely_migration where name = ${future}`.execute(db));
  await t.rejects(migrateToLatest(db), {
    message: `Database migration failed: corrupted migrations: previously executed migration ${future} is missing`,
  });
});

t.test('agencies: defaults fill status and timestamps', async (t) => {
  const { db } = await testDatabase();
  const id = randomUUID();
  const row = await db
    .insertInto('agencies')
    .values({ id, name: 'Sunrise Home Health' })
    .returningAll()
    .executeTakeFirstOrThrow();
  t.equal(row.status, 'active');
  t.type(row.created_at, Date);
  t.type(row.updated_at, Date);
});

t.test('both engines return the same JS types', async (t) => {
  const { db } = await testDatabase();
  const { rows } = await sql<Record<string, unknown>>`
    select 1::int8 as int8,
           (select count(*) from generate_series(1, 3)) as count,
           '12.30'::numeric as numeric,
           '2026-03-01'::date as date,
           '2026-03-01 12:00:00.123456+02'::timestamptz as timestamptz,
           '2026-03-01 12:00:00.5'::timestamp as timestamp,
           '\\x0102ff'::bytea as bytea,
           array[1, null, 3]::int8[] as int8s,
           array['0.10', '2.50']::numeric[] as numerics,
           array['2026-03-01']::date[] as dates,
           array['2026-03-01 00:00:00+00']::timestamptz[] as timestamptzs,
           array['\\x01'::bytea] as byteas`.execute(db);
  const row = rows[0];
  t.equal(row.int8, 1);
  t.equal(row.count, 3);
  t.equal(row.numeric, '12.30');
  t.equal(row.date, '2026-03-01');
  t.type(row.timestamptz, Date);
  t.equal((row.timestamptz as Date).toISOString(), '2026-03-01T10:00:00.123Z');
  t.equal((row.timestamp as Date).toISOString(), '2026-03-01T12:00:00.500Z', 'timestamp without zone is read as UTC');
  t.ok(Buffer.isBuffer(row.bytea), 'bytea is a Buffer');
  t.same(row.bytea, Buffer.from([1, 2, 255]));
  t.same(row.int8s, [1, null, 3]);
  t.same(row.numerics, ['0.10', '2.50']);
  t.same(row.dates, ['2026-03-01']);
  t.same(row.timestamptzs, [new Date('2026-03-01T00:00:00Z')]);
  t.ok(Buffer.isBuffer((row.byteas as unknown[])[0]), 'bytea array elements are Buffers');
});

t.test('int8 beyond Number.MAX_SAFE_INTEGER is refused, not rounded', async (t) => {
  const { db } = await testDatabase();
  await t.rejects(sql`select 9007199254740993::int8 as big`.execute(db), /MAX_SAFE_INTEGER/);
  const { rows } = await sql<{ max: number }>`select 9007199254740991::int8 as max`.execute(db);
  t.equal(rows[0].max, Number.MAX_SAFE_INTEGER);
});

t.test('parameters round-trip: Date, Buffer, date string, numeric string', async (t) => {
  const { db } = await testDatabase();
  const at = new Date('2026-03-01T23:30:00.250Z');
  const { rows } = await sql<Record<string, unknown>>`
    select ${at}::timestamptz as at, ${Buffer.from('hi')}::bytea as bytes,
           ${'2026-02-28'}::date as day, ${'0.10'}::numeric + ${'0.20'}::numeric as sum,
           (${at}::timestamptz)::date as utc_day`.execute(db);
  t.same(rows[0], { at, bytes: Buffer.from('hi'), day: '2026-02-28', sum: '0.30', utc_day: '2026-03-01' });
});

t.test('a unique violation carries SQLSTATE 23505 on err.code', async (t) => {
  const { db } = await testDatabase();
  const id = randomUUID();
  await db.insertInto('agencies').values({ id, name: 'First' }).execute();
  await t.rejects(db.insertInto('agencies').values({ id, name: 'Second' }).execute(), { code: '23505' });
});

t.test('a check violation carries SQLSTATE 23514', async (t) => {
  const { db } = await testDatabase();
  const insert = db.insertInto('agencies').values({ id: randomUUID(), name: 'X', status: 'archived' as 'active' });
  await t.rejects(insert.execute(), { code: '23514' });
});

t.test('a failed transaction rolls back', async (t) => {
  const { db } = await testDatabase();
  const id = randomUUID();
  const work = db.transaction().execute(async (trx) => {
    await trx.insertInto('agencies').values({ id, name: 'Rolled back' }).execute();
    throw new Error('boom');
  });
  await t.rejects(work, /boom/);
  t.equal(await db.selectFrom('agencies').where('id', '=', id).select('id').executeTakeFirst(), undefined);
});

t.test(
  'a PGlite template is for an in-memory store: with a data directory it is refused, before anything is opened',
  async (t) => {
    await t.rejects(
      openDatabase({ dataDir: '/nonexistent/never-created', pgliteTemplate: new Blob([]) }),
      /template starts an in-memory store/,
    );
  },
);
