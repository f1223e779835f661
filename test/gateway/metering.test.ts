import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { pino } from 'pino';
import t from 'tap';
import type { DB } from '../../src/db/schema.js';
import { MeteringBuffer, insertMeteringEvents, type MeteringEvent } from '../../src/gateway/core/metering.js';
import { requestFingerprint, runIdempotent } from '../../src/gateway/core/idempotency.js';
import { meteringFlusher } from '../../src/workers/flushers.js';
import { testDatabase } from '../helpers/database.js';

const { db } = await testDatabase();

function eventsFor(extensionId: string, count: number, overrides: Partial<MeteringEvent> = {}): MeteringEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    agencyId: 'agency-metering',
    extensionId,
    operationId: 'getPatient',
    status: 200,
    costUnits: 1,
    durationMs: 3.6,
    requestId: `req-${i + 1}`,
    occurredAtMs: Date.parse('2026-03-01T10:00:00Z'),
    ...overrides,
  }));
}

async function requestIdsOf(extensionId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('metering_events')
    .select('request_id')
    .where('extension_id', '=', extensionId)
    .orderBy(['segment_id', 'position'])
    .execute();
  return rows.map((r) => r.request_id);
}

async function eventually(extensionId: string, count: number): Promise<string[]> {
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 10))) {
    const ids = await requestIdsOf(extensionId);
    if (ids.length >= count) return ids;
  }
  return requestIdsOf(extensionId);
}

function capturingLog() {
  const entries: { level: 'warn' | 'error'; obj: Record<string, unknown>; msg: string }[] = [];
  return {
    entries,
    warn: (obj: object, msg: string) => void entries.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
    error: (obj: object, msg: string) =>
      void entries.push({ level: 'error', obj: obj as Record<string, unknown>, msg }),
  };
}

