import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely, type Transaction } from 'kysely';
import t, { type Test } from 'tap';
import type { DB } from '../../src/db/schema.js';
import { errorEntry } from '../../src/shared/platform-error.js';
import {
  purgeExpiredIdempotencyKeys,
  requestFingerprint,
  runIdempotent,
  runRemembered,
} from '../../src/gateway/core/idempotency.js';
import { CompletedKeys } from '../../src/gateway/core/completed-keys.js';
import type { CommandIdentity, CommandLedger, StoredResponse } from '../../src/gateway/core/command-ledger.js';
import { secondPool, testDatabase } from '../helpers/database.js';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const postgresOnly = onPostgres ? false : 'needs PostgreSQL: PGlite is one session, so its transactions never overlap';

const { db } = await testDatabase();
// A table of this test's own, standing in for the rows a command writes.
await sql`create table idempotency_test_side_effects (agency_id text not null, key text not null, note text not null)`.execute(
  db,
);

async function newCommand(
  body: unknown = { title: 'Call the patient' },
  path = '/api/v1/ext/tasks',
): Promise<CommandIdentity> {
  const agencyId = randomUUID();
  await db.insertInto('agencies').values({ id: agencyId, name: 'Test agency' }).execute();
  return {
    agencyId,
    extensionId: randomUUID(),
    key: `key-${randomUUID()}`,
    operationId: 'createTask',
    fingerprint: requestFingerprint('POST', path, body, 'phi'),
  };
}

function withBody(id: CommandIdentity, body: unknown, path = '/api/v1/ext/tasks'): CommandIdentity {
  return { ...id, fingerprint: requestFingerprint('POST', path, body, 'phi') };
}

async function writeSideEffect(trx: Transaction<DB>, id: CommandIdentity, note: string): Promise<void> {
  await sql`insert into idempotency_test_side_effects (agency_id, key, note) values (${id.agencyId}, ${id.key}, ${note})`.execute(
    trx,
  );
}

async function sideEffects(id: CommandIdentity): Promise<string[]> {
  const { rows } = await sql<{
    note: string;
  }>`select note from idempotency_test_side_effects where agency_id = ${id.agencyId} and key = ${id.key}`.execute(db);
  return rows.map((r) => r.note);
}

/** The ledger of a run of the command: its audit record and metering event with the response to store. */
function ledgerOf(id: CommandIdentity, response: StoredResponse): CommandLedger {
  const { agencyId, extensionId, operationId } = id;
  const requestId = randomUUID();
  return {
    audit: {
      agencyId,
      extensionId,
      operationId,
      resourceType: 'task',
      resourceIds: [],
      outcome: 'success',
      status: response.status,
      requestId,
      phiMode: 'phi',
    },
    metering: {
      agencyId,
      extensionId,
      operationId,
      status: response.status,
      costUnits: 1,
      durationMs: 3,
      requestId,
      occurredAtMs: Date.now(),
    },
    response,
  };
}

/** An execute that counts its calls, writes one side-effect row and answers with a body naming the run. */
function countingExecute(id: CommandIdentity, delayMs = 0) {
  const calls = { count: 0 };
  const execute = async (trx: Transaction<DB>): Promise<CommandLedger> => {
    calls.count++;
    const run = randomUUID();
    await writeSideEffect(trx, id, run);
    if (delayMs > 0) await sleep(delayMs);
    return ledgerOf(id, { status: 200, headers: { 'x-run': run }, body: `{"data":{"run":"${run}"}}` });
  };
  return { calls, execute };
}

const failing = (message: string) => async (): Promise<CommandLedger> => {
  throw new Error(message);
};

