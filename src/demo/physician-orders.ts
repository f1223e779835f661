import type { DeliveryMethod, OrderType } from '../resources/physician-orders/physician-order-tables.js';
import { addDays, addMinutes, dayStart, isoDay, laterThan, zonedTime } from './calendar.js';
import type { Chart, ChartContext } from './charts.js';
import type { Draft } from './drafts.js';
import type { Random, Weights } from './random.js';

/** Orders are generated for the care given in the last 120 days. */
const WINDOW_DAYS = 120;
/** Certification periods: a new plan of care is certified every 60 days in home health, each benefit period in hospice. */
const RECERTIFY_EVERY: Partial<Record<Chart['line'], number>> = { home_health: 60, hospice: 90 };
/** Verbal and supplemental orders per 30 days on service, at most. */
const CHANGES_PER_MONTH = 2;

type Outcome = 'signed' | 'rejected' | 'superseded';
/** What happens to an order once created: most go out and come back; a few never need a signature, or are withdrawn. */
const FATE: Weights<'sent' | 'held' | 'signature_not_required' | 'cancelled'> = {
  sent: 90,
  held: 1,
  signature_not_required: 5,
  cancelled: 4,
};
const DELIVERY: Weights<DeliveryMethod> = { fax: 45, portal: 30, e_signature: 25 };
/** Days until the physician answers: most within the week, some late, a few never. */
const ANSWER_DAYS: Weights<'days_0_3' | 'days_4_7' | 'days_8_14' | 'days_15_30' | 'days_31_60' | 'never'> = {
  days_0_3: 40,
  days_4_7: 28,
  days_8_14: 14,
  days_15_30: 8,
  days_31_60: 3,
  never: 7,
};
const ANSWER_RANGE: Record<Exclude<keyof typeof ANSWER_DAYS, 'never'>, [number, number]> = {
  days_0_3: [0, 3],
  days_4_7: [4, 7],
  days_8_14: [8, 14],
  days_15_30: [15, 30],
  days_31_60: [31, 60],
};
const OUTCOME: Weights<Outcome> = { signed: 90, rejected: 5, superseded: 5 };

interface OrderEvent {
  type: OrderType;
  on: Date;
}

/**
 * The chart's physician orders over the last 120 days: plan of care and face-to-face at start of care, recertifications,
 * verbal and supplemental orders along the way, the discharge order. Drawn from a generator of the chart's own, so the
 * rest of the demo agency is the same with or without them.
 */
export function buildPhysicianOrders(ctx: ChartContext, chart: Chart): Draft<'physician_orders'>[] {
  const { admittedOn, endedOn } = chart.timeline;
  if (!admittedOn || chart.status === 'pending_admission') return [];
  const windowStart = addDays(ctx.now, -WINDOW_DAYS);
  const end = endedOn ? addDays(dayStart(endedOn), 1) : ctx.now;
  if (end < windowStart) return [];
  const rng = ctx.rng.derive(`physician-orders:${chart.patient.mrn}`);
  const physicianId = chart.patient.primary_physician_id ?? rng.pick(ctx.reference.physicians).id;
  const timeZone = ctx.area.timezoneOf.get(chart.place.officeId) ?? 'UTC';
  return orderEvents(rng, chart, dayStart(admittedOn), end)
    .map((event) => ({ ...event, on: zonedTime(isoDay(event.on), rng.int(8 * 60, 17 * 60), timeZone) }))
    .filter((event) => event.on >= windowStart && event.on < ctx.now)
    .map((event) =>
      order(rng, ctx.now, event, {
        patient_id: chart.patient.id,
        physician_id: physicianId,
        office_id: chart.place.officeId,
      }),
    );
}

function orderEvents(rng: Random, chart: Chart, start: Date, end: Date): OrderEvent[] {
  const events: OrderEvent[] = [];
  const period = RECERTIFY_EVERY[chart.line];
  if (period) {
    events.push({ type: 'plan_of_care', on: start });
    for (let on = addDays(start, period); on < end; on = addDays(on, period))
      events.push({ type: 'recertification', on });
  }
  if (chart.line === 'home_health') events.push({ type: 'face_to_face', on: start });
  const days = (end.getTime() - start.getTime()) / 86_400_000;
  const changes = rng.int(0, Math.ceil((days / 30) * CHANGES_PER_MONTH));
  for (let n = 0; n < changes; n++)
    events.push({ type: rng.chance(0.6) ? 'verbal' : 'supplemental', on: laterThan(rng, start, end) });
  if (chart.status === 'discharged' && chart.timeline.endedOn)
    events.push({ type: 'discharge', on: dayStart(chart.timeline.endedOn) });
  return events;
}

type Parties = Pick<Draft<'physician_orders'>, 'patient_id' | 'physician_id' | 'office_id'>;

function order(rng: Random, now: Date, event: OrderEvent, parties: Parties): Draft<'physician_orders'> {
  const created_at = event.on;
  const base = { id: rng.id('ord'), ...parties, order_type: event.type, created_at };
  const fate = rng.weighted(FATE);
  const sentAt = addMinutes(created_at, rng.int(10, 3 * 1440));
  const sent = fate === 'sent' || (fate === 'cancelled' && rng.chance(0.5)) ? sentAt : null;
  const sending =
    sent && sent < now
      ? { sent_at: sent, delivery_method: rng.weighted(DELIVERY) }
      : { sent_at: null, delivery_method: null };
  const unsigned = { ...base, ...sending, signed_at: null, received_at: null };
  if (fate === 'signature_not_required' || fate === 'cancelled')
    return { ...unsigned, signature_status: fate, updated_at: laterThan(rng, sending.sent_at ?? created_at, now) };
  const answer = rng.weighted(ANSWER_DAYS);
  if (!sending.sent_at || answer === 'never')
    return { ...unsigned, signature_status: 'awaiting_signature', updated_at: sending.sent_at ?? created_at };
  const answeredAt = addMinutes(sending.sent_at, rng.int(...ANSWER_RANGE[answer]) * 1440 + rng.int(0, 600));
  if (answeredAt >= now) return { ...unsigned, signature_status: 'awaiting_signature', updated_at: sending.sent_at };
  const outcome = rng.weighted(OUTCOME);
  if (outcome !== 'signed') return { ...unsigned, signature_status: outcome, updated_at: answeredAt };
  const receivedAt = addMinutes(answeredAt, rng.int(5, 2 * 1440));
  const received_at = receivedAt < now ? receivedAt : null;
  return {
    ...unsigned,
    signature_status: 'signed',
    signed_at: answeredAt,
    received_at,
    updated_at: received_at ?? answeredAt,
  };
}
