import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import t from 'tap';
import type { DB } from '../../src/db/schema.js';
import type { UsageKind } from '../../src/db/tables/usage.js';
import { PlatformError } from '../../src/errors/platform-error.js';
import { operations } from '../../src/generated/contract.js';
import type { ExtensionPolicy } from '../../src/gateway/principal.js';
import { purgeUsageWindows, UsageLimiter } from '../../src/gateway/usage-limits.js';
import { secondPool, testDatabase } from '../helpers/database.js';

const { db, engine } = await testDatabase();

const { getPatient, listPatients, runQuery } = operations;
const at = (iso: string) => new Date(iso);
// 10:00:18 UTC: 42 s left in the minute, 50382 s in the day.
const MORNING = at('2026-03-01T10:00:18Z');

function policy(overrides: Partial<ExtensionPolicy> = {}): ExtensionPolicy {
  return {
    agencyId: `agency-${randomUUID()}`,
    extensionId: `ext-${randomUUID()}`,
    status: 'active',
    capabilities: new Set(),
    phiModes: new Set(['no_phi']),
    rateLimitPerMinute: 600,
    dailyQuota: 50_000,
    dailyCostBudget: null,
    tokensRevokedBefore: null,
    revokedTokenIds: new Set(),
    ...overrides,
  };
}

async function refusalOf(admitting: Promise<unknown>): Promise<PlatformError> {
  try {
    await admitting;
  } catch (err) {
    if (err instanceof PlatformError) return err;
    throw err;
  }
  throw new Error('the call was admitted');
}

async function sharedUsed(p: ExtensionPolicy, kind: UsageKind): Promise<number[]> {
  const rows = await db
    .selectFrom('usage_windows')
    .select('used')
    .where('agency_id', '=', p.agencyId)
    .where('extension_id', '=', p.extensionId)
    .where('kind', '=', kind)
    .orderBy('window_start')
    .execute();
  return rows.map((r) => r.used);
}

