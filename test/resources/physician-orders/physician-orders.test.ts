import t from 'tap';
import { buildTestApp, signIn, type Response, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';
import { YEAR_ONLY_INSTANT } from '../../helpers/list-walk.js';
import { orderAging, type AgingBucket } from '../../../src/domain/physician-orders/aging.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const { agencyId, phi, noPhi } = await seededAgency(api);

type Query = Record<string, string | number | boolean>;
type Item = Record<string, unknown> & { id: string; patient_id: string; physician_id: string };

const ORDERS = '/api/v1/ext/physician-orders';
const BUCKETS: AgingBucket[] = ['not_sent', '0_7_days', '8_14_days', '15_30_days', '31_plus_days'];

function list(session: SignedInApi, query: Query = {}, headers: Record<string, string> = {}): Promise<Response> {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  return session.request({ method: 'GET', url: `${ORDERS}?${search}`, headers });
}

function get(session: SignedInApi, id: string, query: Query = {}): Promise<Response> {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  return session.request({ method: 'GET', url: `${ORDERS}/${id}?${search}` });
}

const ids = (res: Response): string[] => res.json().data.map((item: Item) => item.id);

/** An agency's orders straight from the database, newest first, with what the contract shows of them. */
async function storedOrders(agency: string) {
  return db
    .selectFrom('physician_orders as o')
    .innerJoin('offices', (join) =>
      join.onRef('offices.agency_id', '=', 'o.agency_id').onRef('offices.id', '=', 'o.office_id'),
    )
    .innerJoin('physicians as p', (join) =>
      join.onRef('p.agency_id', '=', 'o.agency_id').onRef('p.id', '=', 'o.physician_id'),
    )
    .selectAll('o')
    .select(['offices.timezone', 'p.first_name', 'p.last_name', 'p.npi'])
    .where('o.agency_id', '=', agency)
    .orderBy('o.created_at', 'desc')
    .orderBy('o.id', 'desc')
    .execute();
}

type Stored = Awaited<ReturnType<typeof storedOrders>>[number];

const iso = (at: Date | null) => at?.toISOString() ?? null;

/** What the contract says a phi session sees of an order, aged with the domain's rules. */
function expected(row: Stored, asOf: Date, slaDays = 7) {
  return {
    id: row.id,
    order_type: row.order_type,
    patient_id: row.patient_id,
    physician_id: row.physician_id,
    physician_name: `${row.first_name} ${row.last_name}`,
    physician_npi: row.npi,
    office_id: row.office_id,
    signature_status: row.signature_status,
    delivery_method: row.delivery_method,
    sent_at: iso(row.sent_at),
    signed_at: iso(row.signed_at),
    received_at: iso(row.received_at),
    ...orderAging(row, { asOf, timeZone: row.timezone, slaDays }),
    sla_days: slaDays,
    created_at: row.created_at.toISOString(),
  };
}

const agingOf = (row: Stored, asOf: Date) => orderAging(row, { asOf, timeZone: row.timezone, slaDays: 7 });

function summaryOf(rows: Stored[], asOf: Date) {
  const agings = rows.map((row) => agingOf(row, asOf)).filter((a) => a.aging_bucket !== null);
  return {
    ...Object.fromEntries(BUCKETS.map((b) => [b, agings.filter((a) => a.aging_bucket === b).length])),
    sla_breached: agings.filter((a) => a.sla_breached).length,
  };
}

const allOrders = await storedOrders(agencyId);
/** A pinned instant, so that every call of a test ages alike. */
const asOf = new Date(Date.now() - 60_000);
const pinned = { as_of: asOf.toISOString() };

t.test(
  'the list: newest first, every field, aged at meta.as_of, with PageMeta and the summary of the whole set',
  async (t) => {
    const res = await list(phi, pinned);
    t.equal(res.statusCode, 200);
    const { data, meta } = res.json();
    t.ok(allOrders.length > 200, `${allOrders.length} orders`);
    t.same(
      data,
      allOrders.slice(0, 50).map((row) => expected(row, asOf)),
    );
    t.same(meta, {
      total: allOrders.length,
      total_exact: true,
      limit: 50,
      offset: 0,
      has_more: true,
      next_offset: 50,
      next_cursor: meta.next_cursor,
      as_of: asOf.toISOString(),
      summary: summaryOf(allOrders, asOf),
    });
    t.ok(Object.values(meta.summary).some((n) => (n as number) > 0));
  },
);

t.test('without as_of, orders are aged at the instant of the request', async (t) => {
  const before = Date.now();
  const res = await list(phi, { limit: 5 });
  const at = Date.parse(res.json().meta.as_of);
  t.ok(at >= before && at <= Date.now(), res.json().meta.as_of);
  t.same(
    res.json().data,
    allOrders.slice(0, 5).map((row) => expected(row, new Date(at))),
  );
});

t.test('each filter, alone or with others, gives exactly the matching orders and their summary', async (t) => {
  const sample = allOrders.find((o) => o.signature_status === 'awaiting_signature' && o.sent_at)!;
  const matching = (bucket: AgingBucket) => (o: Stored) => agingOf(o, asOf).aging_bucket === bucket;
  const cases: [Query, (o: Stored) => boolean][] = [
    [{ status: 'signed' }, (o) => o.signature_status === 'signed'],
    [
      { status: 'rejected,superseded,rejected' },
      (o) => o.signature_status === 'rejected' || o.signature_status === 'superseded',
    ],
    [
      { order_type: 'plan_of_care,recertification' },
      (o) => o.order_type === 'plan_of_care' || o.order_type === 'recertification',
    ],
    [{ physician_id: sample.physician_id }, (o) => o.physician_id === sample.physician_id],
    [{ patient_id: sample.patient_id }, (o) => o.patient_id === sample.patient_id],
    ...BUCKETS.map((bucket): [Query, (o: Stored) => boolean] => [{ aging_bucket: bucket }, matching(bucket)]),
    [{ aging_bucket: '15_30_days,31_plus_days' }, (o) => matching('15_30_days')(o) || matching('31_plus_days')(o)],
    [{ sla_breached: true }, (o) => agingOf(o, asOf).sla_breached],
    [{ sla_breached: false }, (o) => !agingOf(o, asOf).sla_breached],
    [{ sla_breached: true, status: 'signed' }, (o) => o.signature_status === 'signed' && agingOf(o, asOf).sla_breached],
    [
      { order_type: 'verbal', aging_bucket: '0_7_days,8_14_days' },
      (o) => o.order_type === 'verbal' && (matching('0_7_days')(o) || matching('8_14_days')(o)),
    ],
  ];
  for (const [query, matches] of cases) {
    const rows = allOrders.filter(matches);
    const label = JSON.stringify(query);
    t.ok(rows.length < allOrders.length, `${label} narrows`);
    const res = await list(phi, { ...query, ...pinned, limit: 200 });
    t.equal(res.json().meta.total, rows.length, `${label} total`);
    t.same(
      ids(res),
      rows.slice(0, 200).map((o) => o.id),
      `${label} ids`,
    );
    t.same(res.json().meta.summary, summaryOf(rows, asOf), `${label} summary`);
  }
  const refused: Query[] = [
    { status: 'pending' },
    { order_type: 'verbal,' },
    { aging_bucket: '7_days' },
    { sla_breached: 'maybe' },
  ];
  for (const bad of refused) {
    t.equal((await list(phi, bad)).statusCode, 400, JSON.stringify(bad));
  }
});

t.test('the offset must be a multiple of the limit; the refusal gives the nearest valid offsets', async (t) => {
  const refused = async (query: Query, details: Record<string, number | null>) => {
    const res = await list(phi, query);
    t.equal(res.statusCode, 400);
    t.match(res.json().error, {
      code: 'PLATFORM_INVALID_INPUT',
      message: /offset must be a multiple of limit/,
      details: { field: 'offset', ...details },
    });
    t.same(res.json().error.details, { field: 'offset', ...details }, JSON.stringify(query));
  };
  await refused({ offset: 75 }, { limit: 50, offset: 75, previous_valid_offset: 50, next_valid_offset: 100 });
  await refused({ limit: 20, offset: 5 }, { limit: 20, offset: 5, previous_valid_offset: 0, next_valid_offset: 20 });
  await refused(
    { limit: 150, offset: 99_999 },
    { limit: 150, offset: 99_999, previous_valid_offset: 99_900, next_valid_offset: null },
  );
  const page = await list(phi, { ...pinned, limit: 20, offset: 40 });
  t.equal(page.statusCode, 200);
  t.same(
    ids(page),
    allOrders.slice(40, 60).map((o) => o.id),
  );
  t.match(page.json().meta, { limit: 20, offset: 40, next_offset: 60 });
});

t.test('a cursor walk returns exactly the ids of an offset walk; cursor misuse is a 400', async (t) => {
  const walk = async (by: 'offset' | 'cursor') => {
    const seen: string[] = [];
    let next: Query = {};
    for (;;) {
      const res = await list(phi, { ...pinned, status: 'signed,awaiting_signature', limit: 90, ...next });
      seen.push(...ids(res));
      const more = res.json().meta[by === 'offset' ? 'next_offset' : 'next_cursor'];
      if (more === null) return seen;
      next = { [by]: more };
    }
  };
  const expectedIds = allOrders
    .filter((o) => o.signature_status === 'signed' || o.signature_status === 'awaiting_signature')
    .map((o) => o.id);
  t.ok(expectedIds.length > 180, 'several pages');
  t.same(await walk('offset'), expectedIds);
  t.same(await walk('cursor'), expectedIds);
  const cursor = (await list(phi, pinned)).json().meta.next_cursor;
  t.match((await list(phi, { ...pinned, cursor, offset: 50 })).json().error, {
    code: 'PLATFORM_INVALID_INPUT',
    details: { field: 'offset' },
  });
  t.match(
    (await list(phi, { cursor })).json().error,
    { code: 'PLATFORM_INVALID_INPUT', details: { field: 'cursor' } },
    'bound to its as_of',
  );
});

t.test('as_of must lie within the past year, on both routes', async (t) => {
  const order = allOrders[0];
  const yearAgo = new Date();
  yearAgo.setUTCFullYear(yearAgo.getUTCFullYear() - 1);
  const outside = [new Date(Date.now() + 60_000), new Date(yearAgo.getTime() - 60_000)];
  for (const at of outside) {
    for (const res of [
      await list(phi, { as_of: at.toISOString() }),
      await get(phi, order.id, { as_of: at.toISOString() }),
    ]) {
      t.equal(res.statusCode, 400);
      t.match(res.json().error, {
        code: 'PLATFORM_INVALID_INPUT',
        message: /within the past year/,
        details: { field: 'as_of', earliest: String, latest: String },
      });
    }
  }
  const inside = new Date(yearAgo.getTime() + 3_600_000);
  const res = await get(phi, order.id, { as_of: inside.toISOString() });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { data: expected(order, inside), meta: { as_of: inside.toISOString() } });
  t.equal((await list(phi, { as_of: 'last week' })).statusCode, 400, 'not a date-time');
});

