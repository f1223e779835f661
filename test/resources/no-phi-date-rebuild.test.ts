import t, { type Test } from 'tap';
import { buildTestApp, type SignedInApi } from '../helpers/app.js';
import { seededAgency } from '../helpers/clinical.js';
import { noPhiPlans, operations, type NoPhiReduction, type OperationId } from '../../src/generated/contract.js';

/**
 * A date the contract reduces for no_phi sessions must not be rebuilt from what the same answer shows beside it: an
 * exact instant (its own, or the answer's as_of) moved by one or two of its numbers taken as days. The phi answer of
 * the same data gives the real dates; a way of rebuilding that lands within a day and a half of the real date for
 * most of the records it applies to is a leak (a constant such as sla_days lands near a few by chance, never most).
 */
const api = await buildTestApp();
const { phi, noPhi } = await seededAgency(api);

type Json = Record<string, unknown>;
type Column = { name: string; type: string; phi: { reduce: string } };

const DAY_MS = 86_400_000;
const NEAR_MS = 1.5 * DAY_MS;
const INSTANT = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/;
const REDUCED_DATE = new Set<NoPhiReduction['reduce']>(['year', 'birth_date']);

/** One record of an answer: its real reduced dates (phi), and the numbers and exact instants no_phi shows with it. */
interface Sample {
  reduced: Map<string, number>;
  numbers: Map<string, number>;
  instants: Map<string, number>;
}

const instantOf = (value: unknown) =>
  typeof value === 'string' && INSTANT.test(value) ? Date.parse(value) : undefined;

/** The numbers and exact instants of a no_phi record, leaving out the fields reduced in it. */
function shown(record: Json, reduced: (key: string) => boolean, into: Sample, prefix = ''): void {
  for (const [key, value] of Object.entries(record)) {
    if (reduced(key)) continue;
    if (typeof value === 'number') into.numbers.set(prefix + key, value);
    const at = instantOf(value);
    if (at !== undefined) into.instants.set(prefix + key, at);
  }
}

/** Governed query rows: a column marked year is a reduced date. */
function rowSamples(
  real: Json,
  masked: Json,
  extra: (row: Json, index: number) => Record<string, string | null> = () => ({}),
): Sample[] {
  const columns = real.columns as Column[];
  const isYear = (key: string) => columns.some((c) => c.name === key && c.phi.reduce === 'year');
  const maskedRows = masked.rows as Json[];
  return (real.rows as Json[]).map((row, index) => {
    const sample: Sample = { reduced: new Map(), numbers: new Map(), instants: new Map() };
    const added = extra(row, index);
    for (const [key, value] of Object.entries({ ...row, ...added })) {
      if ((isYear(key) || key in added) && typeof value === 'string') sample.reduced.set(key, Date.parse(value));
    }
    shown(maskedRows[index], isYear, sample);
    return sample;
  });
}

/** Every record of a response that the contract reduces a date in, walking the phi and no_phi bodies side by side. */
function responseSamples(real: unknown, masked: unknown, schema: string, found: Sample[] = []): Sample[] {
  if (Array.isArray(real)) {
    for (const [i, item] of real.entries()) responseSamples(item, (masked as unknown[])[i], schema, found);
    return found;
  }
  const plan = noPhiPlans[schema];
  if (!plan || real === null || typeof real !== 'object') return found;
  const sample: Sample = { reduced: new Map(), numbers: new Map(), instants: new Map() };
  for (const [key, reduction] of Object.entries(plan.fields)) {
    const at = instantOf((real as Json)[key]);
    if (REDUCED_DATE.has(reduction.reduce) && at !== undefined) sample.reduced.set(key, at);
  }
  shown(masked as Json, (key) => REDUCED_DATE.has(plan.fields[key]?.reduce), sample);
  if (sample.reduced.size > 0) found.push(sample);
  for (const [key, child] of Object.entries(plan.children))
    responseSamples((real as Json)[key], (masked as Json)[key], child, found);
  return found;
}

/** The instants of an answer outside its records (meta.as_of, a query run's as_of): every record is seen beside them. */
function answerInstants(body: Json): Map<string, number> {
  const found = new Map<string, number>();
  for (const [part, value] of Object.entries(body)) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
    for (const [key, inner] of Object.entries(value as Json)) {
      const at = instantOf(inner);
      if (at !== undefined) found.set(`${part}.${key}`, at);
    }
  }
  return found;
}

