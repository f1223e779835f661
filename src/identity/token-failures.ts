import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { PlatformError } from '../errors/platform-error.js';

export interface FailureLimits {
  perClient: number;
  perAddress: number;
  windowSeconds: number;
}

/** Failed token requests allowed per fixed window, counted in the database so every instance sees them. */
export const TOKEN_FAILURE_LIMITS: FailureLimits = { perClient: 10, perAddress: 50, windowSeconds: 300 };

export interface FailureSource {
  /** As sent, possibly unknown; absent when no client authentication was sent. */
  clientId?: string;
  remoteAddress: string;
}

// Client ids are short; a longer one is bogus and needs no more than a prefix to be counted.
const MAX_BUCKET_ID = 128;

/** The stricter limit of the token endpoint: failed attempts per client id and per remote address. */
export class TokenFailureLimiter {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly limits: FailureLimits = TOKEN_FAILURE_LIMITS,
  ) {}

  /** Refuses with 429 while the client or the address has used up its failures of the current window. */
  async assertAllowed(source: FailureSource): Promise<void> {
    const windowStart = this.windowStart();
    const buckets = this.buckets(source);
    const rows = await this.db
      .selectFrom('token_failures')
      .select(['bucket', 'count'])
      .where('window_start', '=', windowStart)
      .where('bucket', 'in', buckets.map((b) => b.bucket))
      .execute();
    const exceeded = rows.some((row) => row.count >= buckets.find((b) => b.bucket === row.bucket)!.limit);
    if (!exceeded) return;
    const retryAfter = Math.max(1, Math.ceil((windowStart.getTime() + this.limits.windowSeconds * 1000 - Date.now()) / 1000));
    throw new PlatformError(
      'PLATFORM_RATE_LIMITED',
      `Too many failed token requests for this client or from this address; retry after ${retryAfter} seconds.`,
      { retry_after_seconds: retryAfter },
      { 'retry-after': String(retryAfter) },
    );
  }

  async record(source: FailureSource): Promise<void> {
    const windowStart = this.windowStart();
    await this.db
      .insertInto('token_failures')
      .values(this.buckets(source).map(({ bucket }) => ({ bucket, window_start: windowStart, count: 1 })))
      .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet({ count: sql`token_failures.count + 1` }))
      .execute();
    await this.db.deleteFrom('token_failures').where('window_start', '<', new Date(windowStart.getTime() - this.limits.windowSeconds * 1000)).execute();
  }

  private buckets(source: FailureSource): { bucket: string; limit: number }[] {
    const buckets = [{ bucket: `address:${source.remoteAddress}`, limit: this.limits.perAddress }];
    if (source.clientId !== undefined) buckets.push({ bucket: `client:${source.clientId.slice(0, MAX_BUCKET_ID)}`, limit: this.limits.perClient });
    return buckets;
  }

  private windowStart(): Date {
    const windowMs = this.limits.windowSeconds * 1000;
    return new Date(Math.floor(Date.now() / windowMs) * windowMs);
  }
}