t.test('an order by id is the list item; another agency gets 404 exactly as for an unknown id', async (t) => {
  const order = allOrders.find((o) => o.signature_status === 'signed')!;
  const res = await get(phi, order.id, pinned);
  t.same(res.json(), { data: expected(order, asOf), meta: pinned });
  const other = await signIn(api);
  const foreign = await get(other, order.id);
  const unknown = await get(other, 'ord_doesnotexist');
  t.equal(foreign.statusCode, 404);
  t.match(foreign.json().error, {
    code: 'PLATFORM_RESOURCE_NOT_FOUND',
    details: { resource_type: 'physician order', id: order.id },
  });
  t.same(
    { ...foreign.json().error, message: '', details: {}, correlationId: '' },
    { ...unknown.json().error, message: '', details: {}, correlationId: '' },
  );
  t.equal((await list(other)).json().meta.total, 0);
});

t.test(
  'no_phi: OR-, PT- and PH- handles, no physician name or NPI, dates to the year, no day counts, bucket and SLA as computed',
  async (t) => {
    const [real, masked] = [
      (await list(phi, { ...pinned, limit: 200 })).json().data,
      (await list(noPhi, { ...pinned, limit: 200 })).json().data,
    ];
    const handles = await db
      .selectFrom('pseudonyms')
      .select(['kind', 'real_id', 'handle'])
      .where('agency_id', '=', agencyId)
      .execute();
    const handleOf = (kind: string, id: string) => handles.find((h) => h.kind === kind && h.real_id === id)?.handle;
    const yearOf = (at: string | null) => (at === null ? null : `${at.slice(0, 4)}-01-01T00:00:00.000Z`);
    t.same(
      masked,
      real.map((o: Item) => ({
        ...o,
        id: handleOf('physician_order', o.id),
        patient_id: handleOf('patient', o.patient_id),
        physician_id: handleOf('physician', o.physician_id),
        physician_name: null,
        physician_npi: null,
        sent_at: yearOf(o.sent_at as string | null),
        signed_at: yearOf(o.signed_at as string | null),
        received_at: yearOf(o.received_at as string | null),
        created_at: yearOf(o.created_at as string),
        days_outstanding: null,
        days_to_sign: null,
      })),
    );
    t.ok(
      masked.every(
        (o: Item) =>
          /^OR-/.test(o.id) &&
          /^PT-/.test(o.patient_id) &&
          /^PH-/.test(o.physician_id) &&
          YEAR_ONLY_INSTANT.test(o.created_at as string),
      ),
    );
    t.equal(new Set(masked.map((o: Item) => o.id)).size, masked.length, 'one handle per order');
  },
);

