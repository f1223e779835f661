import { sql } from 'kysely';
import type { CursorSealer } from '../../db/cursor-sealer.js';
import { isDatabaseUnavailable, isStatementTimeout } from '../../db/sql-state.js';
import { PlatformError } from '../../shared/platform-error.js';
import { canonicalJson } from '../../shared/canonical-json.js';
import type { Handler } from '../handler.js';
import type { GovernedQuery, QueryColumn } from './governed-query.js';
import { queryNotFound, type QueryRegistry } from './query-registry.js';
import type { TenantStore } from '../../db/tenant-store.js';

type AnyQuery = GovernedQuery<any>;
type Row = Record<string, unknown>;
type KeyValue = string | number | boolean;

/** Rows per page (QueryRunRequest.limit). */
const DEFAULT_QUERY_LIMIT = 100;

/** Each run's statement is cancelled past this (504 PLATFORM_TIMEOUT), well within the handler's own time limit. */
const QUERY_STATEMENT_TIMEOUT_MS = 5_000;

/** What a cursor carries: the query, the last row's order values and the walk's instant. */
interface QueryCursor {
  after: KeyValue[];
  asOf: Date;
}

const cursorMismatch = () =>
  new PlatformError(
    'PLATFORM_INVALID_INPUT',
    'cursor is not one this query returned to this integration, in this PHI mode, for these parameters; send back data.nextCursor unchanged, with the same parameters.',
    { field: 'cursor' },
  );

async function openCursor(
  cursors: CursorSealer,
  query: AnyQuery,
  parameters: Row,
  cursor: string,
): Promise<QueryCursor> {
  const opened = await cursors.open(cursor, parameters);
  const [id, after, asOf] = Array.isArray(opened) ? opened : [];
  const fits =
    Array.isArray(after) &&
    after.length === query.order.columns.length &&
    after.every((v) => ['string', 'number', 'boolean'].includes(typeof v));
  if (id !== query.id || !fits || typeof asOf !== 'string' || Number.isNaN(Date.parse(asOf))) throw cursorMismatch();
  return { after, asOf: new Date(asOf) };
}

const TYPE_CHECKS: Record<QueryColumn['type'], (value: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  integer: (v) => Number.isSafeInteger(v),
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  boolean: (v) => typeof v === 'boolean',
  date: (v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v),
  'date-time': (v) => v instanceof Date && !Number.isNaN(v.getTime()),
};

function mismatch(query: AnyQuery, message: string, details: Record<string, string>): PlatformError {
  return new PlatformError(
    'PLATFORM_QUERY_COLUMN_MISMATCH',
    `${query.id} returned rows that do not match its declared columns (${message}); no rows are returned.`,
    { query_id: query.id, ...details },
  );
}

/**
 * Rows as the contract serves them, checked against the declared columns: exactly those properties, values of the
 * declared types or null (order columns never null). A query that drifted from its declaration is refused whole.
 */
function servedRows(query: AnyQuery, rows: Row[]): Row[] {
  const declared = query.columns.map((c) => c.name);
  return rows.map((row) => {
    const names = Object.keys(row);
    const extra = names.find((name) => !declared.includes(name));
    if (extra !== undefined) throw mismatch(query, `undeclared column ${extra}`, { column: extra });
    const served: Row = {};
    for (const { name, type } of query.columns) {
      if (!(name in row)) throw mismatch(query, `column ${name} is missing`, { column: name });
      const value = row[name];
      if (value === null && !query.order.columns.includes(name)) {
        served[name] = null;
        continue;
      }
      if (!TYPE_CHECKS[type](value))
        throw mismatch(query, `column ${name} holds ${value === null ? 'null' : typeof value}, not ${type}`, {
          column: name,
        });
      served[name] = value instanceof Date ? value.toISOString() : value;
    }
    return served;
  });
}

function keyOf(query: AnyQuery, row: Row): KeyValue[] {
  return query.order.columns.map((name) => {
    const value = row[name];
    return value instanceof Date ? value.toISOString() : (value as KeyValue);
  });
}

