import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { UsageKind, UsageWindowsTable } from '../../db/tables/usage.js';
import { PlatformError, type ErrorDetails } from '../../shared/platform-error.js';
import { quotaLeases, type ErrorCode } from '../../generated/contract.js';
import { headerText } from './header-text.js';
import { IntegrationMap } from '../../shared/integration-map.js';
import type { ExtensionPolicy } from '../../shared/principal.js';

/** What the limiter needs of an operation (the route table's costUnits and costBudgeted). */
interface MeteredOperation {
  operationId: string;
  costUnits: number;
  costBudgeted: boolean;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

interface Window {
  lengthMs: number;
  refusal: ErrorCode;
  /** Most units one instance holds unspent, as a share of the limit and in units: what a crash can cost. */
  leaseShare: number;
  leaseMax: number;
}

/** A crash costs a daily window its unspent lease until 00:00 UTC: bounded as the contract's x-svc-quota-leases promise. */
const DAILY_LEASE = { leaseShare: quotaLeases.max_share_percent / 100, leaseMax: quotaLeases.max_units };

const WINDOWS: Record<UsageKind, Window> = {
  // A minute's lease is lost for at most a minute: larger, so fewer calls ask the database.
  minute: { lengthMs: MINUTE_MS, refusal: 'PLATFORM_RATE_LIMITED', leaseShare: 1 / 20, leaseMax: 1000 },
  day: { lengthMs: DAY_MS, refusal: 'PLATFORM_QUOTA_EXCEEDED', ...DAILY_LEASE },
  cost: { lengthMs: DAY_MS, refusal: 'PLATFORM_COST_LIMIT_EXCEEDED', ...DAILY_LEASE },
};

/** Near the end of a window few units sit unspent in one instance while another is refused. */
const LEASE_SHARE_OF_REMAINING = 1 / 10;
/** Leases at least this large are refilled when half spent, so warm calls never wait; smaller ones stay exact. */
const REFILL_AHEAD_MIN_LEASE = 10;
/** A lease starts this large and doubles while reservations follow each other within GROWTH_MS, up to its window's cap. */
const FIRST_LEASE = REFILL_AHEAD_MIN_LEASE;
const GROWTH_MS = 10_000;

/** This instance's view of one shared counter in one window. */
class Lease {
  /** Units reserved by this instance and not yet spent. */
  local = 0;
  /** The shared counter as last seen; other instances may have taken more since, never less. */
  sharedUsed = 0;
  reserving: Promise<void> | undefined;
  /** Units to hold after the next reservation, before the window's cap: grows with this instance's traffic. */
  private size = FIRST_LEASE;
  private reservedAt = -Infinity;

  constructor(
    readonly agencyId: string,
    readonly extensionId: string,
    readonly kind: UsageKind,
    readonly start: number,
  ) {}

  get end(): number {
    return this.start + WINDOWS[this.kind].lengthMs;
  }

  /** What this instance can still hope to spend; below a call's units it is refused without asking the database. */
  available(limit: number): number {
    return Math.max(0, this.local + limit - this.sharedUsed);
  }

  /** Units to hold once reserved: never more than the window's cap, so a crash costs at most that. */
  target(limit: number): number {
    const { leaseShare, leaseMax } = WINDOWS[this.kind];
    return Math.floor(
      Math.min(this.size, leaseMax, limit * leaseShare, (limit - this.sharedUsed) * LEASE_SHARE_OF_REMAINING),
    );
  }

