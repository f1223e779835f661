import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z, type ZodRawShape, type ZodType } from 'zod';
import { AGING_BUCKETS, type AgingBucket } from '../domain/physician-orders/aging.js';
import type { OperationId } from '../generated/contract.js';
import { callOperation, type DirectCallInput } from '../gateway/core/direct-call.js';
import type { Refusal } from '../gateway/core/error-response.js';
import type { Gateway } from '../gateway/core/gateway.js';
import type { Principal } from '../shared/principal.js';
import { contractSchema } from './contract-schemas.js';

/** What one tool call runs as and through. */
interface ToolContext {
  gateway: Gateway;
  principal: Principal;
}

/** An operation's refusal, handed to the assistant in the contract's terms (code, message, next step), never a stack. */
class OperationRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly refusal: Refusal,
  ) {
    super('operation refused');
  }
}

interface ListMeta {
  total: number;
  total_exact?: boolean;
  summary?: Record<string, unknown>;
  as_of?: string;
  [key: string]: unknown;
}

async function call<K extends OperationId>(
  ctx: ToolContext,
  input: Omit<DirectCallInput<K>, 'principal'>,
): Promise<{ data: unknown; meta: ListMeta }> {
  const result = await callOperation(ctx.gateway, { ...input, principal: ctx.principal } as DirectCallInput<K>);
  if (result.refusal) throw new OperationRefused(result.status, result.body, result.refusal);
  return result.body as { data: unknown; meta: ListMeta };
}

/** A list's match count: one row asked for, meta.total read (exact up to 1,000 matches, the planner's estimate past it). */
async function count<K extends OperationId>(
  ctx: ToolContext,
  operationId: K,
  query: Record<string, unknown>,
): Promise<{ total: number; exact: boolean }> {
  const { meta } = await call(ctx, { operationId, query: { ...query, limit: 1 } as never });
  return { total: meta.total, exact: meta.total_exact !== false };
}

function answered(summary: string, structured: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text: `${summary}\n${JSON.stringify(structured)}` }],
    structuredContent: structured,
  };
}

/**
 * A refusal as a tool error: its code and message, then its JSON. Text only: structured content must match the tool's
 * outputSchema, which describes answers (clients validate any structured content they get, errors' too).
 */
export function toolError(refusal: { code: string; message: string } & Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `Refused (${refusal.code}): ${refusal.message}\n${JSON.stringify(refusal)}` }],
  };
}

/** Either error shape of the contract, as the assistant gets it; validation issues when the body has them. */
function refused(err: unknown): CallToolResult {
  if (!(err instanceof OperationRefused)) throw err;
  const issues = (err.body as { issues?: { path?: string; message?: string }[] }).issues ?? [];
  return toolError({
    status: err.status,
    code: err.refusal.code,
    message: err.refusal.message,
    next_step: err.refusal.nextStep ?? null,
    issues: issues.map((issue) => ({ path: issue.path ?? '', message: issue.message ?? '' })),
  });
}

function guarded<A>(run: (args: A) => Promise<CallToolResult>) {
  return async (args: A) => {
    try {
      return await run(args);
    } catch (err) {
      return refused(err);
    }
  };
}

const SERVICE_LINES = ['home_health', 'hospice', 'private_duty'] as const;
const DISPOSITIONS = ['accepted', 'declined'] as const;
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const yearBoundary = (year: number) => `${year}-01-01T00:00:00Z`;
const currentYear = () => new Date().getUTCFullYear();

/** The census from the governed query active_census: exact counts per office and service line, in one read. */
async function agencySummary(ctx: ToolContext): Promise<CallToolResult> {
  const { rows, complete } = await queryRows(ctx, 'active_census', {});
  const byLine = Object.fromEntries(SERVICE_LINES.map((line) => [line, 0])) as Record<string, number>;
  const byOffice = new Map<string, { office_id: string; office_name: string; active_patients: number }>();
  for (const row of rows as {
    office_id: string;
    office_name: string;
    service_line: string;
    active_patients: number;
  }[]) {
    byLine[row.service_line] = (byLine[row.service_line] ?? 0) + row.active_patients;
    const office = byOffice.get(row.office_id) ?? {
      office_id: row.office_id,
      office_name: row.office_name,
      active_patients: 0,
    };
    office.active_patients += row.active_patients;
    byOffice.set(row.office_id, office);
  }
  const activePatients = Object.values(byLine).reduce((a, b) => a + b, 0);
  // Charts without an office count under office_id "" (Unassigned), so the offices add up to the whole.
  const structured = {
    active_patients: activePatients,
    by_service_line: byLine,
    by_office: [...byOffice.values()],
    complete,
  };
  return answered(`Census: ${activePatients} active patients across ${byOffice.size} offices.`, structured);
}

