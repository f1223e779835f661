import t from 'tap';
import {
  AGING_BUCKETS,
  bucketOfDays,
  localDayNumber,
  orderAging,
  wholeDays,
  type AgingClock,
} from '../../../src/domain/physician-orders/aging.js';

const NEW_YORK = 'America/New_York';
const clock = (asOf: string, slaDays = 7, timeZone = NEW_YORK): AgingClock => ({
  asOf: new Date(asOf),
  timeZone,
  slaDays,
});
const awaiting = (sent: string | null) => ({
  signature_status: 'awaiting_signature' as const,
  sent_at: sent === null ? null : new Date(sent),
  signed_at: null,
});

t.test('whole days are midnights crossed on the office calendar', async (t) => {
  // Sent Monday 2026-11-16 at 16:00 in New York (21:00Z).
  const sent = new Date('2026-11-16T21:00:00Z');
  t.equal(
    wholeDays(sent, new Date('2026-11-17T04:59:00Z'), NEW_YORK),
    0,
    '23:59 the same evening in New York, though the next day in UTC',
  );
  t.equal(wholeDays(sent, new Date('2026-11-17T05:00:00Z'), NEW_YORK), 1, 'local midnight: one day, after 8 hours');
  t.equal(wholeDays(sent, new Date('2026-11-17T05:00:00Z'), 'UTC'), 1, 'in UTC the day turned at 00:00Z already');
  t.equal(wholeDays(sent, new Date('2026-11-17T04:59:00Z'), 'UTC'), 1);
  t.equal(wholeDays(sent, new Date('2026-11-24T04:59:00Z'), NEW_YORK), 7, 'Monday to the next Monday');
  t.equal(localDayNumber(new Date('1970-01-02T04:59:00Z'), NEW_YORK), 0, 'January 1, 1970 in New York is day 0');
});

t.test('a day across a daylight-saving change is 23 or 25 hours long', async (t) => {
  // Clocks went forward in New York on 2026-03-08 at 02:00 (EST -5 to EDT -4).
  const sentSaturdayNight = new Date('2026-03-08T04:30:00Z'); // Saturday 2026-03-07 23:30 EST
  t.equal(
    wholeDays(sentSaturdayNight, new Date('2026-03-09T03:59:00Z'), NEW_YORK),
    1,
    'Sunday 23:59 EDT: 23.5 hours later, one day',
  );
  t.equal(
    wholeDays(sentSaturdayNight, new Date('2026-03-09T04:00:00Z'), NEW_YORK),
    2,
    'Monday 00:00 EDT: 23.5 hours after sending, two days',
  );
  t.equal(wholeDays(sentSaturdayNight, new Date('2026-03-09T04:00:00Z'), 'UTC'), 1, 'UTC would say one');
  // Clocks went back on 2026-11-01 at 02:00 (EDT -4 to EST -5): Sunday lasted 25 hours.
  const sentSundayStart = new Date('2026-11-01T04:00:00Z'); // Sunday 00:00 EDT
  t.equal(
    wholeDays(sentSundayStart, new Date('2026-11-02T04:59:00Z'), NEW_YORK),
    0,
    'Sunday 23:59 EST, 24h59 later: still the same day',
  );
  t.equal(
    wholeDays(sentSundayStart, new Date('2026-11-02T05:00:00Z'), NEW_YORK),
    1,
    'Monday 00:00 EST, 25 hours later',
  );
});

t.test('bucket edges: 7 | 8, 14 | 15, 30 | 31', async (t) => {
  const cases: [number, string][] = [
    [0, '0_7_days'],
    [7, '0_7_days'],
    [8, '8_14_days'],
    [14, '8_14_days'],
    [15, '15_30_days'],
    [30, '15_30_days'],
    [31, '31_plus_days'],
    [400, '31_plus_days'],
  ];
  for (const [days, bucket] of cases) t.equal(bucketOfDays(days), bucket, `${days} days`);
  t.same(AGING_BUCKETS, ['not_sent', '0_7_days', '8_14_days', '15_30_days', '31_plus_days']);
});