/** Every way of rebuilding a date from one sample: instant, instant ± a number of days, instant ± two numbers. */
function rebuilt(sample: Sample, context: Map<string, number>): Array<[string, number]> {
  const instants = [...context, ...sample.instants];
  const moves: Array<[string, number]> = [['', 0]];
  // A move shorter than the margin lands where the instant alone does.
  for (const [name, days] of sample.numbers)
    if (Math.abs(days) * DAY_MS >= NEAR_MS) moves.push([` - ${name}`, -days * DAY_MS], [` + ${name}`, days * DAY_MS]);
  // Two moves by two different numbers (a name is ' - n' or ' + n').
  const twice = moves.flatMap(([a, x]) =>
    moves
      .filter(([b]) => b !== '' && a !== '' && a.slice(3) !== b.slice(3))
      .map(([b, y]): [string, number] => [a + b, x + y]),
  );
  return instants.flatMap(([name, at]) =>
    [...moves, ...twice].map(([how, by]): [string, number] => [name + how, at + by]),
  );
}

/** The ways of rebuilding that land near the real date for most records they apply to: "D = T - N (k of n)". */
function leaks(samples: Sample[], context: Map<string, number>): string[] {
  const tally = new Map<string, { near: number; of: number }>();
  for (const sample of samples) {
    const candidates = rebuilt(sample, context);
    for (const [field, real] of sample.reduced) {
      for (const [how, at] of candidates) {
        const key = `${field} = ${how}`;
        const count = tally.get(key) ?? { near: 0, of: 0 };
        count.of += 1;
        if (Math.abs(at - real) < NEAR_MS) count.near += 1;
        tally.set(key, count);
      }
    }
  }
  return [...tally]
    .filter(([, { near, of }]) => of >= 3 && near >= 0.5 * of)
    .map(([key, { near, of }]) => `${key} (${near} of ${of})`);
}

