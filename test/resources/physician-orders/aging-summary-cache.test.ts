import t from 'tap';
import type { CompiledQuery } from 'kysely';
import { buildTestApp, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';
import { orderAging, type AgingBucket } from '../../../src/domain/physician-orders/aging.js';

// The order list keeps each filter set's aging summary until the agency's order revision changes or an office's
// midnight passes (src/resources/physician-orders/aging-summary-cache.ts); each summary here is checked against a
// count of the stored orders by the domain's rules.

const database = await testDatabase();
const { db } = database;
const api = await buildTestApp();
const { agencyId, phi } = await seededAgency(api);

const ORDERS = '/api/v1/ext/physician-orders';
const BUCKETS: AgingBucket[] = ['not_sent', '0_7_days', '8_14_days', '15_30_days', '31_plus_days'];
const AUCKLAND = 'Pacific/Auckland';

const statements: CompiledQuery[] = [];
t.teardown(database.observe({ statement: (query) => void statements.push(query) }));
const summaryCounts = () => statements.filter((q) => q.sql.includes('count(*) filter')).length;

async function summaryOf(session: SignedInApi, query: Record<string, string> = {}) {
  const res = await session.request({
    method: 'GET',
    url: `${ORDERS}?${new URLSearchParams({ limit: '5', ...query })}`,
  });
  t.equal(res.statusCode, 200, res.body.slice(0, 300));
  return res.json().meta as { as_of: string; summary: Record<string, number> };
}

/** The summary by brute force: every stored order of the agency aged by the domain's rules. */
async function counted(agency: string, asOf: Date, bucket?: AgingBucket) {
  const [orders, { order_sla_days: slaDays }] = await Promise.all([
    db
      .selectFrom('physician_orders as o')
      .innerJoin('offices', (join) =>
        join.onRef('offices.agency_id', '=', 'o.agency_id').onRef('offices.id', '=', 'o.office_id'),
      )
      .select(['o.signature_status', 'o.sent_at', 'o.signed_at', 'offices.timezone'])
      .where('o.agency_id', '=', agency)
      .execute(),
    db.selectFrom('agencies').select('order_sla_days').where('id', '=', agency).executeTakeFirstOrThrow(),
  ]);
  const agings = orders
    .map((order) => orderAging(order, { asOf, timeZone: order.timezone, slaDays }))
    .filter((a) => a.aging_bucket !== null && (bucket === undefined || a.aging_bucket === bucket));
  return {
    ...Object.fromEntries(BUCKETS.map((b) => [b, agings.filter((a) => a.aging_bucket === b).length])),
    sla_breached: agings.filter((a) => a.sla_breached).length,
  };
}

async function awaitingOrderIds(agency: string): Promise<string[]> {
  const rows = await db
    .selectFrom('physician_orders')
    .select('id')
    .where('agency_id', '=', agency)
    .where('signature_status', '=', 'awaiting_signature')
    .where('sent_at', 'is not', null)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}

t.test('a summary is counted once, then kept while the orders and the day stay the same', async (t) => {
  const first = await summaryOf(phi);
  const before = summaryCounts();
  const second = await summaryOf(phi);
  t.equal(summaryCounts(), before, 'the second page counted nothing');
  t.same(second.summary, first.summary);
  t.same(second.summary, await counted(agencyId, new Date(second.as_of)));
  t.same((await summaryOf(phi, { status: 'awaiting_signature,signed' })).summary, first.summary);
  const counts = summaryCounts();
  await summaryOf(phi, { status: 'signed,awaiting_signature' });
  t.equal(summaryCounts(), counts, 'the same statuses in another order are the same filter set');
});

t.test('a write from another connection is counted on the next page, whatever it changed', async (t) => {
  await summaryOf(phi);
  const [signedId, cancelledId] = await awaitingOrderIds(agencyId);
  const writes: [string, () => Promise<unknown>][] = [
    [
      'an order signed',
      () =>
        db
          .updateTable('physician_orders')
          .set({ signature_status: 'signed', signed_at: new Date() })
          .where('agency_id', '=', agencyId)
          .where('id', '=', signedId)
          .execute(),
    ],
    [
      'an order deleted',
      () => db.deleteFrom('physician_orders').where('agency_id', '=', agencyId).where('id', '=', cancelledId).execute(),
    ],
    [
      'the SLA changed',
      () => db.updateTable('agencies').set({ order_sla_days: 20 }).where('id', '=', agencyId).execute(),
    ],
  ];
  for (const [what, write] of writes) {
    const before = await summaryOf(phi);
    await write();
    const after = await summaryOf(phi);
    t.same(after.summary, await counted(agencyId, new Date(after.as_of)), what);
    t.notSame(after.summary, before.summary, `${what} changed the summary`);
  }
});

t.test('under concurrent order writes, every summary is the count of one committed state', async (t) => {
  const session = (await seededAgency(api)).phi;
  const agency = session.integration.agencyId;
  // Pinned, so that the committed states' counts are comparable.
  const asOf = new Date(Date.now() - 60_000);
  const pinned = { as_of: asOf.toISOString() };
  const states = [JSON.stringify(await counted(agency, asOf))];
  const writer = (async () => {
    for (const id of (await awaitingOrderIds(agency)).slice(0, 12)) {
      await db
        .updateTable('physician_orders')
        .set({ signature_status: 'cancelled' })
        .where('agency_id', '=', agency)
        .where('id', '=', id)
        .execute();
      states.push(JSON.stringify(await counted(agency, asOf)));
    }
  })();
  const seen: string[] = [];
  let writing = true;
  void writer.finally(() => {
    writing = false;
  });
  while (writing) seen.push(JSON.stringify((await summaryOf(session, pinned)).summary));
  await writer;
  const last = (await summaryOf(session, pinned)).summary;
  t.same(last, JSON.parse(states.at(-1)!), 'after the writes, the last state');
  t.ok(seen.length > 0, `${seen.length} summaries during ${states.length - 1} writes`);
  t.same(
    seen.filter((summary) => !states.includes(summary)),
    [],
    'no summary mixes states',
  );
});

/** The last midnight in Auckland at least a minute ago, as the instant it began. */
function lastAucklandMidnight(): Date {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: AUCKLAND,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(Date.now() - 60_000));
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  const local = Date.parse(`${part('year')}-${part('month')}-${part('day')}T00:00:00Z`);
  // Auckland is 12 or 13 hours ahead of UTC: the midnight is the candidate whose local hour reads 00.
  for (const hours of [12, 13]) {
    const at = new Date(local - hours * 3_600_000);
    const hour = new Intl.DateTimeFormat('en-CA', { timeZone: AUCKLAND, hour: '2-digit', hourCycle: 'h23' }).format(at);
    if (hour === '00') return at;
  }
  throw new Error('no Auckland midnight found');
}