t.test('an awaiting order ages from the day it was sent', async (t) => {
  // Sent Tuesday 2026-10-06 at 10:00 EDT; the SLA is 7 days.
  const order = awaiting('2026-10-06T14:00:00Z');
  t.same(
    orderAging(order, clock('2026-10-13T23:00:00Z')),
    { days_outstanding: 7, aging_bucket: '0_7_days', sla_breached: false, days_to_sign: null },
    'day 7: within the SLA',
  );
  t.same(
    orderAging(order, clock('2026-10-14T04:00:00Z')),
    { days_outstanding: 8, aging_bucket: '8_14_days', sla_breached: true, days_to_sign: null },
    'midnight EDT: day 8, past the SLA',
  );
  t.same(
    orderAging(order, clock('2026-10-14T04:00:00Z', 8)),
    { days_outstanding: 8, aging_bucket: '8_14_days', sla_breached: false, days_to_sign: null },
    'an 8-day SLA is met on day 8',
  );
  t.same(orderAging(order, clock('2026-11-05T03:59:00Z')), {
    days_outstanding: 29,
    aging_bucket: '15_30_days',
    sla_breached: true,
    days_to_sign: null,
  });
  t.same(orderAging(order, clock('2026-11-07T04:00:00Z')), {
    days_outstanding: 31,
    aging_bucket: '31_plus_days',
    sla_breached: true,
    days_to_sign: null,
  });
  t.same(
    orderAging(order, clock('2026-10-06T14:00:00Z', 0)),
    { days_outstanding: 0, aging_bucket: '0_7_days', sla_breached: false, days_to_sign: null },
    'a 0-day SLA: same day is on time',
  );
});

t.test('an order not sent (or sent after as_of) is not_sent, with no days and no breach', async (t) => {
  t.same(orderAging(awaiting(null), clock('2026-11-16T19:00:00Z')), {
    days_outstanding: null,
    aging_bucket: 'not_sent',
    sla_breached: false,
    days_to_sign: null,
  });
  const sentLater = awaiting('2026-11-10T15:00:00Z');
  t.equal(
    orderAging(sentLater, clock('2026-11-10T14:59:59Z')).aging_bucket,
    'not_sent',
    'as_of a second before it was sent',
  );
  t.match(
    orderAging(sentLater, clock('2026-11-10T15:00:00Z')),
    { days_outstanding: 0, aging_bucket: '0_7_days' },
    'as_of the instant it was sent',
  );
});

t.test('a signed order has days to sign, compared with the SLA, and no aging', async (t) => {
  const signed = (sent: string, at: string) => ({
    signature_status: 'signed' as const,
    sent_at: new Date(sent),
    signed_at: new Date(at),
  });
  const now = clock('2026-11-16T19:00:00Z');
  // Sent Friday 2026-10-02 17:00 EDT, signed Friday 2026-10-09 20:00 EDT (00:00Z on the 10th): 7 local days.
  t.same(orderAging(signed('2026-10-02T21:00:00Z', '2026-10-10T00:00:00Z'), now), {
    days_outstanding: null,
    aging_bucket: null,
    sla_breached: false,
    days_to_sign: 7,
  });
  t.same(
    orderAging(signed('2026-10-02T21:00:00Z', '2026-10-10T04:00:00Z'), now),
    { days_outstanding: null, aging_bucket: null, sla_breached: true, days_to_sign: 8 },
    'signed at midnight: 8 days',
  );
  t.same(
    orderAging(signed('2026-10-02T21:00:00Z', '2026-10-02T21:30:00Z'), now),
    { days_outstanding: null, aging_bucket: null, sla_breached: false, days_to_sign: 0 },
    'signed the same day',
  );
  t.equal(
    orderAging(signed('2026-10-02T21:00:00Z', '2026-10-10T04:00:00Z'), clock('2026-10-05T00:00:00Z')).days_to_sign,
    8,
    'days to sign do not depend on as_of',
  );
});

t.test('orders that wait for nobody neither age nor breach', async (t) => {
  for (const status of ['signature_not_required', 'rejected', 'superseded', 'cancelled'] as const) {
    const order = { signature_status: status, sent_at: new Date('2026-01-05T15:00:00Z'), signed_at: null };
    t.same(
      orderAging(order, clock('2026-11-16T19:00:00Z')),
      { days_outstanding: null, aging_bucket: null, sla_breached: false, days_to_sign: null },
      status,
    );
  }
});
