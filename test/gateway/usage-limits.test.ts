import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import t from 'tap';
import type { DB } from '../../src/db/schema.js';
import type { UsageKind } from '../../src/db/tables/usage.js';
import { PlatformError } from '../../src/shared/platform-error.js';
import { operations, quotaLeases } from '../../src/generated/contract.js';
import type { ExtensionPolicy } from '../../src/shared/principal.js';
import { purgeUsageWindows, UsageLimiter } from '../../src/gateway/core/usage-limits.js';
import { secondPool, testDatabase } from '../helpers/database.js';

const { db, engine } = await testDatabase();

const { getPatient, listPatients } = operations;
/** A cost-budgeted call of 10 units (runQuery charges each governed query's own units through its admission). */
const runQuery = { operationId: 'runQuery', costUnits: 10, costBudgeted: true };
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

/** The database seen through a plugin that counts the statements sent and those still waiting for their result. */
function counting(database: Kysely<DB>) {
  const counter = { queries: 0, running: 0 };
  const counted = database.withPlugin({
    transformQuery(args) {
      counter.queries++;
      counter.running++;
      return args.node;
    },
    transformResult: async (args) => {
      counter.running--;
      return args.result;
    },
  });
  return { counted, counter };
}

/** Waits for the reservations sent in the background (refills) to be answered. */
async function settled(counter: { running: number }): Promise<void> {
  while (counter.running > 0) await sleep(1);
}

/** What a crashed instance may hold unspent of a daily limit: x-svc-quota-leases, never less than one call's units. */
const crashBound = (limit: number, units: number) =>
  Math.max(units, Math.min(quotaLeases.max_units, Math.floor((limit * quotaLeases.max_share_percent) / 100)));

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
  t.same(
    remaining,
    [4, 3, 2, 1, 0].map((r) => `"minute";r=${r};t=42, "day";r=${995 + r};t=50382`),
  );

  const refused = await refusalOf(limiter.admit(p, getPatient, MORNING));
  t.equal(refused.code, 'PLATFORM_RATE_LIMITED');
  t.equal(refused.status, 429);
  t.same(refused.headers, {
    'ratelimit-policy': '"minute";q=5;w=60, "day";q=1000;w=86400',
    ratelimit: '"minute";r=0;t=42, "day";r=995;t=50382',
    'retry-after': '42',
  });
  t.match(refused.details, { window: 'minute', limit: 5, resetAt: '2026-03-01T10:01:00.000Z', retryAfterSeconds: 42 });
  t.equal(
    (await refusalOf(limiter.admit(p, getPatient, at('2026-03-01T10:00:59.600Z')))).headers?.['retry-after'],
    '1',
    'rounded up, never 0',
  );
  t.same(await sharedUsed(p, 'minute'), [5], 'small limits lease one unit at a time');

  const nextMinute = await limiter.admit(p, getPatient, at('2026-03-01T10:01:00Z'));
  t.equal(nextMinute.ratelimit, '"minute";r=4;t=60, "day";r=994;t=50340', 'refusals spent nothing of the day');
  t.same(await sharedUsed(p, 'minute'), [5, 1]);
});

t.test(
  'daily quota: 429 PLATFORM_QUOTA_EXCEEDED with Retry-After to 00:00 UTC, then the next day admits',
  async (t) => {
    const limiter = new UsageLimiter(db);
    const p = policy({ rateLimitPerMinute: 100, dailyQuota: 3 });
    for (const minute of ['10:00', '11:00', '12:00'])
      await limiter.admit(p, getPatient, at(`2026-03-01T${minute}:00Z`));
    const refused = await refusalOf(limiter.admit(p, getPatient, at('2026-03-01T23:59:00Z')));
    t.equal(refused.code, 'PLATFORM_QUOTA_EXCEEDED');
    t.equal(refused.status, 429);
    t.equal(refused.headers?.['retry-after'], '60');
    t.equal(refused.headers?.ratelimit, '"minute";r=100;t=60, "day";r=0;t=60');
    await t.resolves(limiter.admit(p, getPatient, at('2026-03-02T00:00:00Z')));
  },
);

