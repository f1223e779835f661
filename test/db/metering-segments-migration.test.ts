import { sql } from 'kysely';
import t from 'tap';
import * as usage from '../../db/migrations/0004_usage.js';
import * as segments from '../../db/migrations/0008_metering_segments.js';
import { testDatabase } from '../helpers/database.js';

const { db } = await testDatabase();

/** Rolls the scratch schema back whatever happens. */
class Rollback extends Error {}

t.test(
  '0008 moves per-call metering rows into segments; the metering_events view reads them back unchanged',
  async (t) => {
    const before = [
      {
        agency_id: 'a1',
        extension_id: 'e1',
        operation_id: 'getPatient',
        status: 200,
        cost_units: 1,
        duration_ms: 4,
        request_id: 'r1',
        occurred_at: new Date('2026-03-01T10:15:00.250Z'),
      },
      {
        agency_id: 'a1',
        extension_id: 'e1',
        operation_id: 'createTask',
        status: 409,
        cost_units: 0,
        duration_ms: 12,
        request_id: 'r2',
        occurred_at: new Date('2026-03-01T10:59:59.999Z'),
      },
      {
        agency_id: 'a1',
        extension_id: 'e1',
        operation_id: 'getPatient',
        status: 200,
        cost_units: 1,
        duration_ms: 3,
        request_id: 'r3',
        occurred_at: new Date('2026-03-01T11:00:00.000Z'),
      },
      {
        agency_id: 'a1',
        extension_id: 'e2',
        operation_id: 'getHealth',
        status: 200,
        cost_units: 0,
        duration_ms: 1,
        request_id: 'r4',
        occurred_at: new Date('2026-03-01T10:15:00.250Z'),
      },
    ];
    let after: unknown[] = [];
    let segmentCount = 0;
    await db
      .transaction()
      .execute(async (trx) => {
        await sql`create schema metering_migration_test`.execute(trx);
        await sql`set local search_path to metering_migration_test`.execute(trx);
        await usage.up(trx);
        await trx
          .insertInto('metering_events' as never)
          .values(before as never)
          .execute();
        await segments.up(trx);
        segmentCount = Number(
          (await sql<{ n: number }>`select count(*)::int as n from metering_segments`.execute(trx)).rows[0].n,
        );
        after = await trx
          .selectFrom('metering_events')
          .select([
            'agency_id',
            'extension_id',
            'operation_id',
            'status',
            'cost_units',
            'duration_ms',
            'request_id',
            'occurred_at',
          ])
          .orderBy('request_id')
          .execute();
        throw new Rollback();
      })
      .catch((err: unknown) => {
        if (!(err instanceof Rollback)) throw err;
      });
    t.same(after, before);
    t.equal(segmentCount, 3, 'one segment per integration and hour');
  },
);
