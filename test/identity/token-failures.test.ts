import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import t from 'tap';
import { TokenFailureLimiter } from '../../src/identity/token-failures.js';
import { testDatabase } from '../helpers/database.js';

const { db } = await testDatabase();
const limiter = new TokenFailureLimiter(db, { perClient: 10, perAddress: 50, windowSeconds: 300 });
const MINUTE = 60_000;

/** A client's failures as rows of the minutes that started `minutesAgo` before the current one, whose start it returns. */
async function failuresOf(clientId: string, counts: Record<number, number>): Promise<number> {
  const currentMinute = Date.now() - (Date.now() % MINUTE);
  await db
    .insertInto('token_failures')
    .values(Object.entries(counts).map(([minutesAgo, count]) => ({ bucket: `client:${clientId}`, window_start: new Date(currentMinute - Number(minutesAgo) * MINUTE), count })))
    .execute();
  return currentMinute;
}

/** Seconds from now until the given time, as Retry-After rounds them. */
const secondsUntil = (time: number) => Math.ceil((time - Date.now()) / 1000);

async function refusal(clientId: string): Promise<number | 'allowed'> {
  try {
    await limiter.assertAllowed({ clientId, remoteAddress: `203.0.113.${clientId.length}` });
    return 'allowed';
  } catch (error) {
    return Number((error as { headers: Record<string, string> }).headers['retry-after']);
  }
}

t.test('failures made before a minute edge still count after it: the window rolls', async (t) => {
  const clientId = randomUUID();
  const currentMinute = await failuresOf(clientId, { 1: 9 });
  t.equal(await refusal(clientId), 'allowed', 'nine of ten');
  await limiter.record({ clientId, remoteAddress: '203.0.113.1' });
  const retryAfter = await refusal(clientId);
  t.ok(Math.abs(Number(retryAfter) - secondsUntil(currentMinute + 4 * MINUTE)) <= 1, `refused until the earlier minute leaves the window: ${retryAfter} s`);
});

t.test('Retry-After: when enough of the oldest minutes have left for the count to fall below the limit', async (t) => {
  const clientId = randomUUID();
  const currentMinute = await failuresOf(clientId, { 4: 2, 3: 7, 0: 3 });
  const retryAfter = await refusal(clientId);
  t.ok(Math.abs(Number(retryAfter) - secondsUntil(currentMinute + 2 * MINUTE)) <= 1, `two minutes must leave, not one: ${retryAfter} s`);
});

t.test('failures older than the window do not count, and recording a failure deletes them', async (t) => {
  const clientId = randomUUID();
  await failuresOf(clientId, { 5: 40, 6: 40 });
  t.equal(await refusal(clientId), 'allowed');
  await limiter.record({ clientId, remoteAddress: '203.0.113.2' });
  const rows = await db.selectFrom('token_failures').select('count').where('bucket', '=', `client:${clientId}`).execute();
  t.same(rows, [{ count: 1 }], 'only the new failure is left');
});

t.test('dropping the minutes that left the window reads an index on their start', async (t) => {
  const plan = await db.connection().execute(async (connection) => {
    await sql`set enable_seqscan = off`.execute(connection);
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain delete from token_failures where window_start <= now() - interval '5 minutes'`.execute(connection);
    await sql`reset enable_seqscan`.execute(connection);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
  t.match(plan, /token_failures_window_start/, 'not a full scan of the table or of its primary key');
});