t.test('when several windows are spent, the one that ends last is reported', async (t) => {
  const limiter = new UsageLimiter(db);
  const p = policy({ rateLimitPerMinute: 2, dailyQuota: 2, dailyCostBudget: 0 });
  await limiter.admit(p, getPatient, MORNING);
  await limiter.admit(p, getPatient, MORNING);
  const refused = await refusalOf(limiter.admit(p, getPatient, MORNING));
  t.equal(refused.code, 'PLATFORM_QUOTA_EXCEEDED');
  t.equal(refused.headers?.['retry-after'], '50382');
  const budgeted = await refusalOf(limiter.admit(p, runQuery, MORNING));
  t.equal(
    budgeted.code,
    'PLATFORM_QUOTA_EXCEEDED',
    'the day quota before the day cost budget, which ends at the same time',
  );
});

t.test(
  'cost budget: budgeted operations refused with 402 when the budget cannot cover them; others are not counted',
  async (t) => {
    const limiter = new UsageLimiter(db);
    const p = policy({ dailyCostBudget: 25 });
    t.equal(operations.runQuery.costBudgeted, true);
    await limiter.admit(p, runQuery, MORNING);
    await limiter.admit(p, listPatients, MORNING);
    await limiter.admit(p, runQuery, MORNING);

    const refused = await refusalOf(limiter.admit(p, runQuery, MORNING));
    t.equal(refused.code, 'PLATFORM_COST_LIMIT_EXCEEDED');
    t.equal(refused.status, 402);
    t.match(refused.details, {
      window: 'cost',
      limit: 25,
      costUnits: 10,
      remaining: 5,
      resetAt: '2026-03-02T00:00:00.000Z',
    });
    t.notOk(refused.headers?.['retry-after'], 'a spent budget is not a matter of waiting a moment');
    t.same(await sharedUsed(p, 'cost'), [20], 'only the two budgeted calls were counted');
    const after = await limiter.admit(p, getPatient, MORNING);
    t.equal(
      after.ratelimit,
      '"minute";r=596;t=42, "day";r=49996;t=50382',
      'four calls admitted; the refused one spent nothing',
    );

    const unbudgeted = policy({ dailyCostBudget: null });
    for (let i = 0; i < 5; i++) await limiter.admit(unbudgeted, runQuery, MORNING);
    t.same(await sharedUsed(unbudgeted, 'cost'), [], 'no budget, no counter');
  },
);

t.test('concurrent calls on one instance do not over-reserve', async (t) => {
  const limiter = new UsageLimiter(db);
  const p = policy({ rateLimitPerMinute: 10 });
  const results = await Promise.allSettled(Array.from({ length: 30 }, () => limiter.admit(p, getPatient, MORNING)));
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 10);
  t.same(await sharedUsed(p, 'minute'), [10]);
});

t.test("instances on one database respect each other's reservations", async (t) => {
  const [first, second] = [new UsageLimiter(db), new UsageLimiter(db)];
  const p = policy({ rateLimitPerMinute: 3 });
  await first.admit(p, getPatient, MORNING);
  await first.admit(p, getPatient, MORNING);
  await second.admit(p, getPatient, MORNING);
  t.equal(
    (await refusalOf(first.admit(p, getPatient, MORNING))).code,
    'PLATFORM_RATE_LIMITED',
    'refused by the shared counter',
  );
  t.equal((await refusalOf(second.admit(p, getPatient, MORNING))).code, 'PLATFORM_RATE_LIMITED');
  t.same(await sharedUsed(p, 'minute'), [3]);
});

