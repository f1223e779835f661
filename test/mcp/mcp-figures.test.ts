import { t } from 'tap';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation/types.js';
import { createUser } from '../../src/admin/user.js';
import { createMcpClient } from '../../src/admin/mcp-client.js';
import { READ_TOOL_DESCRIPTIONS } from '../../src/mcp/tools.js';
import { seededAgency } from '../helpers/clinical.js';
import { testDatabase } from '../helpers/database.js';
import { connectedClient, listeningApp, refusalOf, withOwnPassword } from './mcp-helpers.js';

/**
 * Every tool's figures are the partition's: each is compared with the same question asked through the REST routes or
 * the governed queries by a no_phi session of the same agency. The client lists the tools first, so the SDK validates
 * every structured result against the tool's declared outputSchema (a mismatch throws).
 */
const db = (await testDatabase()).db;
const { api, base } = await listeningApp(t);
const { agencyId, noPhi, phi } = await seededAgency(api);
// Not the default (7): a figure that ignores the agency's setting shows.
const SLA_DAYS = 10;
await db.updateTable('agencies').set({ order_sla_days: SLA_DAYS }).where('id', '=', agencyId).execute();
const redirectUri = 'http://127.0.0.1:1/callback';
const user = await createUser(db, {
  agencyId,
  email: 'figures.reader@example.org',
  name: 'Fran Figures',
  role: 'manager',
});
const mcpClient = await createMcpClient(db, 'Figures assistant', [redirectUri]);
/** The client's own validator, counted: each answer a tool gives is checked by callTool against its outputSchema. */
const ajv = new AjvJsonSchemaValidator();
let checked = 0;
const jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType) {
    const validate = ajv.getValidator<T>(schema);
    return (input: unknown) => {
      checked++;
      return validate(input);
    };
  },
};
const person = await withOwnPassword(db, user);
const { client } = await connectedClient(base, mcpClient.clientId, redirectUri, person, { jsonSchemaValidator });
const { tools } = await client.listTools();
/** The operations the gateway is asked for, in order: a tool's direct calls each look their pipeline up once. */
const gatewayCalls: string[] = [];
const pipelineOf = api.app.gateway.pipeline.bind(api.app.gateway);
api.app.gateway.pipeline = (operationId) => {
  gatewayCalls.push(operationId);
  return pipelineOf(operationId);
};

type Row = Record<string, unknown>;