async function json(session: SignedInApi, url: string, payload?: Json): Promise<Json> {
  const res = await session.request(payload ? { method: 'POST', url, payload } : { method: 'GET', url });
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

const schemaOf = (operationId: OperationId) => operations[operationId].noPhiSchema as string;

/** Both sessions' answers of one operation, their records and the leaks found in them. */
async function check(t: Test, operationId: OperationId, url: string) {
  const [real, masked] = [await json(phi, url), await json(noPhi, url)];
  const samples = responseSamples(real, masked, schemaOf(operationId));
  t.same(leaks(samples, answerInstants(masked)), [], `${url}: no reduced date rebuilt (${samples.length} records)`);
  return { real, masked, samples };
}

const ORDERS = '/api/v1/ext/physician-orders';

t.test('listPhysicianOrders: no reduced date of an order is rebuilt from its day counts and meta.as_of', async (t) => {
  let offset = 0;
  const samples: Sample[] = [];
  for (let more = true; more; offset += 200) {
    const page = await check(t, 'listPhysicianOrders', `${ORDERS}?limit=200&offset=${offset}`);
    samples.push(...page.samples);
    more = (page.masked.meta as Json).has_more === true;
  }
  t.ok(samples.filter((s) => s.reduced.has('sent_at')).length > 30, 'orders sent, awaiting and signed, were compared');
});

t.test('getPhysicianOrder: nor from one order and its meta.as_of', async (t) => {
  const [real, masked] = [
    await json(phi, `${ORDERS}?status=awaiting_signature,signed&limit=200`),
    await json(noPhi, `${ORDERS}?status=awaiting_signature,signed&limit=200`),
  ];
  const pairs = (real.data as Json[])
    .map((order, i) => [order.id, (masked.data as Json[])[i].id])
    .filter((_, i) => i % 8 === 0);
  const samples: Sample[] = [];
  for (const [id, handle] of pairs) {
    const [one, oneMasked] = [await json(phi, `${ORDERS}/${id}`), await json(noPhi, `${ORDERS}/${handle}`)];
    samples.push(
      ...responseSamples(one, oneMasked, schemaOf('getPhysicianOrder')).map((s) => ({
        ...s,
        instants: new Map([...s.instants, ...answerInstants(oneMasked)]),
      })),
    );
  }
  t.ok(samples.length >= 10, `${samples.length} orders`);
  t.same(leaks(samples, new Map()), [], 'no reduced date rebuilt');
});

t.test('the order reads: a no_phi session cannot move the clock back to watch an order change bucket', async (t) => {
  const handle = ((await json(noPhi, `${ORDERS}?limit=1`)).data as Json[])[0].id;
  const [dayAgo, twoDaysAgo] = [new Date(Date.now() - 23 * 3_600_000), new Date(Date.now() - 48 * 3_600_000)].map(
    (at) => at.toISOString(),
  );
  for (const url of [`${ORDERS}?as_of=`, `${ORDERS}/${handle}?as_of=`]) {
    const within = await noPhi.request({ method: 'GET', url: url + dayAgo });
    t.equal(within.statusCode, 200, 'within the past 24 hours');
    t.equal(within.json().meta.as_of, dayAgo);
    const before = await noPhi.request({ method: 'GET', url: url + twoDaysAgo });
    t.equal(before.statusCode, 400, 'further back');
    t.match(before.json().error, {
      code: 'PLATFORM_INVALID_INPUT',
      message: /within the past 24 hours in a no_phi session/,
      details: { field: 'as_of' },
    });
  }
  t.equal(
    (await phi.request({ method: 'GET', url: `${ORDERS}?as_of=${twoDaysAgo}` })).statusCode,
    200,
    'a phi session reaches back a year',
  );
});

const RUN = (id: string) => `/api/v1/ext/queries/${id}/run`;

t.test('orders_awaiting_signature: no sent date rebuilt from days_outstanding and as_of', async (t) => {
  const [real, masked] = [
    await json(phi, RUN('orders_awaiting_signature'), { limit: 1000 }),
    await json(noPhi, RUN('orders_awaiting_signature'), { limit: 1000 }),
  ];
  const [realData, maskedData] = [real.data as Json, masked.data as Json];
  const samples = rowSamples(realData, maskedData);
  t.ok(samples.filter((s) => s.reduced.has('sent_at')).length > 10, `${samples.length} awaiting orders`);
  t.same(leaks(samples, new Map([['as_of', Date.parse(maskedData.as_of as string)]])), [], 'no sent date rebuilt');
});

t.test("unsigned_orders_by_physician: no oldest order's sent date rebuilt from its days and as_of", async (t) => {
  const orders = ((await json(phi, RUN('orders_awaiting_signature'), { limit: 1000 })).data as Json).rows as Json[];
  const oldestSent = (physicianId: unknown) =>
    orders
      .filter((o) => o.physician_id === physicianId && o.sent_at !== null)
      .map((o) => o.sent_at as string)
      .sort()[0] ?? null;
  const [real, masked] = [
    await json(phi, RUN('unsigned_orders_by_physician'), { limit: 1000 }),
    await json(noPhi, RUN('unsigned_orders_by_physician'), { limit: 1000 }),
  ];
  const [realData, maskedData] = [real.data as Json, masked.data as Json];
  const samples = rowSamples(realData, maskedData, (row) => ({ oldest_sent_at: oldestSent(row.physician_id) }));
  t.ok(samples.filter((s) => s.reduced.has('oldest_sent_at')).length >= 3, `${samples.length} physicians`);
  t.same(
    leaks(samples, new Map([['as_of', Date.parse(maskedData.as_of as string)]])),
    [],
    'no oldest sent date rebuilt',
  );
});

t.test('the other pseudonymized lists: no reduced date rebuilt from their numbers and instants', async (t) => {
  const lists: Array<[OperationId, string]> = [
    ['listPatients', '/api/v1/ext/patients?limit=200'],
    ['listReferrals', '/api/v1/ext/referrals?limit=200'],
    ['listIntakes', '/api/v1/ext/intakes?limit=200'],
    ['listVisits', '/api/v1/ext/visits?limit=200'],
    ['listRemittances', '/api/v1/ext/remittances?limit=200'],
  ];
  for (const [operationId, url] of lists) await check(t, operationId, url);
});