t.test('no_phi handles are stable across calls and agency sessions, and getPhysicianOrder takes them', async (t) => {
  const first = ids(await list(noPhi, pinned));
  const again = ids(await list(noPhi, pinned));
  const otherSession = await signIn(api, { phiMode: 'no_phi', integration: { agencyId } });
  t.same(again, first, 'same call, same handles');
  t.same(ids(await list(otherSession, pinned)), first, 'another integration of the agency, same handles');
  const listed = (await list(otherSession, pinned)).json().data[3];
  const one = await get(noPhi, listed.id, pinned);
  t.equal(one.statusCode, 200);
  t.same(one.json().data, listed);
  const byPatient = await list(noPhi, { ...pinned, patient_id: listed.patient_id, limit: 200 });
  t.ok(
    ids(byPatient).includes(listed.id) && byPatient.json().data.every((o: Item) => o.patient_id === listed.patient_id),
    'the patient filter takes the PT- handle',
  );
  const byPhysician = await list(noPhi, { ...pinned, physician_id: listed.physician_id, limit: 200 });
  t.ok(
    ids(byPhysician).includes(listed.id) &&
      byPhysician.json().data.every((o: Item) => o.physician_id === listed.physician_id),
    'the physician filter takes the PH- handle',
  );
});

t.test(
  'ids and handles are each refused in the other mode, clearly; an unknown handle is PLATFORM_PSEUDONYM_UNRESOLVED',
  async (t) => {
    const order = allOrders[0];
    const handle = ids(await list(noPhi, { limit: 1 }))[0];
    const rawInNoPhi = await get(noPhi, order.id);
    t.equal(rawInNoPhi.statusCode, 400);
    t.match(rawInNoPhi.json().error, {
      code: 'PLATFORM_INVALID_INPUT',
      message: /no_phi session an order is addressed by its OR- handle/,
      details: { field: 'id' },
    });
    const handleInPhi = await get(phi, handle);
    t.equal(handleInPhi.statusCode, 400);
    t.match(handleInPhi.json().error, {
      code: 'PLATFORM_INVALID_INPUT',
      message: /is a no_phi handle; a phi session addresses an order by its id/,
      details: { field: 'id' },
    });
    const unknown = await get(noPhi, 'OR-0000000000ZZ');
    t.equal(unknown.statusCode, 404);
    t.match(unknown.json().error, { code: 'PLATFORM_PSEUDONYM_UNRESOLVED', details: { handle: 'OR-0000000000ZZ' } });
    const otherAgency = await signIn(api, { phiMode: 'no_phi' });
    t.match(
      (await get(otherAgency, handle)).json().error,
      { code: 'PLATFORM_PSEUDONYM_UNRESOLVED' },
      "another agency's handle does not resolve",
    );
    t.match(
      (await list(noPhi, { physician_id: order.physician_id })).json().error,
      { code: 'PLATFORM_PSEUDONYM_UNRESOLVED' },
      'a real physician id in a no_phi filter',
    );
  },
);