  /** Called at each reservation: a busy instance holds more, a quiet one (whose units lasted long) starts small again. */
  grow(nowMs: number): void {
    this.size =
      nowMs - this.reservedAt < GROWTH_MS ? Math.min(this.size * 2, WINDOWS[this.kind].leaseMax) : FIRST_LEASE;
    this.reservedAt = nowMs;
  }
}

/** One integration's current lease per kind. */
type IntegrationLeases = Partial<Record<UsageKind, Lease>>;

/** How often, at most, lease sets whose windows have all ended are dropped (on the path that adds a set). */
const EVICT_INTERVAL_MS = MINUTE_MS;

function ended(leases: IntegrationLeases, nowMs: number): boolean {
  return Object.values(leases).every((lease) => lease.end <= nowMs);
}

interface Demand {
  lease: Lease;
  limit: number;
  units: number;
}

const isExhausted = (d: Demand) => d.lease.available(d.limit) < d.units;

function secondsUntil(endMs: number, nowMs: number): number {
  return Math.ceil((endMs - nowMs) / 1000);
}

const windowPolicy = (kind: UsageKind, limit: number) => `"${kind}";q=${limit};w=${WINDOWS[kind].lengthMs / 1000}`;

/** RateLimit-Policy depends only on a policy's limits: formatted once per policy object (a changed limit loads a new one). */
const policyHeaders = new WeakMap<ExtensionPolicy, string>();

function policyHeader(policy: ExtensionPolicy): string {
  let header = policyHeaders.get(policy);
  if (header === undefined) {
    header = `${windowPolicy('minute', policy.rateLimitPerMinute)}, ${windowPolicy('day', policy.dailyQuota)}`;
    policyHeaders.set(policy, header);
  }
  return header;
}

/** RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers) for the request windows; cost units are not requests. */
function rateLimitHeaders(policy: ExtensionPolicy, demands: Demand[], nowMs: number): Record<string, string> {
  // demands() lists the request windows first, minute then day: no filtering of the cost window per call.
  const [minute, day] = demands;
  // One join: a template per window left about 600 bytes of garbage per call (heap sampling), this under half of it.
  const ratelimit = headerText(
    '"minute";r=',
    minute.lease.available(minute.limit),
    ';t=',
    secondsUntil(minute.lease.end, nowMs),
    ', "day";r=',
    day.lease.available(day.limit),
    ';t=',
    secondsUntil(day.lease.end, nowMs),
  );
  return { 'ratelimit-policy': policyHeader(policy), ratelimit };
}

function refusalMessage({ lease, limit, units }: Demand, retryAfter: number): string {
  switch (lease.kind) {
    case 'minute':
      return `The integration's limit of ${limit} requests per minute is reached; retry in ${retryAfter} s.`;
    case 'day':
      return `The integration's daily quota of ${limit} requests is spent; it resets in ${retryAfter} s (00:00 UTC).`;
    case 'cost':
      return `The integration's daily cost budget of ${limit} units cannot cover this operation's ${units} units; it resets in ${retryAfter} s (00:00 UTC).`;
  }
}

function refusal(policy: ExtensionPolicy, exhausted: Demand[], demands: Demand[], nowMs: number): PlatformError {
  // The window that ends last: a shorter Retry-After would send the caller straight into another refusal.
  const worst = exhausted.reduce((a, b) => (b.lease.end > a.lease.end ? b : a));
  const { lease, limit, units } = worst;
  const retryAfter = secondsUntil(lease.end, nowMs);
  const details: ErrorDetails = {
    window: lease.kind,
    limit,
    resetAt: new Date(lease.end).toISOString(),
    retryAfterSeconds: retryAfter,
  };
  if (lease.kind === 'cost') Object.assign(details, { costUnits: units, remaining: lease.available(limit) });
  const headers = rateLimitHeaders(policy, demands, nowMs);
  if (lease.kind !== 'cost') headers['retry-after'] = String(retryAfter);
  return new PlatformError(WINDOWS[lease.kind].refusal, refusalMessage(worst, retryAfter), details, headers);
}

/**
 * Per-integration requests per minute and per UTC day, and a daily budget of cost units for
 * cost-budgeted operations, shared by every instance on the same PostgreSQL.
 * Each instance leases units from the shared counters in batches and spends them locally,
 * so a warm call touches no database; the units granted across instances never exceed a limit.
 */
export class UsageLimiter {
  private readonly leases = new IntegrationMap<IntegrationLeases>();
  /** The same leases reached from a cached policy object, so a warm call builds no key. */
  private readonly leasesByPolicy = new WeakMap<ExtensionPolicy, IntegrationLeases>();
  private evictedAt = 0;

  constructor(private readonly db: Kysely<DB>) {}