const sumOf = (rows: Record<string, unknown>[], column: string) =>
  rows.reduce((total, row) => total + Number(row[column] ?? 0), 0);

/**
 * The year's referrals and what became of their intakes, from the governed queries that count them by referral date:
 * the intake list has no date to filter on, so its counts would be of every year.
 */
async function referralPipeline(ctx: ToolContext, { year }: { year?: number }): Promise<CallToolResult> {
  const y = year ?? currentYear();
  const range = { from: `${y}-01-01`, to: `${y}-12-31` };
  const [bySource, conversion] = await Promise.all([
    queryRows(ctx, 'referrals_by_source', range),
    queryRows(ctx, 'intake_conversion_by_source', range),
  ]);
  const byDisposition = Object.fromEntries(
    DISPOSITIONS.map((disposition) => [
      disposition,
      sumOf(
        bySource.rows.filter((row) => row.disposition === disposition),
        'referrals',
      ),
    ]),
  );
  const structured = {
    year: y,
    referrals_received: sumOf(conversion.rows, 'referrals'),
    referrals_by_disposition: byDisposition,
    intakes_admitted: sumOf(conversion.rows, 'admitted'),
    complete: bySource.complete && conversion.complete,
  };
  const { referrals_received: received, intakes_admitted: admitted } = structured;
  return answered(
    `Referrals in ${y}: ${received} received, ${byDisposition.accepted} accepted, ${byDisposition.declined} declined; ${admitted} of them admitted.`,
    structured,
  );
}

async function visitsMissedLate(ctx: ToolContext, { year }: { year?: number }): Promise<CallToolResult> {
  const y = year ?? currentYear();
  const window = { scheduled_from: yearBoundary(y), scheduled_to: yearBoundary(y + 1) };
  const before = { scheduled_to: yearBoundary(Math.min(y + 1, currentYear())) };
  const [missed, inProgress, overdue] = await Promise.all([
    count(ctx, 'listVisits', { ...window, status: 'missed' }),
    count(ctx, 'listVisits', { ...window, status: 'in_progress' }),
    count(ctx, 'listVisits', { ...before, status: 'scheduled' }),
  ]);
  const structured = {
    year: y,
    missed: missed.total,
    in_progress_not_completed: inProgress.total,
    still_scheduled_from_past_years: overdue.total,
    late_within_current_year: null,
    late_within_current_year_unavailable_reason:
      'A no_phi session knows visit dates to the year only, so a visit late by days within the current year cannot be told apart from a future one.',
    counts_exact: missed.exact && inProgress.exact && overdue.exact,
  };
  return answered(
    `Visits scheduled in ${y}: ${missed.total} missed, ${inProgress.total} started and not completed.`,
    structured,
  );
}

/**
 * The order list's aging summary, which counts the orders awaiting signature whatever else the list holds. The list is
 * not filtered to them: its one order, of any status, carries the agency's SLA (sla_days, the bound sla_breached is
 * counted against), which the list's meta does not. Exact counts: the buckets are counts, not a page's estimate.
 */
async function ordersAging(ctx: ToolContext): Promise<CallToolResult> {
  const { data, meta } = await call(ctx, { operationId: 'listPhysicianOrders', query: { limit: 1 } });
  const { sla_breached: slaBreached, ...byBucket } = meta.summary as Record<AgingBucket | 'sla_breached', number>;
  const [order] = data as { sla_days: number }[];
  const structured = {
    as_of: meta.as_of as string,
    awaiting_signature: Object.values(byBucket).reduce((a, b) => a + b, 0),
    by_aging_bucket: byBucket,
    sla_breached: slaBreached,
    sla_days: order?.sla_days ?? null,
  };
  const sla = structured.sla_days === null ? 'SLA' : `${structured.sla_days}-day SLA`;
  return answered(
    `${structured.awaiting_signature} physician orders await signature; ${slaBreached} are past the agency's ${sla}.`,
    structured,
  );
}