/** The test database, failing every query with a connection-style error (no SQLSTATE) while `down` is set. */
function flakyDatabase() {
  const state = { down: true };
  const flaky: Kysely<DB> = db.withPlugin({
    transformQuery(args) {
      if (state.down) throw new Error('connect ECONNREFUSED');
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  return { flaky, state };
}

t.test('a flush that mixes integrations writes each call under its own agency and extension, in order', async (t) => {
  const shared = randomUUID();
  const other = randomUUID();
  const [a1, a2] = eventsFor(shared, 2, { agencyId: 'agency-mix-a' });
  const [b1] = eventsFor(shared, 1, { agencyId: 'agency-mix-b', requestId: 'req-b1' });
  const [o1] = eventsFor(other, 1, { agencyId: 'agency-mix-a', requestId: 'req-o1' });
  await insertMeteringEvents([a1, b1, o1, a2]).execute(db);
  const rows = await db
    .selectFrom('metering_events')
    .select(['agency_id', 'extension_id', 'request_id'])
    .where('extension_id', 'in', [shared, other])
    .execute();
  t.same(rows.map((r) => [r.agency_id, r.extension_id === shared ? 'shared' : 'other', r.request_id]).sort(), [
    ['agency-mix-a', 'other', 'req-o1'],
    ['agency-mix-a', 'shared', 'req-1'],
    ['agency-mix-a', 'shared', 'req-2'],
    ['agency-mix-b', 'shared', 'req-b1'],
  ]);
  const segments = await db
    .selectFrom('metering_segments')
    .select(['agency_id', 'request_ids'])
    .where('extension_id', '=', shared)
    .orderBy('agency_id')
    .execute();
  t.same(
    segments,
    [
      { agency_id: 'agency-mix-a', request_ids: ['req-1', 'req-2'] },
      { agency_id: 'agency-mix-b', request_ids: ['req-b1'] },
    ],
    'one segment per integration, calls in the order they came',
  );
});

t.test('each call keeps its own time: a segment spans its earliest and latest call, in any order', async (t) => {
  const extensionId = randomUUID();
  const times = ['2026-03-01T10:00:02.250Z', '2026-03-01T10:00:00.000Z', '2026-03-01T10:01:00.007Z'];
  await insertMeteringEvents(
    times.map((time, i) => eventsFor(extensionId, 1, { requestId: `req-${i}`, occurredAtMs: Date.parse(time) })[0]),
  ).execute(db);
  const calls = await db
    .selectFrom('metering_events')
    .select(['request_id', 'occurred_at'])
    .where('extension_id', '=', extensionId)
    .orderBy('position')
    .execute();
  t.same(
    calls.map((c) => [c.request_id, c.occurred_at.toISOString()]),
    times.map((time, i) => [`req-${i}`, time]),
  );
  const segment = await db
    .selectFrom('metering_segments')
    .select(['base_at', 'last_at'])
    .where('extension_id', '=', extensionId)
    .executeTakeFirstOrThrow();
  t.same([segment.base_at.toISOString(), segment.last_at.toISOString()], [times[1], times[2]]);
});

t.test('insertMeteringEvents writes in the caller transaction: committed with it, rolled back with it', async (t) => {
  const extensionId = randomUUID();
  const [committed, rolledBack] = eventsFor(extensionId, 2);
  await db.transaction().execute((trx) => insertMeteringEvents([committed]).execute(trx));
  await t.rejects(
    db.transaction().execute(async (trx) => {
      await insertMeteringEvents([rolledBack]).execute(trx);
      throw new Error('the command failed');
    }),
    /the command failed/,
  );
  const rows = await db.selectFrom('metering_events').selectAll().where('extension_id', '=', extensionId).execute();
  t.equal(rows.length, 1);
  t.match(rows[0], {
    agency_id: 'agency-metering',
    operation_id: 'getPatient',
    status: 200,
    cost_units: 1,
    duration_ms: 4,
    request_id: 'req-1',
    occurred_at: new Date('2026-03-01T10:00:00Z'),
  });
  t.type(rows[0].segment_id, 'number');
  t.equal(rows[0].position, 1);
});

t.test('a call keeps its error code, contract version and replay flag; one that has none reads as null', async (t) => {
  const extensionId = randomUUID();
  const [refused, replayed, unknown] = eventsFor(extensionId, 3);
  await insertMeteringEvents([
    { ...refused, status: 404, errorCode: 'PLATFORM_NOT_FOUND', contractVersion: '2' },
    { ...replayed, contractVersion: '1', replayed: true },
    unknown,
  ]).execute(db);
  // A segment of one call without a code: its arrays must still hold one element each.
  const [alone] = eventsFor(extensionId, 1, { requestId: 'req-alone' });
  await insertMeteringEvents([alone]).execute(db);
  const rows = await db
    .selectFrom('metering_events')
    .select(['request_id', 'error_code', 'contract_version', 'replayed'])
    .where('extension_id', '=', extensionId)
    .orderBy(['segment_id', 'position'])
    .execute();
  t.same(rows, [
    { request_id: 'req-1', error_code: 'PLATFORM_NOT_FOUND', contract_version: '2', replayed: false },
    { request_id: 'req-2', error_code: null, contract_version: '1', replayed: true },
    { request_id: 'req-3', error_code: null, contract_version: null, replayed: false },
    { request_id: 'req-alone', error_code: null, contract_version: null, replayed: false },
  ]);
});

t.test(
  'a segment written before the request log (no error codes, versions, replay flags) reads them as null',
  async (t) => {
    const extensionId = randomUUID();
    await db
      .insertInto('metering_segments')
      .values({
        agency_id: 'agency-metering',
        extension_id: extensionId,
        base_at: new Date('2026-03-01T10:00:00Z'),
        last_at: new Date('2026-03-01T10:00:01Z'),
        operation_ids: ['getPatient', 'createTask'],
        statuses: [200, 409],
        cost_units: [1, 0],
        durations_ms: [3, 9],
        request_ids: ['req-old-1', 'req-old-2'],
        offsets_ms: [0, 1000],
      })
      .execute();
    const rows = await db
      .selectFrom('metering_events')
      .select(['request_id', 'status', 'error_code', 'contract_version', 'replayed'])
      .where('extension_id', '=', extensionId)
      .orderBy('position')
      .execute();
    t.same(rows, [
      { request_id: 'req-old-1', status: 200, error_code: null, contract_version: null, replayed: null },
      { request_id: 'req-old-2', status: 409, error_code: null, contract_version: null, replayed: null },
    ]);
  },
);

t.test("a command's metering write that fails rolls the command back as PLATFORM_METERING_WRITE_FAILED", async (t) => {
  const extensionId = randomUUID();
  const agencyId = randomUUID();
  await db.insertInto('agencies').values({ id: agencyId, name: 'Metering agency' }).execute();
  await sql`alter table metering_segments add constraint refuse_test_extension check (extension_id <> ${sql.lit(extensionId)}) not valid`.execute(
    db,
  );
  t.teardown(() => sql`alter table metering_segments drop constraint refuse_test_extension`.execute(db));
  const [metering] = eventsFor(extensionId, 1, { agencyId, operationId: 'createTask' });
  const id = {
    agencyId,
    extensionId,
    key: `key-${randomUUID()}`,
    operationId: 'createTask',
    fingerprint: requestFingerprint('POST', '/api/v1/ext/tasks', {}, 'phi'),
  };
  const audit = {
    ...metering,
    resourceType: 'task',
    resourceIds: [],
    outcome: 'success' as const,
    phiMode: 'phi' as const,
  };
  const failure = await runIdempotent(db, id, async () => ({
    audit,
    metering,
    response: { status: 200, headers: {}, body: '{}' },
  })).catch((err: unknown) => err);
  t.match(failure, { code: 'PLATFORM_METERING_WRITE_FAILED', status: 503, cause: { code: '23514' } });
  t.equal(
    await db.selectFrom('audit_events').select('id').where('agency_id', '=', agencyId).executeTakeFirst(),
    undefined,
    'its audit record rolled back too',
  );
  t.equal(
    await db.selectFrom('idempotency_keys').select('key').where('key', '=', id.key).executeTakeFirst(),
    undefined,
    'and its key, so it can be retried',
  );
});

t.test('the buffer writes when a batch is full, not before', async (t) => {
  const extensionId = randomUUID();
  const buffer = new MeteringBuffer(db, capturingLog(), { maxBatch: 3 });
  t.teardown(() => buffer.close());
  const [first, second, third] = eventsFor(extensionId, 3);
  buffer.push(first);
  buffer.push(second);
  await new Promise((r) => setTimeout(r, 100));
  t.same(await requestIdsOf(extensionId), [], 'two of three: still buffered');
  buffer.push(third);
  t.same(await eventually(extensionId, 3), ['req-1', 'req-2', 'req-3']);
});

t.test(
  'under steady load only full batches are written; the remainder waits for the next batch or the timer',
  async (t) => {
    const extensionId = randomUUID();
    const buffer = new MeteringBuffer(db, capturingLog(), { maxBatch: 2 });
    t.teardown(() => buffer.close());
    // The second push starts a write; the third arrives while it runs and is not written as a batch of one.
    for (const event of eventsFor(extensionId, 3)) buffer.push(event);
    t.same(await eventually(extensionId, 2), ['req-1', 'req-2']);
    await new Promise((r) => setTimeout(r, 100));
    t.same(await requestIdsOf(extensionId), ['req-1', 'req-2'], 'the third still waits');
    await buffer.flush();
    t.same(await requestIdsOf(extensionId), ['req-1', 'req-2', 'req-3']);
    const segments = await db
      .selectFrom('metering_segments')
      .select('request_ids')
      .where('extension_id', '=', extensionId)
      .orderBy('id')
      .execute();
    t.same(
      segments.map((s) => s.request_ids),
      [['req-1', 'req-2'], ['req-3']],
      'one segment row per write',
    );
  },
);

t.test('the buffer writes on its interval', async (t) => {
  const extensionId = randomUUID();
  const buffer = new MeteringBuffer(db, capturingLog(), { maxBatch: 100 });
  const flusher = meteringFlusher(buffer, 50);
  flusher.start({ db, log: pino({ level: 'silent' }) });
  t.teardown(() => flusher.stop());
  for (const event of eventsFor(extensionId, 2)) buffer.push(event);
  t.same(await eventually(extensionId, 2), ['req-1', 'req-2']);
});

t.test('close writes what is pending; a push after close is logged, not kept', async (t) => {
  const extensionId = randomUUID();
  const log = capturingLog();
  const buffer = new MeteringBuffer(db, log, { maxBatch: 100 });
  const [first, second, late] = eventsFor(extensionId, 3);
  buffer.push(first);
  buffer.push(second);
  await buffer.close();
  t.same(await requestIdsOf(extensionId), ['req-1', 'req-2']);
  buffer.push(late);
  await buffer.close();
  t.same(await requestIdsOf(extensionId), ['req-1', 'req-2']);
  t.match(log.entries, [{ level: 'error', obj: { requestId: 'req-3' }, msg: /after close/ }]);
});

t.test('a pino logger fits the buffer', async (t) => {
  const buffer = new MeteringBuffer(db, pino({ level: 'silent' }));
  await buffer.close();
  t.pass();
});

t.test(
  'a failed write is retried later; memory stays bounded by dropping the oldest, counted in one log line',
  async (t) => {
    const extensionId = randomUUID();
    const log = capturingLog();
    const { flaky, state } = flakyDatabase();
    const buffer = new MeteringBuffer(flaky, log, { maxBatch: 2, maxPending: 4 });
    t.teardown(() => buffer.close());
    // The second push starts a write that fails; the rest arrive meanwhile, and only the timer or flush() retries.
    for (const event of eventsFor(extensionId, 6)) buffer.push(event);
    await buffer.flush();
    t.match(log.entries, [
      { level: 'warn', msg: /retrying later/ },
      { level: 'error', obj: { dropped: 2 }, msg: /dropped the oldest/ },
      { level: 'warn', msg: /retrying later/ },
    ]);
    t.same(await requestIdsOf(extensionId), []);
    state.down = false;
    await buffer.flush();
    t.same(await requestIdsOf(extensionId), ['req-3', 'req-4', 'req-5', 'req-6'], 'the four newest survive');
  },
);

t.test('close logs the events it could not write', async (t) => {
  const log = capturingLog();
  const buffer = new MeteringBuffer(flakyDatabase().flaky, log);
  for (const event of eventsFor(randomUUID(), 2)) buffer.push(event);
  await buffer.close();
  t.match(log.entries, [{ level: 'warn' }, { level: 'error', obj: { lost: 2 }, msg: /not written at shutdown/ }]);
});

t.test('an event the database refuses is dropped alone; the rest of its batch is written', async (t) => {
  const extensionId = randomUUID();
  const log = capturingLog();
  const buffer = new MeteringBuffer(db, log, { maxBatch: 10 });
  t.teardown(() => buffer.close());
  const [good, malformed, split, alsoGood] = eventsFor(extensionId, 4);
  buffer.push(good);
  buffer.push({ ...malformed, status: 2.5 });
  // A value holding the separator would shift the arrays; the segment's one-entry-per-call check refuses it instead.
  buffer.push({ ...split, requestId: 'req-3a,req-3b' });
  buffer.push(alsoGood);
  await buffer.flush();
  t.same(await requestIdsOf(extensionId), ['req-1', 'req-4']);
  t.match(log.entries, [
    { level: 'error', obj: { event: { requestId: 'req-2' } }, msg: /refused by the database/ },
    { level: 'error', obj: { event: { requestId: 'req-3a,req-3b' } }, msg: /refused by the database/ },
  ]);
});

t.test(
  'a database that fails while a refused batch is written one by one keeps the rest, in order, for the retry',
  async (t) => {
    const extensionId = randomUUID();
    const log = capturingLog();
    const state = { queries: 0, recovered: false };
    // Query 1 is the batch (refused), query 2 the first call alone; from query 3 the connection fails until recovery.
    const failing: Kysely<DB> = db.withPlugin({
      transformQuery(args) {
        if (++state.queries >= 3 && !state.recovered) throw new Error('connect ECONNREFUSED');
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const buffer = new MeteringBuffer(failing, log, { maxBatch: 10 });
    t.teardown(() => buffer.close());
    const [first, malformed, third, fourth] = eventsFor(extensionId, 4);
    for (const event of [first, { ...malformed, status: 2.5 }, third, fourth]) buffer.push(event);
    await buffer.flush();
    t.same(await requestIdsOf(extensionId), ['req-1']);
    state.recovered = true;
    await buffer.flush();
    t.same(
      await requestIdsOf(extensionId),
      ['req-1', 'req-3', 'req-4'],
      'the rest written at the retry, the refused call dropped alone',
    );
    t.match(log.entries, [
      { level: 'warn', msg: /retrying later/ },
      { level: 'error', obj: { event: { requestId: 'req-2' } }, msg: /refused by the database/ },
    ]);
  },
);

t.test(
  'a flush writes what was pending at its call; calls arriving during its write wait for a full batch or the next flush',
  async (t) => {
    const extensionId = randomUUID();
    const buffer = new MeteringBuffer(db, capturingLog(), { maxBatch: 10 });
    t.teardown(() => buffer.close());
    const events = eventsFor(extensionId, 5);
    for (const event of events.slice(0, 3)) buffer.push(event);
    const flushed = buffer.flush();
    for (const event of events.slice(3)) buffer.push(event);
    await flushed;
    t.same(await requestIdsOf(extensionId), ['req-1', 'req-2', 'req-3']);
    await buffer.flush();
    t.same(await requestIdsOf(extensionId), ['req-1', 'req-2', 'req-3', 'req-4', 'req-5']);
  },
);