  /**
   * Admits one call and returns the headers for its response, or throws a PlatformError:
   * 429 PLATFORM_RATE_LIMITED or PLATFORM_QUOTA_EXCEEDED (with Retry-After, RateLimit, RateLimit-Policy),
   * or 402 PLATFORM_COST_LIMIT_EXCEEDED. A refused call spends nothing.
   */
  async admit(
    policy: ExtensionPolicy,
    operation: MeteredOperation,
    now: Date = new Date(),
  ): Promise<Record<string, string>> {
    const nowMs = now.getTime();
    const demands = this.demands(policy, operation, nowMs);
    for (;;) {
      const headers = this.spend(policy, demands, nowMs);
      if (headers) return headers;
      await Promise.all(demands.map((d) => this.topUp(d, nowMs)));
    }
  }

  /** Integrations whose lease sets this instance holds: those that called in a window that has not ended yet, or lately. */
  get integrations(): number {
    return this.leases.size;
  }

  /**
   * Hands back the units this instance reserved and did not spend, in windows that have not ended, so the shared
   * counters hold the calls admitted; the leases of ended windows are dropped. For shutdown, once calls are drained:
   * a call admitted after it reserves afresh. Reservations still under way are waited for first.
   */
  async close(nowMs: number = Date.now()): Promise<void> {
    const leases = [...this.leases.values()].flatMap((set) => Object.values(set));
    await Promise.allSettled(leases.map((lease) => lease.reserving));
    const unspent = leases.filter((lease) => lease.local > 0 && lease.end > nowMs);
    if (unspent.length === 0) return;
    // Taken and zeroed with no await in between: each unit is either spent here or handed back, never both.
    const units = unspent.map((lease) => lease.local);
    for (const lease of unspent) lease.local = 0;
    await handBack(this.db, unspent, units);
  }

  /** The same, without a promise, when this instance already holds the units (a warm call); undefined when admit() must reserve. */
  admitNow(
    policy: ExtensionPolicy,
    operation: MeteredOperation,
    nowMs: number = Date.now(),
  ): Record<string, string> | undefined {
    return this.spend(policy, this.demands(policy, operation, nowMs), nowMs);
  }

  /** Spends local units and returns the response headers; throws when a limit is reached; undefined when units must be reserved first. */
  private spend(policy: ExtensionPolicy, demands: Demand[], nowMs: number): Record<string, string> | undefined {
    if (demands.some(isExhausted)) throw refusal(policy, demands.filter(isExhausted), demands, nowMs);
    if (!demands.every((d) => d.lease.local >= d.units)) return undefined;
    // Checked and spent with no await in between, so concurrent calls cannot spend the same units.
    for (const d of demands) {
      d.lease.local -= d.units;
      this.refillAhead(d, nowMs);
    }
    return rateLimitHeaders(policy, demands, nowMs);
  }

  private demands(policy: ExtensionPolicy, operation: MeteredOperation, nowMs: number): Demand[] {
    const leases = this.leasesOf(policy, nowMs);
    const demands = [
      { lease: this.leaseFor(leases, policy, 'minute', nowMs), limit: policy.rateLimitPerMinute, units: 1 },
      { lease: this.leaseFor(leases, policy, 'day', nowMs), limit: policy.dailyQuota, units: 1 },
    ];
    if (operation.costBudgeted && operation.costUnits > 0 && policy.dailyCostBudget !== null) {
      demands.push({
        lease: this.leaseFor(leases, policy, 'cost', nowMs),
        limit: policy.dailyCostBudget,
        units: operation.costUnits,
      });
    }
    return demands;
  }

  private leasesOf(policy: ExtensionPolicy, nowMs: number): IntegrationLeases {
    let leases = this.leasesByPolicy.get(policy);
    if (!leases) {
      this.evictEnded(nowMs);
      leases = this.leases.get(policy.agencyId, policy.extensionId) ?? {};
      this.leases.set(policy.agencyId, policy.extensionId, leases);
      this.leasesByPolicy.set(policy, leases);
    }
    return leases;
  }

  /** An integration that stopped calling would otherwise keep its set for the life of the process. */
  private evictEnded(nowMs: number): void {
    if (nowMs - this.evictedAt < EVICT_INTERVAL_MS) return;
    this.evictedAt = nowMs;
    for (const [agencyId, extensionId, leases] of this.leases.entries())
      if (ended(leases, nowMs)) this.leases.delete(agencyId, extensionId);
  }