const yearsQuery = (args: { performance_year?: number; payment_year?: number }) => ({
  performance_year: args.performance_year ?? currentYear() - 1,
  ...(args.payment_year === undefined ? {} : { payment_year: args.payment_year }),
});

async function hhvbpSummary(
  ctx: ToolContext,
  args: { performance_year?: number; payment_year?: number },
): Promise<CallToolResult> {
  const { data } = await call(ctx, { operationId: 'getHhvbpSummary', query: yearsQuery(args) as never });
  return answered(
    "HHVBP cycle summary (modeled_* is this service's projection, official_regulator_* the published result).",
    { summary: data },
  );
}

async function hhvbpMeasures(
  ctx: ToolContext,
  args: { performance_year?: number; payment_year?: number },
): Promise<CallToolResult> {
  const { data } = await call(ctx, { operationId: 'listHhvbpMeasures', query: yearsQuery(args) as never });
  return answered(`HHVBP measure scores: ${(data as unknown[]).length} measures.`, { measures: data });
}

interface QueryPage {
  query_id: string;
  columns: { name: string; type: string }[];
  rows: Record<string, unknown>[];
  row_count: number;
  nextCursor: string | null;
  as_of: string;
}

/** One `runQuery` page, run as a no_phi session: the gateway reduces its columns from their marks. */
async function runQuery(
  ctx: ToolContext,
  queryId: string,
  body: { parameters?: Record<string, unknown>; limit?: number; cursor?: string },
): Promise<QueryPage> {
  const { data } = await call(ctx, { operationId: 'runQuery', params: { queryId }, body: body as never });
  return data as QueryPage;
}

/** The governed queries a no_phi session may run (the catalog's `no_phi` is not `denied`), as the catalog describes them. */
async function listQueries(ctx: ToolContext): Promise<CallToolResult> {
  const { data } = await call(ctx, { operationId: 'getCatalog' });
  const queries = ((data as { queries?: Record<string, unknown>[] }).queries ?? []).filter(
    (query) => query.no_phi !== 'denied',
  );
  return answered(
    `${queries.length} governed queries can be run here: ${queries.map((query) => query.id).join(', ')}.`,
    { queries },
  );
}

async function runGovernedQuery(
  ctx: ToolContext,
  args: { query_id: string; parameters?: Record<string, unknown>; limit?: number; cursor?: string },
): Promise<CallToolResult> {
  const page = await runQuery(ctx, args.query_id, {
    parameters: args.parameters ?? {},
    limit: args.limit ?? 100,
    ...(args.cursor ? { cursor: args.cursor } : {}),
  });
  const more = page.nextCursor ? ' More rows follow: call again with cursor.' : '';
  return answered(
    `${args.query_id}: ${page.row_count} rows as of ${page.as_of}.${more}`,
    page as unknown as Record<string, unknown>,
  );
}

const COUNT_COLUMNS = ['payments', 'claims', 'denied_claims'] as const;
const MONEY_COLUMNS = ['charged', 'paid', 'adjustments', 'patient_responsibility', 'variance'] as const;
/** Two-decimal strings added in cents, so no float drifts into a money total. */
const addMoney = (a: string, b: unknown) =>
  ((Math.round(Number(a) * 100) + Math.round(Number(b ?? 0) * 100)) / 100).toFixed(2);
/** Tools that sum a query read its rows a page of 1,000 at a time; past this many pages they stop and say so (`complete`). */
const MAX_SUMMED_PAGES = 10;

/** Every row of a governed query (up to MAX_SUMMED_PAGES pages), for a tool that sums them. */
async function queryRows(
  ctx: ToolContext,
  queryId: string,
  parameters: Record<string, unknown>,
): Promise<{ rows: Record<string, unknown>[]; complete: boolean }> {
  const rows: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await runQuery(ctx, queryId, { parameters, limit: 1000, ...(cursor ? { cursor } : {}) });
    rows.push(...page.rows);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && ++pages < MAX_SUMMED_PAGES);
  return { rows, complete: cursor === undefined };
}