t.test('catalog: both routes enabled, with their query parameters', async (t) => {
  const routes = (await phi.request({ method: 'GET', url: '/api/v1/ext/catalog' })).json().data.routes;
  const names = (id: string) => routes.find((r: { operation_id: string }) => r.operation_id === id);
  t.match(names('listPhysicianOrders'), { enabled: true });
  t.match(names('getPhysicianOrder'), { enabled: true });
  t.same(
    names('getPhysicianOrder').query_parameters.map((p: { name: string }) => p.name),
    ['as_of'],
  );
});

const pad = (n: number) => String(n).padStart(2, '0');
const NEW_YORK = 'America/New_York';

function offsetMs(at: Date, timeZone: string): number {
  const name = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
    .formatToParts(at)
    .find((p) => p.type === 'timeZoneName')!.value;
  const [, sign, hours, minutes] = /GMT([+-])(\d\d):(\d\d)/.exec(name) ?? ['', '+', '0', '0'];
  return (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes)) * 60_000;
}

/** The instant of a wall-clock time in a zone, right across its offset changes too. */
function wallClock(day: string, hour: number, minute: number, timeZone = NEW_YORK): Date {
  const wanted = Date.parse(`${day}T${pad(hour)}:${pad(minute)}:00Z`);
  let at = wanted;
  for (let i = 0; i < 3; i++) at = wanted - offsetMs(new Date(at), timeZone);
  return new Date(at);
}