  private leaseFor(
    leases: IntegrationLeases,
    { agencyId, extensionId }: ExtensionPolicy,
    kind: UsageKind,
    nowMs: number,
  ): Lease {
    const start = nowMs - (nowMs % WINDOWS[kind].lengthMs);
    const current = leases[kind];
    if (current?.start === start) return current;
    const fresh = new Lease(agencyId, extensionId, kind, start);
    // A late call from the previous window must not evict the current window's lease.
    if (!current || current.start < start) leases[kind] = fresh;
    return fresh;
  }

  private async topUp({ lease, limit, units }: Demand, nowMs: number): Promise<void> {
    if (lease.local >= units || lease.available(limit) < units) return;
    await this.reservation(lease, limit, units - lease.local, nowMs);
  }

  private refillAhead({ lease, limit }: Demand, nowMs: number): void {
    if (lease.reserving) return;
    const target = lease.target(limit);
    if (target < REFILL_AHEAD_MIN_LEASE || lease.local > target / 2) return;
    // Nobody waits for it; a failure shows on the next call that needs the units and reserves again.
    this.reservation(lease, limit, 1, nowMs).catch(() => {});
  }

  /** One reservation per counter at a time: the others wait for it and then look again, so none over-reserves. */
  private reservation(lease: Lease, limit: number, needed: number, nowMs: number): Promise<void> {
    lease.reserving ??= this.reserve(lease, limit, needed, nowMs).finally(() => {
      lease.reserving = undefined;
    });
    return lease.reserving;
  }

  /**
   * Takes from the shared counter, in one statement, `needed` units or what brings the lease to its target if that is
   * more, or learns that fewer than `needed` are left. Written as SQL text: at a few calls per second V8 never optimizes
   * the path, and there Kysely's builder took 100 to 350 µs to build this upsert, the text 10 to 20 µs.
   */
  private async reserve(lease: Lease, limit: number, needed: number, nowMs: number): Promise<void> {
    lease.grow(nowMs);
    const size = Math.max(needed, lease.target(limit) - lease.local);
    const grant = sql`least(${size}::int, ${limit}::int - w.used)`;
    const { rows } = await sql<Pick<UsageWindowsTable, 'used' | 'last_grant'>>`
      insert into usage_windows as w (agency_id, extension_id, kind, window_start, used, last_grant)
      values (${lease.agencyId}, ${lease.extensionId}, ${lease.kind}, ${new Date(lease.start)}, ${size}, ${size})
      on conflict (agency_id, extension_id, kind, window_start)
        do update set used = w.used + ${grant}, last_grant = ${grant} where ${limit}::int - w.used >= ${needed}
      returning used, last_grant`.execute(this.db);
    const [row] = rows;
    if (row) {
      lease.local += row.last_grant;
      lease.sharedUsed = row.used;
    } else {
      lease.sharedUsed = Math.max(lease.sharedUsed, limit - needed + 1);
    }
  }
}

/**
 * Subtracts each lease's unspent units from its counter in one statement. The rows are locked in key order first, so
 * instances that shut down together and list the same integrations in other orders cannot deadlock.
 */
async function handBack(db: Kysely<DB>, leases: Lease[], units: number[]): Promise<void> {
  const agencyIds = leases.map((lease) => lease.agencyId);
  const extensionIds = leases.map((lease) => lease.extensionId);
  const kinds = leases.map((lease) => lease.kind);
  const starts = leases.map((lease) => new Date(lease.start).toISOString());
  await sql`
    with returned as materialized (
      select w.agency_id, w.extension_id, w.kind, w.window_start, r.units
      from unnest(${agencyIds}::text[], ${extensionIds}::text[], ${kinds}::text[], ${starts}::timestamptz[], ${units}::int[])
        as r(agency_id, extension_id, kind, window_start, units)
      join usage_windows as w using (agency_id, extension_id, kind, window_start)
      order by w.agency_id, w.extension_id, w.kind, w.window_start
      for update of w)
    update usage_windows as w set used = w.used - returned.units
    from returned
    where (w.agency_id, w.extension_id, w.kind, w.window_start) = (returned.agency_id, returned.extension_id, returned.kind, returned.window_start)`.execute(
    db,
  );
}

/** Housekeeping: deletes the shared counters of windows that started before `before`; returns how many. */
export async function purgeUsageWindows(db: Kysely<DB>, before: Date): Promise<number> {
  const result = await db.deleteFrom('usage_windows').where('window_start', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