async function remittanceTotals(ctx: ToolContext, { from, to }: { from: string; to: string }): Promise<CallToolResult> {
  const { rows: payers, complete } = await queryRows(ctx, 'remittance_variance_by_payer', { from, to });
  const totals: Record<string, string | number> = {};
  for (const column of COUNT_COLUMNS) totals[column] = sumOf(payers, column);
  for (const column of MONEY_COLUMNS)
    totals[column] = payers.reduce((sum, payer) => addMoney(sum, payer[column]), '0.00');
  const structured = { from, to, payers, totals, complete };
  return answered(
    `ERA payments from ${from} to ${to}: ${payers.length} payers, ${String(totals.paid)} paid on ${String(totals.claims)} claims.`,
    structured,
  );
}

const yearInput = {
  year: z.number().int().min(2000).max(2100).optional().describe('Calendar year (UTC); default the current year.'),
};
const hhvbpInput = {
  performance_year: z.number().int().min(2020).max(2100).optional().describe('Performance year; default last year.'),
  payment_year: z.number().int().min(2022).max(2102).optional().describe('Payment year; default performance_year + 2.'),
};

const dateRangeInput = {
  from: z.iso.date().describe('First payment day (YYYY-MM-DD, included).'),
  to: z.iso.date().describe('Last payment day (YYYY-MM-DD, included); at most 366 days after from.'),
};
const queryRunInput = {
  query_id: z.string().min(1).max(100).describe('A governed query id, as braes.queries.list gives it.'),
  parameters: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The query's parameters, as its parameters_schema declares them."),
  limit: z.number().int().min(1).max(1000).optional().describe('Rows per page; default 100.'),
  cursor: z.string().min(1).max(2000).optional().describe('nextCursor of the previous page, to continue.'),
};

const counted = z.number().int().min(0);
const countsOf = (keys: readonly string[], description: string) =>
  z.object(Object.fromEntries(keys.map((key) => [key, counted]))).describe(description);
const completeOutput = z
  .boolean()
  .describe('false when the query had more pages than a tool reads: the figures are then partial.');
const countsExactOutput = z.boolean().describe('false when a count is past 1,000 matches, where the lists estimate.');
const money = z.string().regex(/^-?\d+\.\d{2}$/);
const remittanceFigures = {
  ...Object.fromEntries(COUNT_COLUMNS.map((column) => [column, counted])),
  ...Object.fromEntries(MONEY_COLUMNS.map((column) => [column, money])),
} as ZodRawShape;

const censusOutput = {
  active_patients: counted,
  by_service_line: countsOf(SERVICE_LINES, 'Active patients per service line.'),
  by_office: z.array(
    z.object({
      office_id: z.string().describe('"" for charts without an office.'),
      office_name: z.string(),
      active_patients: counted,
    }),
  ),
  complete: completeOutput,
};
const pipelineOutput = {
  year: z.number().int(),
  referrals_received: counted.describe('Referrals dated in the year (UTC).'),
  referrals_by_disposition: countsOf(DISPOSITIONS, "The year's referrals per disposition."),
  intakes_admitted: counted.describe("Of the year's referrals, those whose intake was admitted."),
  complete: completeOutput,
};
const visitsOutput = {
  year: z.number().int(),
  missed: counted,
  in_progress_not_completed: counted,
  still_scheduled_from_past_years: counted,
  late_within_current_year: z.null(),
  late_within_current_year_unavailable_reason: z.string(),
  counts_exact: countsExactOutput,
};
const ordersOutput = {
  as_of: z.string().describe('The instant the orders are aged at.'),
  awaiting_signature: counted,
  by_aging_bucket: countsOf(
    AGING_BUCKETS,
    'Orders awaiting signature by office-calendar days since sent (not_sent: not sent yet).',
  ),
  sla_breached: counted.describe("Orders awaiting signature for longer than the agency's SLA."),
  sla_days: z
    .number()
    .int()
    .min(0)
    .nullable()
    .describe("The agency's signature SLA in days, as its orders carry it; null when the agency has no order."),
};
const remittanceOutput = {
  from: z.string(),
  to: z.string(),
  payers: z
    .array(z.looseObject({ payer_name: z.string(), payer_id: z.string(), ...remittanceFigures }))
    .describe('The rows of remittance_variance_by_payer.'),
  totals: z.object(remittanceFigures),
  complete: completeOutput,
};

/** A tool as the catalog describes it. */
export interface ToolDescription {
  name: string;
  title: string;
  description: string;
  read_only: boolean;
}

