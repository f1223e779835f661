import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { PlatformError } from '../errors/platform-error.js';
import { tokenFailureLimits } from '../generated/contract.js';

export interface FailureLimits {
  perClient: number;
  perAddress: number;
  windowSeconds: number;
}

/** Failed token requests allowed over a rolling window (the contract's x-svc-token-failure-limits), counted in the database so every instance sees them. */
export const TOKEN_FAILURE_LIMITS: FailureLimits = {
  perClient: tokenFailureLimits.per_client,
  perAddress: tokenFailureLimits.per_address,
  windowSeconds: tokenFailureLimits.window_seconds,
};

/**
 * Failures are counted in one-minute rows and summed over the window's last rows. A fixed window would
 * let a guesser spend twice the limit across its edge, and forget failures made just before the edge.
 */
const SLOT_MS = 60_000;

export interface FailureSource {
  /** As sent, possibly unknown; absent when no client authentication was sent. */
  clientId?: string;
  remoteAddress: string;
}

interface Bucket {
  bucket: string;
  limit: number;
}

// Client ids are short; a longer one is bogus and needs no more than a prefix to be counted.
const MAX_BUCKET_ID = 128;

/** The stricter limit of the token endpoint: failed attempts per client id and per remote address. */
export class TokenFailureLimiter {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly limits: FailureLimits = TOKEN_FAILURE_LIMITS,
  ) {}

  /** Refuses with 429 while the client or the address has used up its failures of the last window. */
  async assertAllowed(source: FailureSource): Promise<void> {
    const now = Date.now();
    const buckets = this.buckets(source);
    const rows = await this.db
      .selectFrom('token_failures')
      .select(['bucket', 'window_start', 'count'])
      .where('window_start', '>', this.windowStart(now))
      .where('bucket', 'in', buckets.map((b) => b.bucket))
      .orderBy('window_start', 'desc')
      .execute();
    const allowedAgain = Math.max(...buckets.map((b) => this.allowedAgainAt(b, rows.filter((row) => row.bucket === b.bucket))));
    if (allowedAgain <= now) return;
    const retryAfter = Math.max(1, Math.ceil((allowedAgain - now) / 1000));
    throw new PlatformError(
      'PLATFORM_RATE_LIMITED',
      `Too many failed token requests for this client or from this address; retry after ${retryAfter} seconds.`,
      { retry_after_seconds: retryAfter },
      { 'retry-after': String(retryAfter) },
    );
  }

  async record(source: FailureSource): Promise<void> {
    const now = Date.now();
    await this.db
      .insertInto('token_failures')
      .values(this.buckets(source).map(({ bucket }) => ({ bucket, window_start: new Date(now - (now % SLOT_MS)), count: 1 })))
      .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet({ count: sql`token_failures.count + 1` }))
      .execute();
    await this.db.deleteFrom('token_failures').where('window_start', '<=', this.windowStart(now)).execute();
  }

  /**
   * When the bucket falls below its limit: once the newest minute that still brings it to the limit, counting from the
   * newest (`minutes` come newest first), has left the window; 0 when it is below already.
   */
  private allowedAgainAt(bucket: Bucket, minutes: { window_start: Date; count: number }[]): number {
    let newer = 0;
    for (const minute of minutes) {
      newer += minute.count;
      if (newer >= bucket.limit) return minute.window_start.getTime() + this.limits.windowSeconds * 1000;
    }
    return 0;
  }

  /** Rows that started at or before the window's start have left it. */
  private windowStart(now: number): Date {
    return new Date(now - this.limits.windowSeconds * 1000);
  }

  private buckets(source: FailureSource): Bucket[] {
    const buckets = [{ bucket: `address:${source.remoteAddress}`, limit: this.limits.perAddress }];
    if (source.clientId !== undefined) buckets.push({ bucket: `client:${source.clientId.slice(0, MAX_BUCKET_ID)}`, limit: this.limits.perClient });
    return buckets;
  }
}