async function figures<T = Row>(name: string, args: Row = {}): Promise<T> {
  const before = checked;
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} refused: ${JSON.stringify(result.content)}`);
  if (checked !== before + 1) throw new Error(`${name}: the client did not check the answer against its outputSchema`);
  return result.structuredContent as T;
}

async function get(
  path: string,
  query: Record<string, string | number | boolean> = {},
): Promise<{ data: any; meta: any }> {
  const url = `/api/v1/ext/${path}?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`;
  const res = await noPhi.request({ method: 'GET', url });
  if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** A list's match count, as the route answers it (exact: the seeded agency's lists stay under 1,000). */
async function total(path: string, query: Record<string, string | number | boolean>): Promise<number> {
  const { meta } = await get(path, { ...query, limit: 1 });
  if (meta.total_exact === false) throw new Error(`${path}: an estimated count`);
  return meta.total;
}

async function queryPage(queryId: string, body: Row): Promise<any> {
  const res = await noPhi.request({ method: 'POST', url: `/api/v1/ext/queries/${queryId}/run`, payload: body });
  if (res.statusCode !== 200) throw new Error(`${queryId}: ${res.statusCode} ${res.body}`);
  return res.json().data;
}

/** Every row of a governed query, page after page. */
async function queryRows(queryId: string, parameters: Row): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  do {
    const page = await queryPage(queryId, { parameters, limit: 1000, ...(cursor ? { cursor } : {}) });
    rows.push(...page.rows);
    cursor = page.nextCursor;
  } while (cursor);
  return rows;
}

const sum = (rows: Row[], column: string) => rows.reduce((a, row) => a + Number(row[column] ?? 0), 0);
const YEAR = new Date().getUTCFullYear();
const yearRange = (year: number) => ({ from: `${year}-01-01`, to: `${year}-12-31` });

t.test('every tool declares an object outputSchema, which the client checks each result against', async (t) => {
  t.ok(tools.length >= 11);
  for (const tool of tools) t.equal(tool.outputSchema?.type, 'object', tool.name);
});

t.test('each read tool answers with one gateway call, its partition doing the counting', async (t) => {
  const asks: [tool: string, args: Row, operationId: string][] = [
    ['braes.agency.summary', {}, 'runQuery'],
    ['braes.referrals.pipeline', { year: YEAR }, 'runQuery'],
    ['braes.visits.missed_late', { year: YEAR - 1 }, 'runQuery'],
    ['braes.orders.aging', {}, 'listPhysicianOrders'],
    ['braes.quality.hhvbp_summary', { performance_year: 2025 }, 'getHhvbpSummary'],
    ['braes.quality.hhvbp_measures', { performance_year: 2025 }, 'listHhvbpMeasures'],
    ['braes.remittances.totals', yearRange(YEAR), 'runQuery'],
    ['braes.queries.list', {}, 'getCatalog'],
    ['braes.queries.run', { query_id: 'census_summary' }, 'runQuery'],
  ];
  t.same(asks.map(([tool]) => tool).sort(), READ_TOOL_DESCRIPTIONS.map((tool) => tool.name).sort(), 'every read tool');
  for (const [tool, args, operationId] of asks) {
    gatewayCalls.length = 0;
    await figures(tool, args);
    t.same(gatewayCalls, [operationId], tool);
  }
});

t.test('braes.agency.summary: the active census, as active_census and the patient list count it', async (t) => {
  const census = await figures<{
    active_patients: number;
    by_service_line: Record<string, number>;
    by_office: { office_id: string; active_patients: number }[];
    complete: boolean;
  }>('braes.agency.summary');
  const rows = await queryRows('active_census', {});
  t.equal(census.active_patients, sum(rows, 'active_patients'));
  t.equal(census.active_patients, await total('patients', { status: 'active' }), 'the patient list agrees');
  for (const line of ['home_health', 'hospice', 'private_duty']) {
    t.equal(
      census.by_service_line[line],
      sum(
        rows.filter((row) => row.service_line === line),
        'active_patients',
      ),
      line,
    );
    t.equal(
      census.by_service_line[line],
      await total('patients', { status: 'active', service_line: line }),
      `${line}: the patient list agrees`,
    );
  }
  for (const office of census.by_office)
    t.equal(
      office.active_patients,
      sum(
        rows.filter((row) => row.office_id === office.office_id),
        'active_patients',
      ),
      office.office_id,
    );
  t.equal(census.complete, true);
});

t.test('braes.referrals.pipeline {year}: referrals and their intakes of that year only', async (t) => {
  for (const year of [2019, YEAR - 1, YEAR]) {
    const pipeline = await figures<Row & { referrals_by_disposition: Record<string, number> }>(
      'braes.referrals.pipeline',
      { year },
    );
    const window = { referral_date_from: `${year}-01-01`, referral_date_to: `${year}-12-31` };
    const conversion = await queryRows('intake_conversion_by_source', yearRange(year));
    t.equal(pipeline.referrals_received, await total('referrals', window), `${year}: referrals`);
    for (const disposition of ['accepted', 'declined']) {
      t.equal(
        pipeline.referrals_by_disposition[disposition],
        await total('referrals', { ...window, disposition }),
        `${year}: ${disposition}`,
      );
    }
    t.equal(
      pipeline.intakes_admitted,
      sum(conversion, 'admitted'),
      `${year}: intakes admitted of the year's referrals`,
    );
  }
  // Nothing was referred in 2019, so no figure of 2019 may count anything (intakes of every year were counted).
  const empty = await figures('braes.referrals.pipeline', { year: 2019 });
  const counted = JSON.stringify(empty).match(/:[1-9]\d*/g) ?? [];
  t.same(
    counted.filter((n) => n !== ':2019'),
    [],
    `2019 counts nothing: ${JSON.stringify(empty)}`,
  );
  t.ok(
    ((await figures<Row>('braes.referrals.pipeline', { year: YEAR })).referrals_received as number) > 0,
    'the seeded year has referrals',
  );
});

