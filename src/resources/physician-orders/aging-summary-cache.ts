import type { AgingBucket } from '../../domain/physician-orders/aging.js';
import { BoundedMap } from '../../identity/bounded-map.js';

export type AgingSummary = Record<AgingBucket | 'sla_breached', number>;

/**
 * A summary as counted, and what it stays true for. It holds exactly while the agency's order revision is the one read
 * in the counting statement and as_of lies in [validFrom, validUntil): the instants that share, in every office of the
 * agency, the calendar day of the counted as_of (each bucket bound and the SLA bound is a start of such a day), and
 * between which no awaiting order was sent (being sent by as_of is what moves an order out of not_sent).
 */
export interface CountedSummary {
  summary: AgingSummary;
  /** Null while the agency has no revision row: no order was ever written for it, so it has none to count. */
  revision: string | null;
  validFrom: Date;
  validUntil: Date;
}

/** Filter sets kept at once, across agencies; past it the longest-kept is counted again when next asked. */
const KEPT = 1_000;

/**
 * The aging summaries of recent filter sets, per agency: counting one reads every awaiting order of the agency (tens of
 * milliseconds on a 100,000-patient agency, on every page), while orders change a few times an hour.
 *
 * Why a kept summary stays right:
 * - Concurrent writes: every transaction that writes an agency's orders (or an office's time zone, or its SLA) also
 *   writes the agency's revision, a fresh random value, in the same transaction (the triggers of
 *   db/migrations/0029_physician_order_revisions.ts), so commits that change what the summary counts are exactly
 *   those that change the revision. The summary and its revision are read in one statement, hence one snapshot; a
 *   later request that reads the same revision sees the same committed orders, whichever process, connection or
 *   replica wrote or reads them. A write still uncommitted is invisible to both, as it is to a fresh count.
 * - Midnights: the validity window ends at the first midnight after as_of in any of the agency's offices, in that
 *   office's zone, computed by the database with the same conversion the aging bounds use, so a DST day (23 or 25
 *   hours) ends where the buckets turn; an as_of past it counts again.
 */
export class AgingSummaryCache {
  private readonly kept = new BoundedMap<CountedSummary>(KEPT);

  /** The kept summary of `key` if it holds for this revision at `asOf`. */
  find(key: string, revision: string | null, asOf: Date): AgingSummary | undefined {
    const counted = this.kept.get(key);
    if (!counted || counted.revision !== revision || asOf < counted.validFrom || asOf >= counted.validUntil)
      return undefined;
    return counted.summary;
  }

  keep(key: string, counted: CountedSummary): void {
    this.kept.set(key, counted);
  }
}