interface ReadTool {
  name: string;
  title: string;
  description: string;
  inputSchema?: ZodRawShape;
  /** What structuredContent holds: a shape, or a schema of the contract's for a route's own objects. */
  outputSchema: ZodRawShape | ZodType;
  run(ctx: ToolContext, args: any): Promise<CallToolResult>;
}

type YearArgs = { year?: number };
type HhvbpArgs = { performance_year?: number; payment_year?: number };

const READ_TOOLS: readonly ReadTool[] = [
  {
    name: 'braes.agency.summary',
    title: 'Agency census',
    description: 'Active patients of the agency, by service line and by office (counts only, no patient data).',
    outputSchema: censusOutput,
    run: (ctx) => agencySummary(ctx),
  },
  {
    name: 'braes.referrals.pipeline',
    title: 'Referral pipeline',
    description:
      'Referrals received in a calendar year by disposition, and how many of them were admitted (counts only).',
    inputSchema: yearInput,
    outputSchema: pipelineOutput,
    run: (ctx, args: YearArgs) => referralPipeline(ctx, args),
  },
  {
    name: 'braes.visits.missed_late',
    title: 'Missed and late visits',
    description:
      'Visits of a calendar year that were missed or started and not completed, and visits of past years still scheduled (counts only; dates are known to the year in no_phi).',
    inputSchema: yearInput,
    outputSchema: visitsOutput,
    run: (ctx, args: YearArgs) => visitsMissedLate(ctx, args),
  },
  {
    name: 'braes.orders.aging',
    title: 'Physician orders by aging bucket',
    description:
      "Physician orders awaiting signature, by aging bucket, and how many are past the agency's signature SLA.",
    outputSchema: ordersOutput,
    run: (ctx) => ordersAging(ctx),
  },
  {
    name: 'braes.quality.hhvbp_summary',
    title: 'HHVBP summary',
    description:
      "The agency's HHVBP cycle summary: modeled total performance score and payment adjustment beside the regulator's published figures.",
    inputSchema: hhvbpInput,
    outputSchema: { summary: contractSchema('HhvbpSummary') },
    run: (ctx, args: HhvbpArgs) => hhvbpSummary(ctx, args),
  },
  {
    name: 'braes.quality.hhvbp_measures',
    title: 'HHVBP measures',
    description: "The agency's HHVBP measure scores for a performance year.",
    inputSchema: hhvbpInput,
    outputSchema: { measures: z.array(contractSchema('HhvbpMeasure')) },
    run: (ctx, args: HhvbpArgs) => hhvbpMeasures(ctx, args),
  },
  {
    name: 'braes.remittances.totals',
    title: 'Remittance totals by payer',
    description:
      'ERA (835) payments received between two payment dates, per payer and in all: payments, claims, charged, paid, adjustments, patient responsibility, variance and denied claims (money as two-decimal strings).',
    inputSchema: dateRangeInput,
    outputSchema: remittanceOutput,
    run: (ctx, args: { from: string; to: string }) => remittanceTotals(ctx, args),
  },
  {
    name: 'braes.queries.list',
    title: 'Governed queries',
    description:
      'The approved, parameterized reads this surface may run (those a de-identified session may see), with their parameters and columns.',
    outputSchema: { queries: z.array(contractSchema('CatalogQuery')) },
    run: (ctx) => listQueries(ctx),
  },
  {
    name: 'braes.queries.run',
    title: 'Run a governed query',
    description:
      "One page of a governed query's rows, de-identified as its columns declare; follow nextCursor for more.",
    inputSchema: queryRunInput,
    outputSchema: contractSchema('QueryRunResult'),
    run: (ctx, args: { query_id: string; parameters?: Record<string, unknown>; limit?: number; cursor?: string }) =>
      runGovernedQuery(ctx, args),
  },
];

export const READ_TOOL_DESCRIPTIONS: readonly ToolDescription[] = READ_TOOLS.map(({ name, title, description }) => ({
  name,
  title,
  description,
  read_only: true,
}));

/** The read-only tools: every figure comes from a REST operation run in no_phi through the gateway (policy, limits, metering, audit). */
export function registerReadTools(server: McpServer, ctx: ToolContext) {
  for (const { name, title, description, inputSchema, outputSchema, run } of READ_TOOLS) {
    server.registerTool(
      name,
      { title, description, inputSchema, outputSchema, annotations: READ_ONLY },
      guarded((args: unknown) => run(ctx, args)) as never,
    );
  }
}