t.test('braes.visits.missed_late {year}: as the visit list and visits_missed_or_late count them', async (t) => {
  for (const year of [YEAR - 1, YEAR]) {
    const visits = await figures<Row>('braes.visits.missed_late', { year });
    const window = { scheduled_from: `${year}-01-01T00:00:00Z`, scheduled_to: `${year + 1}-01-01T00:00:00Z` };
    t.equal(visits.missed, await total('visits', { ...window, status: 'missed' }), `${year}: missed`);
    t.equal(
      visits.missed,
      sum(await queryRows('visits_missed_or_late', yearRange(year)), 'visits_missed'),
      `${year}: visits_missed_or_late agrees`,
    );
    t.equal(
      visits.in_progress_not_completed,
      await total('visits', { ...window, status: 'in_progress' }),
      `${year}: in progress`,
    );
    const before = `${Math.min(year + 1, YEAR)}-01-01T00:00:00Z`;
    t.equal(
      visits.still_scheduled_from_past_years,
      await total('visits', { scheduled_to: before, status: 'scheduled' }),
      `${year}: still scheduled`,
    );
    t.equal(visits.late_within_current_year, null);
  }
});

t.test('braes.orders.aging: buckets and the SLA as the order list and the order queries count them', async (t) => {
  const orders = await figures<{
    as_of: string;
    awaiting_signature: number;
    by_aging_bucket: Record<string, number>;
    sla_breached: number;
    sla_days: number | null;
  }>('braes.orders.aging');
  t.equal(orders.sla_days, SLA_DAYS, "the agency's SLA, the one sla_breached is counted against");
  const listed = (await phi.request({ method: 'GET', url: '/api/v1/ext/physician-orders?limit=100' })).json().data as {
    sla_days: number;
  }[];
  t.ok(
    listed.length > 0 && listed.every((order) => order.sla_days === orders.sla_days),
    'every order names the same SLA',
  );

  const awaiting = { status: 'awaiting_signature', as_of: orders.as_of };
  const { meta } = await get('physician-orders', { ...awaiting, limit: 1 });
  t.equal(orders.awaiting_signature, meta.total, 'awaiting signature');
  t.same(
    orders.by_aging_bucket,
    Object.fromEntries(Object.keys(orders.by_aging_bucket).map((bucket) => [bucket, meta.summary[bucket]])),
    "the list's buckets",
  );
  t.same(
    Object.keys(orders.by_aging_bucket).sort(),
    Object.keys(meta.summary)
      .filter((key) => key !== 'sla_breached')
      .sort(),
    'every bucket',
  );
  t.equal(orders.sla_breached, await total('physician-orders', { ...awaiting, sla_breached: true }), 'past the SLA');
  t.ok(
    orders.sla_breached > 0 && orders.sla_breached < orders.awaiting_signature,
    'the seed has orders on both sides of the SLA',
  );
  const declared = ajv.getValidator(
    tools.find((tool) => tool.name === 'braes.orders.aging')!.outputSchema as JsonSchemaType,
  );
  t.notOk(
    declared({ ...orders, sla_days: String(SLA_DAYS) }).valid,
    'the declared schema refuses a figure of the wrong type',
  );
  t.notOk(declared({ ...orders, awaiting_exact: true }).valid, 'and a figure it does not declare');

  const byPhysician = await queryRows('unsigned_orders_by_physician', {});
  t.equal(orders.awaiting_signature, sum(byPhysician, 'total'), 'unsigned_orders_by_physician: total');
  t.equal(orders.sla_breached, sum(byPhysician, 'sla_breached'), 'unsigned_orders_by_physician: past the SLA');
  for (const [bucket, count] of Object.entries(orders.by_aging_bucket))
    t.equal(count, sum(byPhysician, bucket), `unsigned_orders_by_physician: ${bucket}`);
  const each = await queryRows('orders_awaiting_signature', {});
  t.equal(
    orders.sla_breached,
    each.filter((order) => order.sla_breached === true).length,
    'orders_awaiting_signature: past the SLA',
  );
});