t.test('leasing: with a large limit, calls cost far less than one database round trip each', async (t) => {
  const { counted, counter } = counting(db);
  const limiter = new UsageLimiter(counted);
  const p = policy({ rateLimitPerMinute: 1_000_000, dailyQuota: 10_000_000 });
  await limiter.admit(p, getPatient, MORNING);
  t.equal(counter.queries, 2, 'the first call leases 10 units for the minute and 10 for the day');
  for (let i = 1; i < 10_000; i++) await limiter.admit(p, getPatient, MORNING);
  t.ok(counter.queries <= 100, `10 000 sequential calls: ${counter.queries} statements, under one per 100 calls`);
  await settled(counter);
  const [used] = await sharedUsed(p, 'minute');
  t.ok(used >= 10_000 && used <= 11_000, `granted ${used}: what was spent, plus at most the minute's cap of 1000`);

  const before = counter.queries;
  await Promise.all(Array.from({ length: 10_000 }, () => limiter.admit(p, getPatient, MORNING)));
  t.ok(counter.queries - before <= 100, `10 000 concurrent calls: ${counter.queries - before} statements`);
});

t.test(
  'admitNow answers a warm call from leased units without the database, and refuses exactly as admit does',
  async (t) => {
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
    const [viaAdmit, viaAdmitNow] = [
      await refusalOf(limiter.admit(small, getPatient, MORNING)),
      await refusalOf(Promise.resolve().then(() => limiter.admitNow(small, getPatient, now))),
    ];
    t.match(viaAdmitNow, { code: 'PLATFORM_RATE_LIMITED', status: 429 });
    t.same(viaAdmitNow.headers, viaAdmit.headers, 'same Retry-After and RateLimit headers');
  },
);

t.test('a large lease is refilled when half spent, before any call has to wait for it', async (t) => {
  let releaseResults = () => {};
  let held = Promise.resolve();
  const statements = { sent: 0, running: 0 };
  const slow = db.withPlugin({
    transformQuery(args) {
      statements.sent++;
      statements.running++;
      return args.node;
    },
    transformResult: async (args) => {
      await held;
      statements.running--;
      return args.result;
    },
  });
  const limiter = new UsageLimiter(slow);
  const p = policy({ rateLimitPerMinute: 100_000, dailyQuota: 1_000_000 });
  const dayLease = crashBound(p.dailyQuota, 1);
  // Reservations in quick succession: the leases grow to their caps.
  const warmUp = 3000;
  for (let i = 0; i < warmUp; i++) await limiter.admit(p, getPatient, MORNING);
  await settled(statements);
  held = new Promise((resolve) => (releaseResults = resolve));
  const sent = statements.sent;
  const answered = Array.from({ length: dayLease / 2 }, () => limiter.admitNow(p, getPatient, MORNING.getTime()));
  t.notOk(
    answered.includes(undefined),
    `${answered.length} calls answered from leased units while the database answers nothing`,
  );
  t.ok(statements.sent > sent, 'the day lease, half spent, sent its refill');
  releaseResults();
  await settled(statements);
  const [granted] = await sharedUsed(p, 'day');
  const unspent = granted - warmUp - dayLease / 2;
  t.ok(unspent > dayLease / 2 && unspent <= dayLease, `${unspent} units at hand again, at most the cap of ${dayLease}`);
});

t.test('purgeUsageWindows deletes the windows that started before the cutoff', async (t) => {
  const limiter = new UsageLimiter(db);
  const p = policy();
  for (const day of ['2020-01-01', '2020-01-02', '2020-01-03'])
    await limiter.admit(p, getPatient, at(`${day}T12:00:00Z`));
  const purged = await purgeUsageWindows(db, at('2020-01-03T00:00:00Z'));
  t.equal(purged, 4, 'the minute and day windows of the first two days');
  t.same(await sharedUsed(p, 'day'), [10], 'a first lease is 10 units');
  t.same(await sharedUsed(p, 'minute'), [10]);
});

