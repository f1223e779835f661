import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { PlatformError } from '../shared/platform-error.js';
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

/** What the counters said before an attempt's secret was checked. */
export interface Admission {
  source: FailureSource;
  /** Its client id has used up its failures: a failure is answered 429, and one that needs no hash to tell is spared it. */
  clientLimited: boolean;
}

/**
 * The stricter limit of the token endpoint: failed attempts per remote address and per client id.
 * An address over its limit is refused before the secret is checked, sparing the hash; that holds back only that
 * address (the client's own one behind a trusted proxy, see TRUST_PROXY). A client id is in every access token, so
 * anyone can spend its failures: over its limit, its failures are answered 429 instead of 401, but its right secret is
 * still accepted, and does not clear the count (the guesser's failures are not forgiven by the real client's success).
 */
export class TokenFailureLimiter {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly limits: FailureLimits = TOKEN_FAILURE_LIMITS,
  ) {}

  /** Refuses with 429 while the address has used up its failures of the last window; tells whether the client has. */
  async admit(source: FailureSource): Promise<Admission> {
    const now = Date.now();
    const { address, client } = await this.allowedAgainAt(source);
    if (address > now) throw refusal(address, now, 'from this address.');
    return { source, clientLimited: client > now };
  }

  /** Counts a failed attempt; returns the 429 to answer instead of 401 when its client was over the limit already. */
  async recordFailure({ source, clientLimited }: Admission): Promise<PlatformError | undefined> {
    await this.record(source);
    if (!clientLimited) return undefined;
    // Read again, so that Retry-After counts this failure and any made meanwhile.
    const { client } = await this.allowedAgainAt(source);
    return refusal(client, Date.now(), 'for this client_id (its right secret is still accepted).');
  }

  private async record(source: FailureSource): Promise<void> {
    const now = Date.now();
    await this.db
      .insertInto('token_failures')
      .values(this.buckets(source).map(({ bucket }) => ({ bucket, window_start: new Date(now - (now % SLOT_MS)), count: 1 })))
      .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet({ count: sql`token_failures.count + 1` }))
      .execute();
    await this.db.deleteFrom('token_failures').where('window_start', '<=', this.windowStart(now)).execute();
  }

  /** For the address and the client: when each falls below its limit (0: it is below already, or no client id was sent). */
  private async allowedAgainAt(source: FailureSource): Promise<{ address: number; client: number }> {
    const buckets = this.buckets(source);
    const rows = await this.db
      .selectFrom('token_failures')
      .select(['bucket', 'window_start', 'count'])
      .where('window_start', '>', this.windowStart(Date.now()))
      .where('bucket', 'in', buckets.map((b) => b.bucket))
      .orderBy('window_start', 'desc')
      .execute();
    const [address, client = 0] = buckets.map((b) => this.bucketAllowedAgainAt(b, rows.filter((row) => row.bucket === b.bucket)));
    return { address, client };
  }

  /**
   * When the bucket falls below its limit: once the newest minute that still brings it to the limit, counting from the
   * newest (`minutes` come newest first), has left the window; 0 when it is below already.
   */
  private bucketAllowedAgainAt(bucket: Bucket, minutes: { window_start: Date; count: number }[]): number {
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

  /** The address's bucket, then the client's when a client id was sent. */
  private buckets(source: FailureSource): Bucket[] {
    const buckets = [{ bucket: `address:${source.remoteAddress}`, limit: this.limits.perAddress }];
    if (source.clientId !== undefined) buckets.push({ bucket: `client:${source.clientId.slice(0, MAX_BUCKET_ID)}`, limit: this.limits.perClient });
    return buckets;
  }
}

function refusal(allowedAgain: number, now: number, whose: string): PlatformError {
  const retryAfter = Math.max(1, Math.ceil((allowedAgain - now) / 1000));
  return new PlatformError(
    'PLATFORM_RATE_LIMITED',
    `Too many failed token requests ${whose} Retry after ${retryAfter} seconds.`,
    { retry_after_seconds: retryAfter },
    { 'retry-after': String(retryAfter) },
  );
}