t.test("braes.quality.hhvbp_summary and hhvbp_measures: the routes' answers", async (t) => {
  for (const performance_year of [2024, 2025]) {
    const summary = await figures<Row>('braes.quality.hhvbp_summary', { performance_year });
    t.same(
      summary.summary,
      (await get('quality/hhvbp/summary', { performance_year })).data,
      `${performance_year}: summary`,
    );
    const measures = await figures<Row>('braes.quality.hhvbp_measures', { performance_year });
    t.same(
      measures.measures,
      (await get('quality/hhvbp/measures', { performance_year })).data,
      `${performance_year}: measures`,
    );
  }
  const refused = (await client.callTool({
    name: 'braes.quality.hhvbp_summary',
    arguments: { performance_year: 2023 },
  })) as CallToolResult;
  t.match(
    refusalOf(refused),
    { status: 404, code: 'PLATFORM_RESOURCE_NOT_FOUND' },
    "a year not imported is the route's refusal",
  );
});

t.test('braes.remittances.totals {from, to}: remittance_variance_by_payer, every payer and the sums', async (t) => {
  const range = { from: `${YEAR}-01-01`, to: `${YEAR}-12-31` };
  const remittances = await figures<{ payers: Row[]; totals: Row; complete: boolean }>(
    'braes.remittances.totals',
    range,
  );
  const payers = await queryRows('remittance_variance_by_payer', range);
  t.ok(payers.length > 0, 'the seed has ERA payments this year');
  t.same(remittances.payers, payers);
  const cents = (column: string) =>
    (payers.reduce((a, payer) => a + Math.round(Number(payer[column]) * 100), 0) / 100).toFixed(2);
  t.same(remittances.totals, {
    payments: sum(payers, 'payments'),
    claims: sum(payers, 'claims'),
    denied_claims: sum(payers, 'denied_claims'),
    ...Object.fromEntries(
      ['charged', 'paid', 'adjustments', 'patient_responsibility', 'variance'].map((column) => [column, cents(column)]),
    ),
  });
  t.equal(remittances.complete, true);
});

t.test("braes.queries.list and braes.queries.run: the catalog's queries and the route's pages", async (t) => {
  const listed = await figures<{ queries: Row[] }>('braes.queries.list');
  const catalog = (await get('catalog')).data.queries as Row[];
  t.same(
    listed.queries,
    catalog.filter((query) => query.no_phi !== 'denied'),
    "the catalog's queries a no_phi session may run",
  );

  const ask = { query_id: 'orders_awaiting_signature', limit: 3 };
  const page = await figures<Row>('braes.queries.run', ask);
  const route = await queryPage(ask.query_id, { parameters: {}, limit: ask.limit });
  t.same(
    { ...page, nextCursor: typeof page.nextCursor, as_of: typeof page.as_of },
    { ...route, nextCursor: 'string', as_of: 'string' },
  );
  // A cursor is bound to the integration it was given to: each side follows its own.
  const next = await figures<Row>('braes.queries.run', { ...ask, cursor: page.nextCursor });
  const routeNext = await queryPage(ask.query_id, { parameters: {}, limit: ask.limit, cursor: route.nextCursor });
  t.same(next.rows, routeNext.rows, 'the next page');

  const unknown = (await client.callTool({
    name: 'braes.queries.run',
    arguments: { query_id: 'no_such_query' },
  })) as CallToolResult;
  t.ok(unknown.isError);
  t.match(refusalOf(unknown), { status: 404, code: 'PLATFORM_QUERY_NOT_FOUND' });
});

t.test(
  "braes.proposals.create and status: the proposal's answers match their schemas (the partition has no proposals)",
  async (t) => {
    const task = { title: 'Check the order backlog', description: 'Figures test.', priority: 'normal' };
    const created = await figures<Row>('braes.proposals.create', {
      idempotencyKey: 'figures-proposal-1',
      summary: 'Look at the backlog.',
      action: { operation: 'create_task', task },
    });
    t.match(created, { status: 'pending', decided: false, replayed: false });
    t.match(await figures('braes.proposals.status', { approvalId: created.approvalId }), {
      approvalId: created.approvalId,
      status: 'pending',
    });
  },
);