t.test(
  'two instances with their own pools share one limit exactly',
  { skip: engine !== 'postgres' && 'needs PostgreSQL: PGlite is one session' },
  async (t) => {
    const pools = await Promise.all([1, 2].map(() => secondPool(t, 4)));
    const instances = pools.map((pool) => new UsageLimiter(pool));
    // 50 leases 2 units at a time; 1000 leases 50, shrinking towards the end of the window.
    for (const limit of [50, 1000]) {
      const p = policy({ rateLimitPerMinute: limit, dailyQuota: 100_000 });
      const callsPerInstance = limit * 0.8;
      const calls = instances.flatMap((limiter) =>
        Array.from({ length: callsPerInstance }, () => limiter.admit(p, getPatient, MORNING)),
      );
      const results = await Promise.allSettled(calls);
      const admittedBy = [results.slice(0, callsPerInstance), results.slice(callsPerInstance)].map(
        (rs) => rs.filter((r) => r.status === 'fulfilled').length,
      );
      const refusals = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as PlatformError).code] : []));
      const admitted = admittedBy[0] + admittedBy[1];
      // An instance whose calls ended first may still hold its last refill, at most a twentieth of the limit, which
      // the other is refused for until the window ends or the holder closes: never more than the limit is admitted.
      t.ok(
        admitted <= limit && admitted >= limit - Math.floor(limit / 20),
        `limit ${limit}: admitted ${admittedBy.join(' + ')}`,
      );
      t.ok(
        admittedBy.every((n) => n > 0),
        'both instances admitted calls',
      );
      t.same(new Set(refusals), new Set(['PLATFORM_RATE_LIMITED']));
      t.same(await sharedUsed(p, 'minute'), [limit], 'the shared counter is full');
      await Promise.all(instances.map((limiter) => limiter.close(MORNING.getTime())));
      t.same(await sharedUsed(p, 'minute'), [admitted], 'once both close, it holds exactly the calls admitted');
    }
  },
);

t.test(
  "an integration's lease set is dropped once all its windows have ended, and a later call starts afresh",
  async (t) => {
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
    await t.resolves(
      limiter.admit({ ...quiet }, getPatient, at('2026-03-02T00:02:00Z')),
      'an evicted integration is admitted as before',
    );
    t.equal(limiter.integrations, 2);
  },
);

t.test('close hands back what was leased and not spent: the counters equal the calls admitted', async (t) => {
  const limiter = new UsageLimiter(db);
  const p = policy({ dailyCostBudget: 1000 });
  for (let i = 0; i < 37; i++) await limiter.admit(p, getPatient, MORNING);
  for (let i = 0; i < 3; i++) await limiter.admit(p, runQuery, MORNING);
  await limiter.close(MORNING.getTime());
  t.same(await sharedUsed(p, 'day'), [40]);
  t.same(await sharedUsed(p, 'minute'), [40], 'the minute has not ended: handed back too');
  t.same(await sharedUsed(p, 'cost'), [30]);
  await limiter.close(MORNING.getTime());
  t.same(await sharedUsed(p, 'day'), [40], 'closing again hands back nothing twice');
});

t.test(
  'a crashed instance (never closed) holds at most the share of the day quota and cost budget that x-svc-quota-leases allows',
  async (t) => {
    for (const quota of [300, 5_000, 50_000, 10_000_000]) {
      const { counted, counter } = counting(db);
      const limiter = new UsageLimiter(counted);
      const p = policy({
        rateLimitPerMinute: 1_000_000,
        dailyQuota: quota,
        dailyCostBudget: quota * runQuery.costUnits,
      });
      const held = { day: 0, cost: 0 };
      for (let calls = 1; calls <= Math.min(quota, 3000); calls++) {
        await limiter.admit(p, runQuery, MORNING);
        if (calls % 97 !== 0) continue;
        await settled(counter);
        const [[day], [cost]] = await Promise.all([sharedUsed(p, 'day'), sharedUsed(p, 'cost')]);
        held.day = Math.max(held.day, day - calls);
        held.cost = Math.max(held.cost, cost - calls * runQuery.costUnits);
      }
      t.ok(
        held.day <= crashBound(quota, 1),
        `quota ${quota}: at most ${held.day} requests held unspent (bound ${crashBound(quota, 1)})`,
      );
      const budget = quota * runQuery.costUnits;
      t.ok(
        held.cost <= crashBound(budget, runQuery.costUnits),
        `budget ${budget}: at most ${held.cost} units held unspent (bound ${crashBound(budget, runQuery.costUnits)})`,
      );
    }
  },
);

