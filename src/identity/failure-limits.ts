import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { PlatformError } from '../shared/platform-error.js';

export interface FailureLimits {
  /** Failures of one subject (a client id, an account). */
  perSubject: number;
  perAddress: number;
  windowSeconds: number;
}

/**
 * What a limiter counts and says: its rows are `<kind>:<key>` in token_failures (kinds of letters and dashes), and its
 * refusals are "<what> from this address." or "<what> <subject>".
 */
interface FailurePolicy {
  limits: FailureLimits;
  kinds: { address: string; subject: string };
  refusals: { what: string; subject: string };
}

/**
 * Failures are counted in one-minute rows and summed over the window's last rows. A fixed window would
 * let a guesser spend twice the limit across its edge, and forget failures made just before the edge.
 */
const SLOT_MS = 60_000;

export interface FailureSource {
  /** As sent, possibly unknown; absent when none was sent. */
  subject?: string;
  remoteAddress: string;
}

interface Bucket {
  bucket: string;
  limit: number;
}

interface BucketState {
  /** In the window. */
  failures: number;
  /** When it falls below its limit; 0 when it is below already. */
  allowedAgainAt: number;
}

// Subjects are short; a longer one is bogus and needs no more than a prefix to be counted.
const MAX_BUCKET_ID = 128;

/** What the counters said before an attempt's secret was checked. */
export interface Admission {
  source: FailureSource;
  /** Its subject has used up its failures: a failure is answered 429. */
  subjectLimited: boolean;
  /** The address has failed within the window. */
  addressFailed: boolean;
}

/**
 * Failed attempts per remote address and per subject over a rolling window, counted in the database so every instance
 * sees them. An address over its limit is refused before the secret is checked, sparing the hash; that holds back only
 * that address (the client's own one behind a trusted proxy, see TRUST_PROXY). A subject can be named by anyone, so
 * its limit only turns its further failures into 429s, and the right secret does not clear the count (the guesser's
 * failures are not forgiven by the real owner's success); what else it refuses is the caller's choice.
 */
export class FailureLimiter {
  private readonly limits: FailureLimits;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly policy: FailurePolicy,
  ) {
    this.limits = policy.limits;
  }

  /** Refuses with 429 while the address has used up its failures of the last window. */
  async admit(source: FailureSource): Promise<Admission> {
    const now = Date.now();
    const [address, subject] = await this.states(source);
    if (address.allowedAgainAt > now) throw this.refusal(address.allowedAgainAt, now, 'from this address.');
    return { source, subjectLimited: subject.allowedAgainAt > now, addressFailed: address.failures > 0 };
  }

  /** The 429 for an attempt refused because its subject is over its limit. */
  async subjectRefusal(source: FailureSource): Promise<PlatformError> {
    // Read again, so that Retry-After counts the failures made meanwhile.
    const [, subject] = await this.states(source);
    return this.refusal(subject.allowedAgainAt, Date.now(), this.policy.refusals.subject);
  }

  /** Counts a failed attempt; returns the 429 to answer instead of 401 when its subject was over the limit already. */
  async recordFailure({ source, subjectLimited }: Admission): Promise<PlatformError | undefined> {
    await this.record(source);
    return subjectLimited ? this.subjectRefusal(source) : undefined;
  }

  private async record(source: FailureSource): Promise<void> {
    const now = Date.now();
    await this.db
      .insertInto('token_failures')
      .values(
        this.buckets(source).map(({ bucket }) => ({ bucket, window_start: new Date(now - (now % SLOT_MS)), count: 1 })),
      )
      .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet({ count: sql`token_failures.count + 1` }))
      .execute();
    // Only this limiter's kinds: another's window may be longer.
    const { address, subject } = this.policy.kinds;
    await this.db
      .deleteFrom('token_failures')
      .where('window_start', '<=', this.windowStart(now))
      .where((eb) => eb.or([eb('bucket', 'like', `${address}:%`), eb('bucket', 'like', `${subject}:%`)]))
      .execute();
  }

  /** The address's state, then the subject's (below its limit when none was sent). */
  private async states(source: FailureSource): Promise<[BucketState, BucketState]> {
    const buckets = this.buckets(source);
    const rows = await this.db
      .selectFrom('token_failures')
      .select(['bucket', 'window_start', 'count'])
      .where('window_start', '>', this.windowStart(Date.now()))
      .where(
        'bucket',
        'in',
        buckets.map((b) => b.bucket),
      )
      .orderBy('window_start', 'desc')
      .execute();
    const [address, subject = { failures: 0, allowedAgainAt: 0 }] = buckets.map((b) =>
      this.state(
        b,
        rows.filter((row) => row.bucket === b.bucket),
      ),
    );
    return [address, subject];
  }

  /**
   * Its failures, and when it falls below its limit: once the newest minute that still brings it to the limit, counting
   * from the newest (`minutes` come newest first), has left the window.
   */
  private state(bucket: Bucket, minutes: { window_start: Date; count: number }[]): BucketState {
    let failures = 0;
    let allowedAgainAt = 0;
    for (const minute of minutes) {
      failures += minute.count;
      if (failures >= bucket.limit && allowedAgainAt === 0)
        allowedAgainAt = minute.window_start.getTime() + this.limits.windowSeconds * 1000;
    }
    return { failures, allowedAgainAt };
  }

  /** Rows that started at or before the window's start have left it. */
  private windowStart(now: number): Date {
    return new Date(now - this.limits.windowSeconds * 1000);
  }

  /** The address's bucket, then the subject's when one was sent. */
  private buckets(source: FailureSource): Bucket[] {
    const { kinds } = this.policy;
    const buckets = [{ bucket: `${kinds.address}:${source.remoteAddress}`, limit: this.limits.perAddress }];
    if (source.subject !== undefined)
      buckets.push({
        bucket: `${kinds.subject}:${source.subject.slice(0, MAX_BUCKET_ID)}`,
        limit: this.limits.perSubject,
      });
    return buckets;
  }

  private refusal(allowedAgain: number, now: number, whose: string): PlatformError {
    const retryAfter = Math.max(1, Math.ceil((allowedAgain - now) / 1000));
    return new PlatformError(
      'PLATFORM_RATE_LIMITED',
      `${this.policy.refusals.what} ${whose} Retry after ${retryAfter} seconds.`,
      { retry_after_seconds: retryAfter },
      { 'retry-after': String(retryAfter) },
    );
  }
}
