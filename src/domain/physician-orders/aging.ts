import type { SignatureStatus } from '../../resources/physician-orders/physician-order-tables.js';

/**
 * Signature aging of physician orders: how long an order has waited for the physician, counted as of an
 * instant (`meta.as_of`).
 *
 * Whole days are calendar days in the time zone of the order's office: an order sent on Monday at 16:00 is 0 days
 * outstanding until midnight, then 1 on Tuesday, however many hours that is (23 or 25 across a daylight-saving
 * change). Agencies and physicians count turnaround on the office's wall calendar; UTC days would turn over at 19:00
 * or 20:00 in New York, and an order sent in the evening would age a day overnight.
 */

export type AgingBucket = 'not_sent' | '0_7_days' | '8_14_days' | '15_30_days' | '31_plus_days';
type DayBucket = Exclude<AgingBucket, 'not_sent'>;

/** Buckets of sent, unsigned orders by whole days outstanding, both bounds included; the last has no upper bound. */
export const DAY_BUCKETS: readonly { bucket: DayBucket; from: number; to: number | null }[] = [
  { bucket: '0_7_days', from: 0, to: 7 },
  { bucket: '8_14_days', from: 8, to: 14 },
  { bucket: '15_30_days', from: 15, to: 30 },
  { bucket: '31_plus_days', from: 31, to: null },
];

export const AGING_BUCKETS: readonly AgingBucket[] = ['not_sent', ...DAY_BUCKETS.map((b) => b.bucket)];

/** The only status that ages: signed, not required, rejected, superseded and cancelled orders wait for nobody. */
export const AWAITING: SignatureStatus = 'awaiting_signature';

interface OrderDates {
  signature_status: SignatureStatus;
  sent_at: Date | null;
  signed_at: Date | null;
}

export interface AgingClock {
  asOf: Date;
  /** IANA zone of the order's office. */
  timeZone: string;
  /** The agency's signature SLA. */
  slaDays: number;
}

interface Aging {
  days_outstanding: number | null;
  aging_bucket: AgingBucket | null;
  sla_breached: boolean;
  days_to_sign: number | null;
}

const DAY_MS = 86_400_000;
const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** The calendar day of an instant in a zone, as days since 1970-01-01. */
export function localDayNumber(instant: Date, timeZone: string): number {
  let format = dayFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: 'numeric', day: 'numeric' });
    dayFormats.set(timeZone, format);
  }
  const parts = format.formatToParts(instant);
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return Date.UTC(part('year'), part('month') - 1, part('day')) / DAY_MS;
}

/** Midnights crossed from `from` to `to` on the zone's wall calendar. */
export function wholeDays(from: Date, to: Date, timeZone: string): number {
  return localDayNumber(to, timeZone) - localDayNumber(from, timeZone);
}

export function bucketOfDays(days: number): DayBucket {
  return DAY_BUCKETS.find((b) => days >= b.from && (b.to === null || days <= b.to))!.bucket;
}

/**
 * Aging at `clock.asOf`. as_of moves the clock, not the record: status and dates are the order's current ones, but an
 * order sent after as_of was not yet sent then (`not_sent`, no days outstanding).
 */
export function orderAging(order: OrderDates, clock: AgingClock): Aging {
  const { sent_at: sent, signed_at: signed } = order;
  const daysToSign =
    order.signature_status === 'signed' && sent && signed ? wholeDays(sent, signed, clock.timeZone) : null;
  if (order.signature_status !== AWAITING) {
    return {
      days_outstanding: null,
      aging_bucket: null,
      sla_breached: daysToSign !== null && daysToSign > clock.slaDays,
      days_to_sign: daysToSign,
    };
  }
  if (!sent || sent > clock.asOf)
    return { days_outstanding: null, aging_bucket: 'not_sent', sla_breached: false, days_to_sign: null };
  const days = wholeDays(sent, clock.asOf, clock.timeZone);
  return {
    days_outstanding: days,
    aging_bucket: bucketOfDays(days),
    sla_breached: days > clock.slaDays,
    days_to_sign: null,
  };
}