const dayOf = (at: Date, days = 0) => new Date(at.getTime() + days * 86_400_000).toISOString().slice(0, 10);
const shift = (day: string, days: number) => dayOf(new Date(`${day}T12:00:00Z`), days);

/** The latest day of the past year on which New York changed its clocks (a 23- or 25-hour day). */
function lastClockChange(): string {
  for (let back = 2; back < 360; back++) {
    const day = dayOf(new Date(), -back);
    if (
      offsetMs(new Date(`${day}T12:00:00Z`), NEW_YORK) !== offsetMs(new Date(`${shift(day, -1)}T12:00:00Z`), NEW_YORK)
    )
      return day;
  }
  throw new Error('New York changed its clocks in the past year');
}

t.test(
  'aging at a given as_of: bucket edges, the SLA and a daylight-saving change, in the office calendar',
  async (t) => {
    const session = await signIn(api);
    const agency = session.integration.agencyId;
    const { id: officeId } = await db
      .selectFrom('offices')
      .select('id')
      .where('agency_id', '=', agency)
      .executeTakeFirstOrThrow();
    await db
      .insertInto('patients')
      .values({
        agency_id: agency,
        id: 'pat_aging',
        first_name: 'Ada',
        last_name: 'Aging',
        service_line: 'home_health',
        status: 'active',
        match_first_name: 'ada',
        match_last_name: 'aging',
      })
      .execute();
    await db
      .insertInto('physicians')
      .values({ agency_id: agency, id: 'phy_aging', npi: '1234567893', first_name: 'Sam', last_name: 'Signer' })
      .execute();
    const change = lastClockChange();
    const hours = (wallClock(shift(change, 1), 0, 0).getTime() - wallClock(change, 0, 0).getTime()) / 3_600_000;
    t.ok(hours === 23 || hours === 25, `${change} lasted ${hours} hours in New York`);
    // as_of: 00:15 on the day after the change; the local day of every order below is counted back from it.
    const asOf = wallClock(shift(change, 1), 0, 15);
    const sentDaysBefore = (days: number) => wallClock(shift(change, 1 - days), 23, 30);
    const orders: Record<string, { sent: Date | null; signed?: Date }> = {
      sent_on_change_day: { sent: wallClock(change, 0, 30) },
      sent_before_change: { sent: wallClock(shift(change, -1), 23, 30) },
      ...Object.fromEntries([7, 8, 14, 15, 30, 31].map((days) => [`days_${days}`, { sent: sentDaysBefore(days) }])),
      never_sent: { sent: null },
      sent_after_as_of: { sent: wallClock(shift(change, 1), 9, 0) },
      signed_in_8_days: { sent: wallClock(shift(change, -8), 16, 0), signed: wallClock(change, 0, 30) },
    };
    await db
      .insertInto('physician_orders')
      .values(
        Object.entries(orders).map(([id, { sent, signed }], n) => ({
          agency_id: agency,
          id,
          patient_id: 'pat_aging',
          physician_id: 'phy_aging',
          office_id: officeId,
          order_type: 'verbal' as const,
          signature_status: signed ? ('signed' as const) : ('awaiting_signature' as const),
          delivery_method: sent ? ('fax' as const) : null,
          sent_at: sent,
          signed_at: signed ?? null,
          created_at: new Date((sent ?? asOf).getTime() - 3_600_000 - n * 1000),
        })),
      )
      .execute();

    const aged = async (query: Query = {}) => {
      const res = await list(session, { as_of: asOf.toISOString(), limit: 200, ...query });
      t.equal(res.statusCode, 200);
      return {
        res,
        by: Object.fromEntries(
          res
            .json()
            .data.map((o: Item) => [o.id, [o.days_outstanding, o.aging_bucket, o.sla_breached, o.days_to_sign]]),
        ),
      };
    };
    const { res, by } = await aged();
    t.same(
      by,
      {
        sent_on_change_day: [1, '0_7_days', false, null],
        sent_before_change: [2, '0_7_days', false, null],
        days_7: [7, '0_7_days', false, null],
        days_8: [8, '8_14_days', true, null],
        days_14: [14, '8_14_days', true, null],
        days_15: [15, '15_30_days', true, null],
        days_30: [30, '15_30_days', true, null],
        days_31: [31, '31_plus_days', true, null],
        never_sent: [null, 'not_sent', false, null],
        sent_after_as_of: [null, 'not_sent', false, null],
        signed_in_8_days: [null, null, true, 8],
      },
      `as of ${asOf.toISOString()}`,
    );
    t.same(res.json().meta.summary, {
      not_sent: 2,
      '0_7_days': 3,
      '8_14_days': 2,
      '15_30_days': 2,
      '31_plus_days': 1,
      sla_breached: 5,
    });
    t.same(Object.keys((await aged({ aging_bucket: '8_14_days' })).by).sort(), ['days_14', 'days_8']);
    t.same(Object.keys((await aged({ sla_breached: true })).by).sort(), [
      'days_14',
      'days_15',
      'days_30',
      'days_31',
      'days_8',
      'signed_in_8_days',
    ]);

    const lateOnChangeDay = wallClock(change, 23, 45);
    const sameDay = await get(session, 'sent_on_change_day', { as_of: lateOnChangeDay.toISOString() });
    t.match(
      sameDay.json(),
      { data: { days_outstanding: 0, aging_bucket: '0_7_days' }, meta: { as_of: lateOnChangeDay.toISOString() } },
      `${(lateOnChangeDay.getTime() - orders.sent_on_change_day.sent!.getTime()) / 3_600_000} hours later, still the day it was sent`,
    );

    await db.updateTable('agencies').set({ order_sla_days: 14 }).where('id', '=', agency).execute();
    const { by: slaOf14 } = await aged();
    t.same(
      [slaOf14.days_8[2], slaOf14.days_14[2], slaOf14.days_15[2], slaOf14.signed_in_8_days[2]],
      [false, false, true, false],
      'an SLA of 14 days',
    );
    t.equal((await get(session, 'days_15', { as_of: asOf.toISOString() })).json().data.sla_days, 14);
  },
);
