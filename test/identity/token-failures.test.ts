import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import t from 'tap';
import { testKeyEncryption } from '../helpers/secrets.js';
import { loadConfig } from '../../src/config.js';
import type { TokenRequest } from '../../src/identity/client-credentials.js';
import * as secrets from '../../src/identity/secrets.js';
import { TokenFailureLimiter } from '../../src/identity/token-failures.js';
import { createServices } from '../../src/services.js';
import { testDatabase } from '../helpers/database.js';
import { createTestIntegration, tokenRequestBody } from '../helpers/identity.js';
import { ClientAssertions } from '../../src/identity/client-assertions.js';
import { ClientKeySets } from '../../src/identity/client-keys.js';
import { fetchCheckedDocument } from '../../src/events/receiver-request.js';

const { db } = await testDatabase();
const limiter = new TokenFailureLimiter(db, { perSubject: 10, perAddress: 50, windowSeconds: 300 });
const MINUTE = 60_000;

/** A client's failures as rows of the minutes that started `minutesAgo` before the current one, whose start it returns. */
async function failuresOf(clientId: string, counts: Record<number, number>): Promise<number> {
  const currentMinute = Date.now() - (Date.now() % MINUTE);
  await db
    .insertInto('token_failures')
    .values(
      Object.entries(counts).map(([minutesAgo, count]) => ({
        bucket: `client:${clientId}`,
        window_start: new Date(currentMinute - Number(minutesAgo) * MINUTE),
        count,
      })),
    )
    .execute();
  return currentMinute;
}

/** Seconds from now until the given time, as Retry-After rounds them. */
const secondsUntil = (time: number) => Math.ceil((time - Date.now()) / 1000);

/** A failure for the client: its Retry-After when the client was over its limit already, or 'allowed'. */
async function refusal(clientId: string): Promise<number | 'allowed'> {
  const admission = await limiter.admit({ subject: clientId, remoteAddress: `203.0.113.${clientId.length}` });
  const refused = await limiter.recordFailure(admission);
  return refused ? Number(refused.headers!['retry-after']) : 'allowed';
}

t.test('failures made before a minute edge still count after it: the window rolls', async (t) => {
  const clientId = randomUUID();
  const currentMinute = await failuresOf(clientId, { 1: 9 });
  t.equal(await refusal(clientId), 'allowed', 'the tenth failure is not refused yet');
  const retryAfter = await refusal(clientId);
  t.ok(
    Math.abs(Number(retryAfter) - secondsUntil(currentMinute + 4 * MINUTE)) <= 1,
    `refused until the earlier minute leaves the window: ${retryAfter} s`,
  );
});

t.test('Retry-After: when enough of the oldest minutes have left for the count to fall below the limit', async (t) => {
  const clientId = randomUUID();
  const currentMinute = await failuresOf(clientId, { 4: 2, 3: 7, 0: 3 });
  const retryAfter = await refusal(clientId);
  t.ok(
    Math.abs(Number(retryAfter) - secondsUntil(currentMinute + 2 * MINUTE)) <= 1,
    `two minutes must leave, not one: ${retryAfter} s`,
  );
});

t.test('failures older than the window do not count, and recording a failure deletes them', async (t) => {
  const clientId = randomUUID();
  await failuresOf(clientId, { 5: 40, 6: 40 });
  t.equal(await refusal(clientId), 'allowed');
  const rows = await db
    .selectFrom('token_failures')
    .select('count')
    .where('bucket', '=', `client:${clientId}`)
    .execute();
  t.same(rows, [{ count: 1 }], 'only the new failure is left');
});

t.test("recording a failure drops only its limiter's own kinds of rows: another's window may be longer", async (t) => {
  const bucket = `sign-in-account:${randomUUID()}`;
  await db
    .insertInto('token_failures')
    .values({ bucket, window_start: new Date(Date.now() - 10 * MINUTE), count: 3 })
    .execute();
  await refusal(randomUUID());
  t.same(await db.selectFrom('token_failures').select('count').where('bucket', '=', bucket).execute(), [{ count: 3 }]);
});

t.test(
  'an address over its limit is refused before its secret is checked; a client over its limit is not',
  async (t) => {
    const clientId = randomUUID();
    await failuresOf(clientId, { 0: 10 });
    const admission = await limiter.admit({ subject: clientId, remoteAddress: '203.0.113.200' });
    t.equal(admission.subjectLimited, true, 'only its failures will be refused');
    const source = { remoteAddress: '192.0.2.50' };
    for (let i = 0; i < 50; i++) await limiter.recordFailure({ source, subjectLimited: false, addressFailed: false });
    await t.rejects(limiter.admit(source), { code: 'PLATFORM_RATE_LIMITED', message: /from this address/ });
  },
);

t.test('dropping the minutes that left the window reads an index on their start', async (t) => {
  const plan = await db.connection().execute(async (connection) => {
    await sql`set enable_seqscan = off`.execute(connection);
    const { rows } = await sql<{
      'QUERY PLAN': string;
    }>`explain delete from token_failures where window_start <= now() - interval '5 minutes'`.execute(connection);
    await sql`reset enable_seqscan`.execute(connection);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
  t.match(plan, /token_failures_window_start/, 'not a full scan of the table or of its primary key');
});

t.test(
  'over its limit, a client id is spared the hash for a wrong secret, and its right secret is hashed and accepted',
  async (t) => {
    let hashes = 0;
    // The mocked module by its file's own name: tsx resolves client-credentials' import of './secrets.js' to the .ts file.
    const { ClientCredentialsGrant } = await t.mockImport<typeof import('../../src/identity/client-credentials.js')>(
      '../../src/identity/client-credentials.js',
      {
        '../../src/identity/secrets.ts': {
          ...secrets,
          verifySecret: (secret: string, stored: string) => {
            hashes++;
            return secrets.verifySecret(secret, stored);
          },
        },
      },
    );
    const { tokenSigner } = createServices(loadConfig({}), db, testKeyEncryption, pino({ enabled: false }));
    const assertions = new ClientAssertions(
      db,
      new ClientKeySets(db, fetchCheckedDocument),
      'http://localhost:3000/api/v1/oauth/token',
    );
    const grant = new ClientCredentialsGrant(db, tokenSigner, limiter, assertions);
    const integration = await createTestIntegration(db);
    /** A token request for the integration, with some fields changed: its outcome and how many hashes it cost. */
    const attempt = async (changed: Partial<TokenRequest> = {}) => {
      hashes = 0;
      const body = { ...tokenRequestBody(integration), ...changed, grant_type: 'client_credentials' as const };
      const outcome = await grant.issue({ body, authorization: undefined, remoteAddress: '203.0.113.250' }).then(
        () => 'issued',
        (err: { status: number }) => err.status,
      );
      return { outcome, hashes };
    };
    const wrong = { client_secret: 'sk_wrong' };
    for (let i = 0; i < 10; i++)
      t.same(await attempt(wrong), { outcome: 401, hashes: 1 }, `failure ${i + 1}: hashed like any other`);
    t.same(await attempt(wrong), { outcome: 429, hashes: 0 });
    t.same(
      await attempt({ agency_id: 'another-agency' }),
      { outcome: 429, hashes: 0 },
      'a right secret for the wrong agency costs the same as a wrong one',
    );
    t.same(await attempt(), { outcome: 'issued', hashes: 1 });
  },
);
