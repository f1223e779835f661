import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z, type ZodRawShape, type ZodType } from 'zod';
import {
  DISPOSITIONS,
  type IntakeStatusValue,
  SERVICE_LINES,
  type VisitStatusValue,
} from '../domain/contract-values.js';
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

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const currentYear = () => new Date().getUTCFullYear();

/** The census from the governed query census_summary: its first row is the agency's total, then one per office. */
async function agencySummary(ctx: ToolContext): Promise<CallToolResult> {
  const {
    rows: [agency, ...offices],
    complete,
  } = await queryAnswer(ctx, 'census_summary', {});
  // Charts without an office count under office_id "" (Unassigned), so the offices add up to the whole.
  const structured = {
    active_patients: agency.active_patients as number,
    by_service_line: Object.fromEntries(SERVICE_LINES.map((line) => [line, agency[line]])),
    by_office: offices.map(({ office_id, office_name, active_patients }) => ({
      office_id,
      office_name,
      active_patients,
    })),
    complete,
  };
  return answered(
    `Census: ${structured.active_patients} active patients across ${offices.length} offices.`,
    structured,
  );
}

const ADMITTED: IntakeStatusValue = 'admitted';

/**
 * The year's referrals and what became of their intakes, from the governed query referral_pipeline, which counts
 * intakes by their referral's date: the intake list has no date to filter on, so its counts would be of every year.
 */
async function referralPipeline(ctx: ToolContext, { year }: { year?: number }): Promise<CallToolResult> {
  const y = year ?? currentYear();
  const {
    rows: [range],
    complete,
  } = await queryAnswer(ctx, 'referral_pipeline', { from: `${y}-01-01`, to: `${y}-12-31` });
  const byDisposition = Object.fromEntries(
    DISPOSITIONS.map((disposition) => [disposition, range[`referrals_${disposition}`] as number]),
  );
  const structured = {
    year: y,
    referrals_received: range.referrals as number,
    referrals_by_disposition: byDisposition,
    intakes_admitted: range[`intakes_${ADMITTED}`] as number,
    complete,
  };
  const { referrals_received: received, intakes_admitted: admitted } = structured;
  return answered(
    `Referrals in ${y}: ${received} received, ${byDisposition.accepted} accepted, ${byDisposition.declined} declined; ${admitted} of them admitted.`,
    structured,
  );
}

/** The year's visits by status, and visits of past years still scheduled, from the governed query visit_status_by_year. */
async function visitsMissedLate(ctx: ToolContext, { year }: { year?: number }): Promise<CallToolResult> {
  const y = year ?? currentYear();
  const { rows, complete } = await queryAnswer(ctx, 'visit_status_by_year', { year: y });
  // The query has a row only for a status some visit is in.
  const inStatus = (status: VisitStatusValue, column: 'scheduled_in_year' | 'scheduled_in_past_years') =>
    (rows.find((row) => row.status === status)?.[column] as number | undefined) ?? 0;
  const structured = {
    year: y,
    missed: inStatus('missed', 'scheduled_in_year'),
    in_progress_not_completed: inStatus('in_progress', 'scheduled_in_year'),
    still_scheduled_from_past_years: inStatus('scheduled', 'scheduled_in_past_years'),
    late_within_current_year: null,
    late_within_current_year_unavailable_reason:
      'A no_phi session knows visit dates to the year only, so a visit late by days within the current year cannot be told apart from a future one.',
    counts_exact: complete,
  };
  return answered(
    `Visits scheduled in ${y}: ${structured.missed} missed, ${structured.in_progress_not_completed} started and not completed.`,
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
/** A tool's one call reads one page of this many rows; `complete` says whether the query had more. */
const ANSWER_ROWS = 1000;

/** The rows of a governed query that answers a tool's question whole, in one call. */
async function queryAnswer(
  ctx: ToolContext,
  queryId: string,
  parameters: Record<string, unknown>,
): Promise<{ rows: Record<string, unknown>[]; complete: boolean }> {
  const page = await runQuery(ctx, queryId, { parameters, limit: ANSWER_ROWS });
  return { rows: page.rows, complete: page.nextCursor === null };
}

/** The governed query remittance_totals: its first row is the agency's total, summed in SQL numeric, then one per payer. */
async function remittanceTotals(ctx: ToolContext, { from, to }: { from: string; to: string }): Promise<CallToolResult> {
  const {
    rows: [agency, ...payerRows],
    complete,
  } = await queryAnswer(ctx, 'remittance_totals', { from, to });
  const payers = payerRows.map(({ level: _level, ...payer }) => payer);
  const totals = Object.fromEntries([...COUNT_COLUMNS, ...MONEY_COLUMNS].map((column) => [column, agency[column]]));
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
  .describe(
    "false when the governed query had more than the 1,000 rows a tool reads: the list of offices or payers is then cut short (the agency's totals are whole).",
  );
const countsExactOutput = z.boolean().describe('true: the governed query visit_status_by_year counts every visit.');
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
    .describe('The rows of remittance_variance_by_payer (remittance_totals, less its level column).'),
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