/** One page (and one row more) of the query in its keyset order, after `after`, under the run's statement timeout. */
export async function queryPage(
  store: TenantStore,
  query: AnyQuery,
  parameters: Row,
  asOf: Date,
  after: KeyValue[] | undefined,
  limit: number,
): Promise<Row[]> {
  const columns = query.order.columns.map((c) => sql.ref(`q.${c}`));
  const direction = query.order.direction;
  let page = store.selectFromRows(query.rows(store, parameters, asOf).as('q')).selectAll();
  if (after)
    page = page.where(
      sql<boolean>`(${sql.join(columns)}) ${sql.raw(direction === 'asc' ? '>' : '<')} (${sql.join(after)})`,
    );
  const ordered = query.order.columns.reduce((q, c) => q.orderBy(sql.ref(`q.${c}`), direction), page).limit(limit + 1);
  return (await store.readWithin(QUERY_STATEMENT_TIMEOUT_MS, ordered)) as Row[];
}

async function runPage(
  store: TenantStore,
  query: AnyQuery,
  parameters: Row,
  asOf: Date,
  after: KeyValue[] | undefined,
  limit: number,
): Promise<Row[]> {
  try {
    return await queryPage(store, query, parameters, asOf, after, limit);
  } catch (err) {
    if (isStatementTimeout(err) || isDatabaseUnavailable(err)) throw err;
    throw Object.assign(
      new PlatformError(
        'PLATFORM_QUERY_EXECUTION_FAILED',
        `${query.id} failed while executing; retry, and quote the correlationId to support if it persists.`,
        { query_id: query.id },
      ),
      { cause: err },
    );
  }
}

/** `runQuery`: one page of a governed query's rows, for the caller's agency, with a cursor bound to the query and its parameters. */
export function runQueryHandler(registry: QueryRegistry): Handler<'runQuery'> {
  return async (ctx) => {
    const query = registry.get(ctx.params.queryId);
    if (!query) throw queryNotFound(ctx.params.queryId);
    const body = ctx.body;
    const grant = ctx.principal.queryToken;
    const sent = body.parameters === undefined ? undefined : registry.parameters(query, body.parameters);
    // A token's parameters are checked as the query declares them now (a changed declaration refuses them clearly, and
    // fills a default it gained), then compared with what was sent in the same form.
    const granted = grant ? registry.parameters(query, grant.parameters) : undefined;
    if (granted && sent !== undefined && canonicalJson(sent) !== canonicalJson(granted)) {
      throw new PlatformError(
        'PLATFORM_QUERY_NOT_ALLOWED',
        "A query token runs its query with its own parameters only; omit parameters, or send exactly the token's.",
        { query_id: query.id },
      );
    }
    const parameters = granted ?? sent ?? registry.parameters(query, {});
    const limit = body.limit ?? DEFAULT_QUERY_LIMIT;
    const cursor =
      body.cursor === undefined ? undefined : await openCursor(ctx.cursors, query, parameters, body.cursor);
    const asOf = cursor?.asOf ?? new Date();
    ctx.store.auditDetails({
      query_id: query.id,
      parameters,
      natural_language_input: body.natural_language_input ?? body.naturalLanguageInput ?? null,
      query_token_id: grant?.id ?? null,
    });
    const fetched = await runPage(ctx.store, query, parameters, asOf, cursor?.after, limit);
    const rows = servedRows(query, fetched.slice(0, limit));
    const last = fetched.length > limit ? fetched[limit - 1] : undefined;
    const nextCursor = last
      ? await ctx.cursors.seal([query.id, keyOf(query, last), asOf.toISOString()], parameters)
      : null;
    return {
      data: {
        query_id: query.id,
        columns: query.columns.map((c) => ({ ...c })),
        rows,
        row_count: rows.length,
        nextCursor,
        as_of: asOf.toISOString(),
      },
    };
  };
}
