import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Transaction } from 'kysely';
import { pino } from 'pino';
import type { DB } from '../../src/db/schema.js';
import t from 'tap';
import { AuditBuffer, insertAuditEvents, type AuditEvent } from '../../src/gateway/audit.js';
import { requestFingerprint, runIdempotent } from '../../src/gateway/core/idempotency.js';
import { auditFlusher } from '../../src/workers/flushers.js';
import { testDatabase } from '../helpers/database.js';
import { until } from '../helpers/until.js';

const { db } = await testDatabase();
await sql`create table audit_test_side_effects (request_id text not null)`.execute(db);

async function newAgency(): Promise<string> {
  const id = randomUUID();
  await db.insertInto('agencies').values({ id, name: 'Audit test agency' }).execute();
  return id;
}

function event(agencyId: string, overrides: Partial<AuditEvent> = {}): AuditEvent {
  return {
    agencyId,
    extensionId: 'ext-1',
    operationId: 'getPatient',
    resourceType: 'patient',
    resourceIds: ['p-1'],
    outcome: 'success',
    status: 200,
    requestId: `req-${randomUUID()}`,
    phiMode: 'phi',
    ...overrides,
  };
}

function auditRows(agencyId: string) {
  return db.selectFrom('audit_events').selectAll().where('agency_id', '=', agencyId).orderBy('occurred_at').execute();
}

function capturingLog() {
  const errors: { obj: unknown; msg?: string }[] = [];
  return { errors, error: (obj: unknown, msg?: string) => void errors.push({ obj, msg }) };
}

t.test('insertAuditEvents writes every field of the event', async (t) => {
  const agencyId = await newAgency();
  const occurredAt = new Date('2026-03-01T12:00:00.123Z');
  const full = event(agencyId, {
    operationId: 'createReferral',
    resourceType: 'referral',
    resourceIds: ['r-1', 'r-2'],
    outcome: 'denied',
    status: 403,
    phiMode: 'no_phi',
    sourceSystem: 'ehr-x',
    externalReferenceId: 'ext-77',
    occurredAt,
  });
  await insertAuditEvents([full, event(agencyId, { resourceType: null, resourceIds: [] })]).execute(db);
  const [first, second] = await auditRows(agencyId);
  t.match(first, {
    agency_id: agencyId,
    extension_id: 'ext-1',
    operation_id: 'createReferral',
    resource_type: 'referral',
    resource_ids: ['r-1', 'r-2'],
    outcome: 'denied',
    status: 403,
    request_id: full.requestId,
    phi_mode: 'no_phi',
    source_system: 'ehr-x',
    external_reference_id: 'ext-77',
  });
  t.equal(first.occurred_at.toISOString(), occurredAt.toISOString());
  t.match(first.id, /^[0-9a-f-]{36}$/);
  t.match(second, { resource_type: null, resource_ids: [], source_system: null, external_reference_id: null });
  t.ok(Math.abs(second.occurred_at.getTime() - Date.now()) < 60_000, 'occurred_at defaults to now');
});

t.test('an event holding NUL or lone surrogates is stored, never refused: each becomes U+FFFD', async (t) => {
  const agencyId = await newAgency();
  const text = 'Jane \u0000 \ud800 \udc00 😀';
  const stored = 'Jane \ufffd \ufffd \ufffd 😀';
  const details = { natural_language_input: text, parameters: { [`k${text}`]: [text] } };
  await insertAuditEvents([
    event(agencyId, { sourceSystem: text, externalReferenceId: text, resourceIds: [text], details }),
  ]).execute(db);
  const buffer = new AuditBuffer(db, capturingLog());
  buffer.push(event(agencyId, { details: { natural_language_input: text } }));
  await buffer.close();
  const rows = await auditRows(agencyId);
  t.equal(rows.length, 2, 'both written: the direct insert and the buffered one');
  // occurred_at cannot order them: the buffer stamps milliseconds, the database's now() microseconds.
  const [direct, buffered] = [rows.find((r) => r.source_system !== null), rows.find((r) => r.source_system === null)];
  t.match(direct, {
    source_system: stored,
    external_reference_id: stored,
    resource_ids: [stored],
    details: { natural_language_input: stored, parameters: { [`k${stored}`]: [stored] } },
  });
  t.match(buffered, { details: { natural_language_input: stored } });
});