/** The database seen through a plugin that counts the statements sent. */
function counting(database: Kysely<DB>) {
  const counter = { queries: 0 };
  const counted = database.withPlugin({
    transformQuery(args) {
      counter.queries++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  return { counted, counter };
}

t.test('headers follow draft-ietf-httpapi-ratelimit-headers', async (t) => {
  const headers = await new UsageLimiter(db).admit(policy(), getPatient, MORNING);
  t.same(headers, {
    'ratelimit-policy': '"minute";q=600;w=60, "day";q=50000;w=86400',
    ratelimit: '"minute";r=599;t=42, "day";r=49999;t=50382',
  });
});

t.test("RateLimit-Policy follows an integration's changed limits (its policy is loaded again)", async (t) => {
  const limiter = new UsageLimiter(db);
  const before = policy();
  await limiter.admit(before, getPatient, MORNING);
  const after = { ...before, rateLimitPerMinute: 1200, dailyQuota: 90_000 };
  const headers = await limiter.admit(after, getPatient, MORNING);
  t.equal(headers['ratelimit-policy'], '"minute";q=1200;w=60, "day";q=90000;w=86400');
  t.match(headers.ratelimit, /^"minute";r=1198;t=42, "day";r=89998;t=/, 'the same counters, against the new limits');
});

t.test('rate limit: N calls in a minute, then 429 PLATFORM_RATE_LIMITED until the next minute', async (t) => {
  const limiter = new UsageLimiter(db);
  const p = policy({ rateLimitPerMinute: 5, dailyQuota: 1000 });
  const remaining = [];
  for (let i = 0; i < 5; i++) remaining.push((await limiter.admit(p, getPatient, MORNING)).ratelimit);
  t.same(remaining, [4, 3, 2, 1, 0].map((r) => `"minute";r=${r};t=42, "day";r=${995 + r};t=50382`));

  const refused = await refusalOf(limiter.admit(p, getPatient, MORNING));
  t.equal(refused.code, 'PLATFORM_RATE_LIMITED');
  t.equal(refused.status, 429);
  t.same(refused.headers, {
    'ratelimit-policy': '"minute";q=5;w=60, "day";q=1000;w=86400',
    ratelimit: '"minute";r=0;t=42, "day";r=995;t=50382',
    'retry-after': '42',
  });
  t.match(refused.details, { window: 'minute', limit: 5, resetAt: '2026-03-01T10:01:00.000Z', retryAfterSeconds: 42 });
  t.equal((await refusalOf(limiter.admit(p, getPatient, at('2026-03-01T10:00:59.600Z')))).headers?.['retry-after'], '1', 'rounded up, never 0');
  t.same(await sharedUsed(p, 'minute'), [5], 'small limits lease one unit at a time');

  const nextMinute = await limiter.admit(p, getPatient, at('2026-03-01T10:01:00Z'));
  t.equal(nextMinute.ratelimit, '"minute";r=4;t=60, "day";r=994;t=50340', 'refusals spent nothing of the day');
  t.same(await sharedUsed(p, 'minute'), [5, 1]);
});

t.test('daily quota: 429 PLATFORM_QUOTA_EXCEEDED with Retry-After to 00:00 UTC, then the next day admits', async (t) => {
  const limiter = new UsageLimiter(db);
  const p = policy({ rateLimitPerMinute: 100, dailyQuota: 3 });
  for (const minute of ['10:00', '11:00', '12:00']) await limiter.admit(p, getPatient, at(`2026-03-01T${minute}:00Z`));
  const refused = await refusalOf(limiter.admit(p, getPatient, at('2026-03-01T23:59:00Z')));
  t.equal(refused.code, 'PLATFORM_QUOTA_EXCEEDED');
  t.equal(refused.status, 429);
  t.equal(refused.headers?.['retry-after'], '60');
  t.equal(refused.headers?.ratelimit, '"minute";r=100;t=60, "day";r=0;t=60');
  await t.resolves(limiter.admit(p, getPatient, at('2026-03-02T00:00:00Z')));
});

t.test('when several windows are spent, the one that ends last is reported', async (t) => {
  const limiter = new UsageLimiter(db);
  const p = policy({ rateLimitPerMinute: 2, dailyQuota: 2, dailyCostBudget: 0 });
  await limiter.admit(p, getPatient, MORNING);
  await limiter.admit(p, getPatient, MORNING);
  const refused = await refusalOf(limiter.admit(p, getPatient, MORNING));
  t.equal(refused.code, 'PLATFORM_QUOTA_EXCEEDED');
  t.equal(refused.headers?.['retry-after'], '50382');
  const budgeted = await refusalOf(limiter.admit(p, runQuery, MORNING));
  t.equal(budgeted.code, 'PLATFORM_QUOTA_EXCEEDED', 'the day quota before the day cost budget, which ends at the same time');
});

t.test('cost budget: budgeted operations refused with 402 when the budget cannot cover them; others are not counted', async (t) => {
  const limiter = new UsageLimiter(db);
  const p = policy({ dailyCostBudget: 25 });
  t.equal(runQuery.costUnits, 10);
  t.equal(runQuery.costBudgeted, true);
  await limiter.admit(p, runQuery, MORNING);
  await limiter.admit(p, listPatients, MORNING);
  await limiter.admit(p, runQuery, MORNING);

  const refused = await refusalOf(limiter.admit(p, runQuery, MORNING));
  t.equal(refused.code, 'PLATFORM_COST_LIMIT_EXCEEDED');
  t.equal(refused.status, 402);
  t.match(refused.details, { window: 'cost', limit: 25, costUnits: 10, remaining: 5, resetAt: '2026-03-02T00:00:00.000Z' });
  t.notOk(refused.headers?.['retry-after'], 'a spent budget is not a matter of waiting a moment');
  t.same(await sharedUsed(p, 'cost'), [20], 'only the two budgeted calls were counted');
  const after = await limiter.admit(p, getPatient, MORNING);
  t.equal(after.ratelimit, '"minute";r=596;t=42, "day";r=49996;t=50382', 'four calls admitted; the refused one spent nothing');

  const unbudgeted = policy({ dailyCostBudget: null });
  for (let i = 0; i < 5; i++) await limiter.admit(unbudgeted, runQuery, MORNING);
  t.same(await sharedUsed(unbudgeted, 'cost'), [], 'no budget, no counter');
});

t.test('concurrent calls on one instance do not over-reserve', async (t) => {
  const limiter = new UsageLimiter(db);
  const p = policy({ rateLimitPerMinute: 10 });
  const results = await Promise.allSettled(Array.from({ length: 30 }, () => limiter.admit(p, getPatient, MORNING)));
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 10);
  t.same(await sharedUsed(p, 'minute'), [10]);
});

t.test('instances on one database respect each other\'s reservations', async (t) => {
  const [first, second] = [new UsageLimiter(db), new UsageLimiter(db)];
  const p = policy({ rateLimitPerMinute: 3 });
  await first.admit(p, getPatient, MORNING);
  await first.admit(p, getPatient, MORNING);
  await second.admit(p, getPatient, MORNING);
  t.equal((await refusalOf(first.admit(p, getPatient, MORNING))).code, 'PLATFORM_RATE_LIMITED', 'refused by the shared counter');
  t.equal((await refusalOf(second.admit(p, getPatient, MORNING))).code, 'PLATFORM_RATE_LIMITED');
  t.same(await sharedUsed(p, 'minute'), [3]);
});

t.test('leasing: with a large limit, calls cost far less than one database round trip each', async (t) => {
  const { counted, counter } = counting(db);
  const limiter = new UsageLimiter(counted);
  const p = policy({ rateLimitPerMinute: 1_000_000, dailyQuota: 10_000_000 });
  await limiter.admit(p, getPatient, MORNING);
  t.equal(counter.queries, 2, 'the first call leases 1000 units for the minute and 1000 for the day');
  for (let i = 1; i < 10_000; i++) await limiter.admit(p, getPatient, MORNING);
  t.ok(counter.queries <= 22, `10 000 sequential calls: ${counter.queries} statements`);
  const [used] = await sharedUsed(p, 'minute');
  t.ok(used >= 10_000 && used <= 11_500, `granted ${used}: what was spent, plus at most a lease and a half`);

  const before = counter.queries;
  await Promise.all(Array.from({ length: 10_000 }, () => limiter.admit(p, getPatient, MORNING)));
  t.ok(counter.queries - before <= 22, `10 000 concurrent calls: ${counter.queries - before} statements`);
});

t.test('admitNow answers a warm call from leased units without the database, and refuses exactly as admit does', async (t) => {
  const { counted, counter } = counting(db);
  const limiter = new UsageLimiter(counted);
  const now = MORNING.getTime();
  const p = policy({ rateLimitPerMinute: 600 });
  t.equal(limiter.admitNow(p, getPatient, now), undefined, 'cold: nothing leased yet, admit() must reserve');
  await limiter.admit(p, getPatient, MORNING);
  const queries = counter.queries;
  t.match(limiter.admitNow(p, getPatient, now), { ratelimit: /"minute";r=\d+;t=42/ }, 'warm: spent locally');
  t.equal(counter.queries, queries, 'no statement for a warm call');

  const small = policy({ rateLimitPerMinute: 2 });
  await limiter.admit(small, getPatient, MORNING);
  await limiter.admit(small, getPatient, MORNING);
  const [viaAdmit, viaAdmitNow] = [await refusalOf(limiter.admit(small, getPatient, MORNING)), await refusalOf(Promise.resolve().then(() => limiter.admitNow(small, getPatient, now)))];
  t.match(viaAdmitNow, { code: 'PLATFORM_RATE_LIMITED', status: 429 });
  t.same(viaAdmitNow.headers, viaAdmit.headers, 'same Retry-After and RateLimit headers');
});

t.test('a large lease is refilled when half spent, before any call has to wait for it', async (t) => {
  let releaseResults = () => {};
  let held = Promise.resolve();
  const statements = { sent: 0 };
  const slow = db.withPlugin({
    transformQuery(args) {
      statements.sent++;
      return args.node;
    },
    transformResult: async (args) => {
      await held;
      return args.result;
    },
  });
  const limiter = new UsageLimiter(slow);
  const p = policy({ rateLimitPerMinute: 100_000, dailyQuota: 1_000_000 });
  await limiter.admit(p, getPatient, MORNING);
  held = new Promise((resolve) => (releaseResults = resolve));
  for (let i = 1; i < 600; i++) await limiter.admit(p, getPatient, MORNING);
  t.equal(statements.sent, 4, 'both refills sent while 400 units were still at hand, and no call waited for them');
  releaseResults();
  // 400 units at hand: the last 100 calls are served by the refill.
  await Promise.all(Array.from({ length: 500 }, () => limiter.admit(p, getPatient, MORNING)));
  t.equal(statements.sent, 4);
  t.same(await sharedUsed(p, 'minute'), [2000]);
});

t.test('purgeUsageWindows deletes the windows that started before the cutoff', async (t) => {
  const limiter = new UsageLimiter(db);
  const p = policy();
  for (const day of ['2020-01-01', '2020-01-02', '2020-01-03']) await limiter.admit(p, getPatient, at(`${day}T12:00:00Z`));
  const purged = await purgeUsageWindows(db, at('2020-01-03T00:00:00Z'));
  t.equal(purged, 4, 'the minute and day windows of the first two days');
  t.same(await sharedUsed(p, 'day'), [1000]);
  t.same(await sharedUsed(p, 'minute'), [30]);
});

t.test('two instances with their own pools share one limit exactly', { skip: engine !== 'postgres' && 'needs PostgreSQL: PGlite is one session' }, async (t) => {
  const pools = await Promise.all([1, 2].map(() => secondPool(t, 4)));
  const instances = pools.map((pool) => new UsageLimiter(pool));
  // 50 leases 2 units at a time; 1000 leases 50, shrinking towards the end of the window.
  for (const limit of [50, 1000]) {
    const p = policy({ rateLimitPerMinute: limit, dailyQuota: 100_000 });
    const callsPerInstance = limit * 0.8;
    const calls = instances.flatMap((limiter) => Array.from({ length: callsPerInstance }, () => limiter.admit(p, getPatient, MORNING)));
    const results = await Promise.allSettled(calls);
    const admittedBy = [results.slice(0, callsPerInstance), results.slice(callsPerInstance)].map((rs) => rs.filter((r) => r.status === 'fulfilled').length);
    const refusals = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as PlatformError).code] : []));
    t.equal(admittedBy[0] + admittedBy[1], limit, `limit ${limit}: admitted ${admittedBy.join(' + ')}`);
    t.ok(admittedBy.every((n) => n > 0), 'both instances admitted calls');
    t.same(new Set(refusals), new Set(['PLATFORM_RATE_LIMITED']));
    t.same(await sharedUsed(p, 'minute'), [limit]);
  }
});

t.test("an integration's lease set is dropped once all its windows have ended, and a later call starts afresh", async (t) => {
  const limiter = new UsageLimiter(db);
  const quiet = policy();
  const busy = policy();
  await limiter.admit(quiet, getPatient, MORNING);
  await limiter.admit(busy, getPatient, MORNING);
  t.equal(limiter.integrations, 2);
  await limiter.admit(policy(), getPatient, at('2026-03-01T23:59:00Z'));
  t.equal(limiter.integrations, 3, 'the day has not ended: every set is kept');
  await limiter.admit({ ...busy }, getPatient, at('2026-03-02T00:00:30Z'));
  t.equal(limiter.integrations, 1, 'next day: only the set of the integration calling now');
  await t.resolves(limiter.admit({ ...quiet }, getPatient, at('2026-03-02T00:02:00Z')), 'an evicted integration is admitted as before');
  t.equal(limiter.integrations, 2);
});