t.test('fingerprint: key order is irrelevant, values and path are not', async (t) => {
  const a = requestFingerprint(
    'POST',
    '/api/v1/ext/tasks',
    { title: 'x', meta: { b: 1, a: [1, { d: 2, c: 3 }] } },
    'phi',
  );
  const b = requestFingerprint(
    'POST',
    '/api/v1/ext/tasks',
    { meta: { a: [1, { c: 3, d: 2 }], b: 1 }, title: 'x' },
    'phi',
  );
  t.equal(a, b, 'same members in another order');
  t.match(a, /^[0-9a-f]{64}$/);
  t.not(
    requestFingerprint('POST', '/api/v1/ext/tasks', { title: 'y' }, 'phi'),
    requestFingerprint('POST', '/api/v1/ext/tasks', { title: 'x' }, 'phi'),
    'value',
  );
  t.not(
    requestFingerprint('POST', '/api/v1/ext/tasks', { n: 1 }, 'phi'),
    requestFingerprint('POST', '/api/v1/ext/tasks', { n: '1' }, 'phi'),
    'type of a value',
  );
  t.not(
    requestFingerprint('POST', '/api/v1/ext/tasks', [1, 2], 'phi'),
    requestFingerprint('POST', '/api/v1/ext/tasks', [2, 1], 'phi'),
    'array order',
  );
  t.not(
    requestFingerprint('PATCH', '/api/v1/ext/tasks/t-1', {}, 'phi'),
    requestFingerprint('PATCH', '/api/v1/ext/tasks/t-2', {}, 'phi'),
    'path',
  );
  t.not(
    requestFingerprint('PATCH', '/api/v1/ext/tasks/t-1', {}, 'phi'),
    requestFingerprint('DELETE', '/api/v1/ext/tasks/t-1', {}, 'phi'),
    'method',
  );
  t.not(
    requestFingerprint('POST', '/api/v1/ext/tasks', {}, 'phi'),
    requestFingerprint('POST', '/api/v1/ext/tasks', {}, 'no_phi'),
    'PHI mode',
  );
});

t.test('the first run executes, stores and returns the response', async (t) => {
  const id = await newCommand();
  const { calls, execute } = countingExecute(id);
  const { response, replayed } = await runIdempotent(db, id, execute);
  t.equal(replayed, false);
  t.equal(calls.count, 1);
  t.equal((await sideEffects(id)).length, 1);
  const stored = await db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('key', '=', id.key)
    .executeTakeFirstOrThrow();
  t.equal(stored.response_body, response.body);
  t.same(stored.response_headers, response.headers);
  t.equal(stored.operation_id, 'createTask');
  const retentionHours = (stored.expires_at.getTime() - stored.created_at.getTime()) / 3_600_000;
  t.equal(retentionHours, 24, 'kept 24 hours');
});

t.test('an identical retry replays the exact bytes and headers without executing', async (t) => {
  const id = await newCommand();
  const body = '{"data":{"z":1,"a":"é ☃ 😀 \\u0000"},  "meta":{}}\n';
  const first = await runIdempotent(db, id, async (trx) => {
    await writeSideEffect(trx, id, 'first');
    return ledgerOf(id, {
      status: 201,
      headers: { 'content-type': 'application/json; charset=utf-8', deprecation: '@1767225600' },
      body,
    });
  });
  let executed = false;
  const retry = await runIdempotent(db, id, async () => {
    executed = true;
    return ledgerOf(id, { status: 500, headers: {}, body: 'never stored' });
  });
  t.equal(executed, false, 'execute is not called');
  t.equal(retry.replayed, true);
  t.equal(retry.response.body, body, 'byte for byte');
  t.equal(retry.response.status, 201);
  t.same(retry.response.headers, first.response.headers);
  t.same(await sideEffects(id), ['first'], 'nothing ran twice');
});

t.test('the same key with a different body or path is an IDEMPOTENCY_CONFLICT', async (t) => {
  const id = await newCommand({ title: 'a' });
  await runIdempotent(db, id, countingExecute(id).execute);
  await t.rejects(runIdempotent(db, withBody(id, { title: 'b' }), failing('must not run')), {
    code: 'PLATFORM_IDEMPOTENCY_CONFLICT',
    details: { idempotencyKey: id.key },
  });
  await t.rejects(runIdempotent(db, withBody(id, { title: 'a' }, '/api/v1/ext/referrals'), failing('must not run')), {
    code: 'PLATFORM_IDEMPOTENCY_CONFLICT',
  });
  t.equal((await sideEffects(id)).length, 1);
});

t.test('when execute throws, nothing is committed and the key can be retried', async (t) => {
  const id = await newCommand();
  await t.rejects(
    runIdempotent(db, id, async (trx) => {
      await writeSideEffect(trx, id, 'doomed');
      throw new Error('domain rule broken');
    }),
    { message: 'domain rule broken' },
  );
  t.same(await sideEffects(id), [], 'the side effect rolled back');
  t.equal(
    await db.selectFrom('idempotency_keys').select('key').where('key', '=', id.key).executeTakeFirst(),
    undefined,
    'the key rolled back',
  );
  const retry = await runIdempotent(db, id, countingExecute(id).execute);
  t.equal(retry.replayed, false, 'the retry runs');
  t.equal((await sideEffects(id)).length, 1);
});