t.test('the database refuses UPDATE, DELETE and TRUNCATE of audit_events', async (t) => {
  const agencyId = await newAgency();
  await insertAuditEvents([event(agencyId)]).execute(db);
  await t.rejects(sql`update audit_events set status = 500 where agency_id = ${agencyId}`.execute(db), {
    code: 'P0001',
    message: /append-only: UPDATE refused/,
  });
  await t.rejects(sql`delete from audit_events where agency_id = ${agencyId}`.execute(db), {
    code: 'P0001',
    message: /append-only: DELETE refused/,
  });
  await t.rejects(sql`truncate audit_events`.execute(db), { code: 'P0001', message: /append-only: TRUNCATE refused/ });
  t.match(await auditRows(agencyId), [{ status: 200 }], 'the record is unchanged');
});

t.test('a failing audit write inside a command rolls the command back with PLATFORM_AUDIT_WRITE_FAILED', async (t) => {
  const agencyId = await newAgency();
  const requestId = `req-${randomUUID()}`;
  const id = {
    agencyId,
    extensionId: 'ext-1',
    key: `key-${randomUUID()}`,
    operationId: 'createTask',
    fingerprint: requestFingerprint('POST', '/api/v1/ext/tasks', {}, 'phi'),
  };
  const command = (status: number) => async (trx: Transaction<DB>) => {
    await sql`insert into audit_test_side_effects (request_id) values (${requestId})`.execute(trx);
    // status 0 breaks the table's CHECK, standing in for any failure of the insert.
    const audit = event(agencyId, { operationId: 'createTask', requestId, status });
    const metering = { ...audit, costUnits: 1, durationMs: 2, occurredAtMs: Date.now() };
    return { audit, metering, response: { status: 200, headers: {}, body: '{}' } };
  };
  const failure = await runIdempotent(db, id, command(0)).catch((err: unknown) => err as Error & { code: string });
  t.match(failure, { code: 'PLATFORM_AUDIT_WRITE_FAILED', status: 503, cause: { code: '23514' } });
  const sideEffects = () =>
    sql`select 1 from audit_test_side_effects where request_id = ${requestId}`.execute(db).then((r) => r.rows.length);
  t.equal(await sideEffects(), 0, "the command's side effect rolled back");
  t.same(await auditRows(agencyId), []);
  t.equal((await runIdempotent(db, id, command(200))).replayed, false, 'the key can be retried');
  t.equal(await sideEffects(), 1);
  t.equal((await auditRows(agencyId)).length, 1);
});