t.test("across a midnight in an office's zone, and as an order is sent, the summary is counted again", async (t) => {
  const session = (await seededAgency(api)).phi;
  const agency = session.integration.agencyId;
  const office = await db.selectFrom('offices').select('id').where('agency_id', '=', agency).executeTakeFirstOrThrow();
  await db
    .updateTable('offices')
    .set({ timezone: AUCKLAND })
    .where('agency_id', '=', agency)
    .where('id', '=', office.id)
    .execute();
  const midnight = lastAucklandMidnight();
  const [orderId, laterId] = await awaitingOrderIds(agency);
  // Seven Auckland days outstanding until the midnight, eight from it: out of 0_7_days and past the SLA.
  const aWeekBefore = new Date(midnight.getTime() - 8 * 86_400_000 + 3_600_000);
  const sentLater = new Date(midnight.getTime() + 30_000);
  for (const [id, sent] of [
    [orderId, aWeekBefore],
    [laterId, sentLater],
  ] as const) {
    await db
      .updateTable('physician_orders')
      .set({ office_id: office.id, sent_at: sent, created_at: new Date(sent.getTime() - 3_600_000) })
      .where('agency_id', '=', agency)
      .where('id', '=', id)
      .execute();
  }
  const instants = [
    new Date(midnight.getTime() - 1),
    midnight,
    new Date(sentLater.getTime() - 1),
    sentLater,
    new Date(midnight.getTime() - 1),
  ];
  const summaries = [];
  for (const asOf of instants) {
    for (const bucket of [undefined, '0_7_days', '8_14_days'] as const) {
      const query = { as_of: asOf.toISOString(), ...(bucket ? { aging_bucket: bucket } : {}) };
      const { summary } = await summaryOf(session, query);
      t.same(summary, await counted(agency, asOf, bucket), `as of ${asOf.toISOString()}, ${bucket ?? 'every bucket'}`);
      if (!bucket) summaries.push(summary);
    }
  }
  t.notSame(summaries[1], summaries[0], 'the midnight moved an order');
  t.notSame(summaries[3], summaries[2], 'the sending moved an order');
});