t.test(
  'a lease grows only while its units go fast: an integration calling every 5 s holds at most 10 units',
  async (t) => {
    const { counted, counter } = counting(db);
    const limiter = new UsageLimiter(counted);
    const p = policy();
    for (let i = 0; i < 200; i++) await limiter.admit(p, getPatient, new Date(MORNING.getTime() + i * 5_000));
    await settled(counter);
    const [day] = await sharedUsed(p, 'day');
    t.ok(day - 200 <= 10, `${day - 200} units unspent after 200 calls`);
  },
);

t.test('a lease of a UTC day that has ended is dropped at close, never handed back into the new day', async (t) => {
  const { counted, counter } = counting(db);
  const limiter = new UsageLimiter(counted);
  const p = policy();
  for (let i = 0; i < 30; i++) await limiter.admit(p, getPatient, at('2026-03-01T23:59:50Z'));
  await settled(counter);
  const [lastDay] = await sharedUsed(p, 'day');
  const [lastMinute] = await sharedUsed(p, 'minute');
  t.ok(lastDay > 30, `the day before holds ${lastDay - 30} units unspent`);
  for (let i = 0; i < 3; i++) await limiter.admit(p, getPatient, at('2026-03-02T00:00:10Z'));
  await limiter.close(at('2026-03-02T00:00:20Z').getTime());
  t.same(await sharedUsed(p, 'day'), [lastDay, 3], 'the new day counts its 3 calls; the day before is left as it was');
  t.same(await sharedUsed(p, 'minute'), [lastMinute, 3]);

  const quiet = policy();
  const idle = new UsageLimiter(db);
  await idle.admit(quiet, getPatient, at('2026-03-01T23:59:50Z'));
  const before = await sharedUsed(quiet, 'day');
  await idle.close(at('2026-03-02T00:00:20Z').getTime());
  t.same(
    await sharedUsed(quiet, 'day'),
    before,
    'closed the next day: nothing handed back, no counter for the new day',
  );
});

t.test(
  'instances closing at the same time hand back exactly their own units',
  { skip: engine !== 'postgres' && 'needs PostgreSQL: PGlite is one session' },
  async (t) => {
    // As large as in production: the planner then reaches the counters by index in the order a statement lists them,
    // where over a small table it scans them all in one order for everybody.
    await sql`insert into usage_windows (agency_id, extension_id, kind, window_start, used, last_grant)
    select ${`agency-${randomUUID()}`}, 'ext-' || (i % 100), 'minute', timestamptz '2030-01-01' + i * interval '1 minute', 1, 1
    from generate_series(1, 20000) as i`.execute(db);
    await sql`analyze usage_windows`.execute(db);
    const pools = await Promise.all([1, 2].map(() => secondPool(t, 4)));
    const instances = pools.map((pool) => new UsageLimiter(pool));
    const integrations = [policy(), policy(), policy()];
    const callsBy = (instance: number, j: number) => 1 + ((j * (instance + 3)) % 7);
    // Each instance first meets the integrations in the opposite order of the other, so returns list them in opposite orders.
    const orders = [integrations, [...integrations].reverse()];
    await Promise.all(
      instances.map((limiter, i) =>
        Promise.all(
          orders[i].map(async (p) => {
            for (let k = 0; k < callsBy(i, integrations.indexOf(p)); k++) await limiter.admit(p, getPatient, MORNING);
          }),
        ),
      ),
    );
    // A third connection holds the middle integration's counters: a return that locks rows in the order it lists them takes
    // the counters on its side of the middle, waits there, and then needs the other's.
    const blocker = await (await secondPool(t, 1)).startTransaction().execute();
    await blocker
      .selectFrom('usage_windows')
      .select('used')
      .where('agency_id', '=', integrations[1].agencyId)
      .forUpdate()
      .execute();
    const closing = Promise.all(instances.map((limiter) => limiter.close(MORNING.getTime())));
    await sleep(200);
    await blocker.rollback().execute();
    await closing;
    const used = await Promise.all(integrations.map((p) => sharedUsed(p, 'day')));
    t.same(
      used,
      integrations.map((_, j) => [callsBy(0, j) + callsBy(1, j)]),
    );
  },
);