t.test('an abort before commit rolls everything back', async (t) => {
  const id = await newCommand();
  const controller = new AbortController();
  const reason = new Error('handler timeout');
  const aborting = async (trx: Transaction<DB>): Promise<CommandLedger> => {
    await writeSideEffect(trx, id, 'aborted');
    controller.abort(reason);
    return ledgerOf(id, { status: 200, headers: {}, body: '{}' });
  };
  await t.rejects(runIdempotent(db, id, aborting, controller.signal), reason, 'rejects with the abort reason');
  t.same(await sideEffects(id), []);
  let executed = false;
  await t.rejects(
    runIdempotent(
      db,
      id,
      async () => {
        executed = true;
        return ledgerOf(id, { status: 200, headers: {}, body: '{}' });
      },
      controller.signal,
    ),
    reason,
  );
  t.equal(executed, false, 'an already aborted signal runs nothing');
  t.equal((await runIdempotent(db, id, countingExecute(id).execute)).replayed, false, 'the key can be retried');
});

t.test('keys are scoped per agency and per extension', async (t) => {
  const id = await newCommand();
  const other = await newCommand();
  const scopes = [id, { ...id, extensionId: randomUUID() }, { ...other, key: id.key, extensionId: id.extensionId }];
  for (const scope of scopes) {
    const { replayed } = await runIdempotent(db, scope, countingExecute(scope).execute);
    t.equal(replayed, false, `${scope.agencyId}/${scope.extensionId} runs`);
  }
  t.equal((await sideEffects(id)).length, 2, 'two extensions of one agency each ran once');
  t.equal((await sideEffects({ ...other, key: id.key })).length, 1, 'the other agency ran once');
});

t.test('an expired key is treated as absent: reused, it runs again, even with another body', async (t) => {
  const id = await newCommand({ title: 'a' });
  await runIdempotent(db, id, countingExecute(id).execute);
  await db
    .updateTable('idempotency_keys')
    .set({ expires_at: sql<Date>`now() - interval '1 second'` })
    .where('key', '=', id.key)
    .execute();
  const reused = withBody(id, { title: 'b' });
  const { calls, execute } = countingExecute(reused);
  const second = await runIdempotent(db, reused, execute);
  t.equal(second.replayed, false);
  t.equal(calls.count, 1);
  const row = await db.selectFrom('idempotency_keys').selectAll().where('key', '=', id.key).executeTakeFirstOrThrow();
  t.equal(row.fingerprint, reused.fingerprint);
  t.equal(row.response_body, second.response.body);
  t.ok(row.expires_at.getTime() > Date.now() + 23 * 3_600_000, 'a fresh retention');
  t.equal((await runIdempotent(db, reused, failing('must not run'))).replayed, true, 'and is live again');
});

t.test('the database refuses a key without its response', async (t) => {
  const { agencyId, key } = await newCommand();
  await t.rejects(
    sql`insert into idempotency_keys (agency_id, extension_id, key, operation_id, fingerprint, expires_at)
      values (${agencyId}, 'ext', ${key}, 'createTask', 'f', now() + interval '1 hour')`.execute(db),
    { code: '23502' },
    'not null violation',
  );
});

t.test('purge deletes only expired keys, in batches', async (t) => {
  const { agencyId } = await newCommand();
  const keyRow = (key: string, expiresAt: string) => ({
    agency_id: agencyId,
    extension_id: 'ext-purge',
    key,
    operation_id: 'createTask',
    fingerprint: 'f',
    response_status: 200,
    response_headers: '{}',
    response_body: '{}',
    expires_at: expiresAt,
  });
  const expired = ['e1', 'e2', 'e3', 'e4', 'e5'].map((k) => keyRow(k, '2001-01-01T00:00:00Z'));
  await db
    .insertInto('idempotency_keys')
    .values([...expired, keyRow('later', '2001-01-03T00:00:00Z')])
    .execute();
  t.equal(await purgeExpiredIdempotencyKeys(db, { now: new Date('2001-01-02T00:00:00Z'), batchSize: 2 }), 5);
  const left = await db.selectFrom('idempotency_keys').select('key').where('agency_id', '=', agencyId).execute();
  t.same(left, [{ key: 'later' }]);
  const live = await newCommand();
  await runIdempotent(db, live, countingExecute(live).execute);
  t.equal(await purgeExpiredIdempotencyKeys(db), 1, 'by the database clock: only the 2001 key had expired');
  t.equal((await runIdempotent(db, live, failing('must not run'))).replayed, true, 'a live key survives');
});