t.test('AuditBuffer', async (t) => {
  t.test('flushes when a batch is full', async (t) => {
    const agencyId = await newAgency();
    const buffer = new AuditBuffer(db, capturingLog(), { maxBatch: 3 });
    t.teardown(() => buffer.close());
    buffer.push(event(agencyId));
    buffer.push(event(agencyId));
    await sleep(50);
    t.equal((await auditRows(agencyId)).length, 0, 'below the batch size nothing is written');
    buffer.push(event(agencyId));
    await until('the audit records are written', async () => (await auditRows(agencyId)).length === 3, 2_000, 10);
    t.equal(buffer.pending, 0);
  });

  t.test(
    'under steady load writes full batches only; the remainder waits for the next batch or the timer',
    async (t) => {
      const agencyId = await newAgency();
      const buffer = new AuditBuffer(db, capturingLog(), { maxBatch: 2 });
      t.teardown(() => buffer.close());
      for (let i = 0; i < 3; i++) buffer.push(event(agencyId));
      await until('the audit records are written', async () => (await auditRows(agencyId)).length === 2, 2_000, 10);
      await sleep(100);
      t.equal((await auditRows(agencyId)).length, 2, 'the third is not written as a batch of one');
      t.equal(buffer.pending, 1);
      await buffer.flush();
      t.equal((await auditRows(agencyId)).length, 3);
    },
  );

  t.test('flushes on its interval', async (t) => {
    const agencyId = await newAgency();
    const buffer = new AuditBuffer(db, capturingLog(), { maxBatch: 100 });
    const flusher = auditFlusher(buffer, 50);
    flusher.start({ db, log: pino({ level: 'silent' }) });
    t.teardown(() => flusher.stop());
    buffer.push(event(agencyId));
    await until('the audit records are written', async () => (await auditRows(agencyId)).length === 1, 2_000, 10);
    t.pass('written without a flush call');
  });

  t.test('flushes on close, with occurred_at taken at push time', async (t) => {
    const agencyId = await newAgency();
    const buffer = new AuditBuffer(db, capturingLog(), { maxBatch: 100 });
    const pushedAt = Date.now();
    buffer.push(event(agencyId));
    buffer.push(event(agencyId));
    await sleep(200);
    await buffer.close();
    const rows = await auditRows(agencyId);
    t.equal(rows.length, 2);
    t.ok(
      rows.every((r) => r.occurred_at.getTime() - pushedAt < 150),
      'occurred_at is when it was pushed, not when it was written',
    );
    t.throws(() => buffer.push(event(agencyId)), { code: 'PLATFORM_AUDIT_WRITE_FAILED' }, 'closed: refuses');
  });

  t.test('a transient failure is logged and the events are retried', async (t) => {
    const agencyId = await newAgency();
    await sql`
      create function audit_test_unavailable() returns trigger language plpgsql as $$
      begin raise exception 'database unavailable' using errcode = '57P03'; end $$`.execute(db);
    await sql`create trigger audit_test_unavailable before insert on audit_events for each row execute function audit_test_unavailable()`.execute(
      db,
    );
    const log = capturingLog();
    const buffer = new AuditBuffer(db, log, { maxBatch: 100 });
    t.teardown(() => buffer.close());
    buffer.push(event(agencyId));
    buffer.push(event(agencyId));
    await buffer.flush();
    t.equal(buffer.pending, 2, 'kept');
    t.match(log.errors, [{ obj: { err: { code: '57P03' }, pending: 2 }, msg: /stay queued/ }]);
    await sql`drop trigger audit_test_unavailable on audit_events`.execute(db);
    await buffer.flush();
    t.equal(buffer.pending, 0);
    t.equal((await auditRows(agencyId)).length, 2, 'written on the next flush');
  });

  t.test('an event the database refuses is dropped and logged, the rest of its batch is written', async (t) => {
    const agencyId = await newAgency();
    const log = capturingLog();
    const buffer = new AuditBuffer(db, log, { maxBatch: 100 });
    const refused = event(agencyId, { status: 0 });
    buffer.push(event(agencyId));
    buffer.push(refused);
    buffer.push(event(agencyId));
    await buffer.close();
    t.equal((await auditRows(agencyId)).length, 2);
    t.match(log.errors, [{ obj: { err: { code: '23514' }, requestId: refused.requestId }, msg: /dropped/ }]);
  });

  t.test('memory is bounded: beyond maxPending push refuses, so the read is not served unaudited', async (t) => {
    const agencyId = await newAgency();
    const buffer = new AuditBuffer(db, capturingLog(), { maxBatch: 100, maxPending: 2 });
    t.teardown(() => buffer.close());
    buffer.push(event(agencyId));
    buffer.push(event(agencyId));
    t.throws(() => buffer.push(event(agencyId)), { code: 'PLATFORM_AUDIT_WRITE_FAILED', message: /cannot keep up/ });
    await buffer.flush();
    buffer.push(event(agencyId));
    t.equal(buffer.pending, 1, 'accepts again once written');
  });
  t.end();
});