// PGlite is one session, and so is a pool of one: the twin's turn comes only after the first has committed.
t.test('a twin that waited for the connection until the first committed replays it and runs nothing', async (t) => {
  const oneConnection = onPostgres ? await secondPool(t, 1) : db;
  const id = await newCommand();
  const { calls, execute } = countingExecute(id, 50);
  const [first, twin] = await Promise.all([
    runIdempotent(oneConnection, id, execute),
    runIdempotent(oneConnection, id, execute),
  ]);
  t.equal(calls.count, 1, 'executed once');
  t.same([first.replayed, twin.replayed], [false, true]);
  t.equal(twin.response.body, first.response.body);
});

t.test('concurrency', { skip: postgresOnly }, async (t) => {
  /** 20 identical calls at once, spread over the given handles; each execute sleeps 100 ms inside its transaction. */
  async function twentyAtOnce(t: Test, handles: Kysely<DB>[]) {
    const id = await newCommand();
    const { calls, execute } = countingExecute(id, 100);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => runIdempotent(handles[i % handles.length], id, execute)),
    );
    t.equal(calls.count, 1, 'executed once');
    t.equal((await sideEffects(id)).length, 1, 'exactly one side-effect row');
    t.equal(results.filter((r) => !r.replayed).length, 1, 'one original');
    t.equal(results.filter((r) => r.replayed).length, 19, '19 replays');
    t.equal(new Set(results.map((r) => r.response.body)).size, 1, 'all with the same bytes');
    t.equal(new Set(results.map((r) => r.response.headers['x-run'])).size, 1, 'and the same headers');
  }

  t.test('20 parallel identical calls on one pool run once', (t) => twentyAtOnce(t, [db]));

  t.test('20 parallel identical calls from two server processes (two pools) run once', async (t) =>
    twentyAtOnce(t, [db, await secondPool(t, 4)]),
  );

  t.test(
    'a retry that waits longer than the bound gets a retryable CONCURRENT_MODIFICATION, and later the replay',
    async (t) => {
      const id = await newCommand();
      const first = runIdempotent(db, id, countingExecute(id, 800).execute);
      await sleep(100);
      const started = Date.now();
      await t.rejects(runIdempotent(db, id, failing('must not run'), undefined, 50), {
        code: 'PLATFORM_CONCURRENT_MODIFICATION',
        message: /idempotency key is still running/,
      });
      t.ok(Date.now() - started < 500, 'refused after about the bound, not when the first finished');
      t.equal(errorEntry('PLATFORM_CONCURRENT_MODIFICATION').retryable, true);
      const original = await first;
      const retry = await runIdempotent(db, id, failing('must not run'));
      t.equal(retry.replayed, true);
      t.equal(retry.response.body, original.response.body);
    },
  );

  t.test('a retry waiting for a first run that fails then runs itself', async (t) => {
    const id = await newCommand();
    const first = runIdempotent(db, id, async (trx) => {
      await writeSideEffect(trx, id, 'first');
      await sleep(200);
      throw new Error('first failed');
    });
    await sleep(50);
    const { execute } = countingExecute(id);
    const retry = runIdempotent(db, id, execute);
    await t.rejects(first, { message: 'first failed' });
    t.equal((await retry).replayed, false);
    t.equal((await sideEffects(id)).length, 1, 'only the retry committed');
    t.not((await sideEffects(id))[0], 'first');
  });

  t.test(
    'a key committed by another run while this one executes wins: this run rolls back and replays that response',
    async (t) => {
      const id = await newCommand();
      const result = await runIdempotent(db, id, async (trx) => {
        await writeSideEffect(trx, id, 'loser');
        // Committed on another connection without the key's lock, as by an instance of the previous release during a deploy.
        await db
          .insertInto('idempotency_keys')
          .values({
            agency_id: id.agencyId,
            extension_id: id.extensionId,
            key: id.key,
            operation_id: id.operationId,
            fingerprint: id.fingerprint,
            expires_at: new Date(Date.now() + 3_600_000),
            response_status: 201,
            response_headers: JSON.stringify({ 'x-run': 'twin' }),
            response_body: '{"data":"twin"}',
          })
          .execute();
        return ledgerOf(id, { status: 200, headers: {}, body: '{"data":"loser"}' });
      });
      t.same(result, {
        replayed: true,
        response: { status: 201, headers: { 'x-run': 'twin' }, body: '{"data":"twin"}' },
      });
      t.same(await sideEffects(id), [], "this run's side effect rolled back");
    },
  );

  t.test('a lock wait beyond the bound inside execute is a retryable CONCURRENT_MODIFICATION too', async (t) => {
    const id = await newCommand();
    await db.transaction().execute(async (holder) => {
      // NO KEY UPDATE: the key's foreign-key check (KEY SHARE) passes; the command's own UPDATE must wait.
      await sql`select * from agencies where id = ${id.agencyId} for no key update`.execute(holder);
      const blocked = runIdempotent(
        db,
        id,
        async (trx) => {
          await sql`update agencies set name = 'renamed' where id = ${id.agencyId}`.execute(trx);
          return ledgerOf(id, { status: 200, headers: {}, body: '{}' });
        },
        undefined,
        100,
      );
      await t.rejects(blocked, {
        code: 'PLATFORM_CONCURRENT_MODIFICATION',
        message: /resource this command needs is locked/,
      });
    });
    t.equal((await runIdempotent(db, id, countingExecute(id).execute)).replayed, false, 'nothing of it was kept');
  });
  t.end();
});

/** Deletes a key's row: what a replay then answers came from memory, not from a read. */
const deleteKey = (id: CommandIdentity) =>
  db.deleteFrom('idempotency_keys').where('agency_id', '=', id.agencyId).where('key', '=', id.key).execute();

t.test('a replay read from the database is remembered: the next retry reads nothing', async (t) => {
  const completedKeys = new CompletedKeys();
  const id = await newCommand();
  const first = await runRemembered(completedKeys, db, id, countingExecute(id).execute);
  t.equal(first.replayed, false);
  t.notOk(completedKeys.get(id), "a fresh run is not remembered: its expiry is the database's");
  const read = await runRemembered(completedKeys, db, id, failing('must not run'));
  t.same([read.replayed, read.response], [true, first.response]);
  await deleteKey(id);
  const remembered = await runRemembered(completedKeys, db, id, failing('must not run'));
  t.same([remembered.replayed, remembered.response], [true, first.response]);
});

t.test('a remembered key still refuses another request', async (t) => {
  const completedKeys = new CompletedKeys();
  const id = await newCommand({ title: 'a' });
  await runRemembered(completedKeys, db, id, countingExecute(id).execute);
  await runRemembered(completedKeys, db, id, failing('must not run'));
  await deleteKey(id);
  await t.rejects(runRemembered(completedKeys, db, withBody(id, { title: 'b' }), failing('must not run')), {
    code: 'PLATFORM_IDEMPOTENCY_CONFLICT',
  });
});

t.test('a remembered key is forgotten a minute before it expires, so a reused expired key runs again', async (t) => {
  const completedKeys = new CompletedKeys();
  const id = await newCommand();
  const response = { status: 200, headers: {}, body: '{}' };
  const expiresAt = new Date(Date.now() + 3_600_000);
  completedKeys.remember(id, { fingerprint: id.fingerprint, response }, expiresAt);
  t.same(completedKeys.get(id, expiresAt.getTime() - 61_000)?.response, response);
  t.notOk(completedKeys.get(id, expiresAt.getTime() - 60_000));
  t.notOk(completedKeys.get(id), 'and stays forgotten');
});

t.test('keys are remembered per agency, extension and key, and large responses not at all', async (t) => {
  const completedKeys = new CompletedKeys();
  const id = await newCommand();
  const expiresAt = new Date(Date.now() + 3_600_000);
  completedKeys.remember(
    id,
    { fingerprint: id.fingerprint, response: { status: 200, headers: {}, body: '{}' } },
    expiresAt,
  );
  t.notOk(completedKeys.get({ ...id, extensionId: randomUUID() }));
  t.notOk(completedKeys.get({ ...id, agencyId: randomUUID() }));
  t.notOk(completedKeys.get({ ...id, key: `${id.key}-2` }));
  const large = { ...id, key: `${id.key}-large` };
  const body = JSON.stringify({ data: 'x'.repeat(40_000) });
  completedKeys.remember(
    large,
    { fingerprint: id.fingerprint, response: { status: 200, headers: {}, body } },
    expiresAt,
  );
  t.notOk(completedKeys.get(large));
});
