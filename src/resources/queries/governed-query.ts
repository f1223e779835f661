import { sql, type Expression, type SelectQueryBuilder } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { TenantStore } from '../../db/tenant-store.js';
import { noPhiPlans, operations, type OperationId } from '../../generated/contract.js';

type Schemas = components['schemas'];
export type QueryColumn = Schemas['QueryColumn'];
type QueryColumnPhi = Schemas['QueryColumnPhi'];
type QueryOrder = Schemas['QueryOrder'];

/** A declared parameter: the JSON Schema of one property of the query's parameters object. */
interface ParameterSchema {
  type: 'string' | 'integer' | 'number' | 'boolean';
  description: string;
  format?: 'date' | 'date-time';
  enum?: readonly (string | number)[];
  default?: string | number | boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

export interface ParametersSchema {
  properties: Readonly<Record<string, ParameterSchema>>;
  required?: readonly string[];
}

/** A problem of a run's parameters that a JSON Schema cannot say (a date range the wrong way round). */
interface ParameterProblem {
  parameter: string;
  message: string;
}

/**
 * An approved, parameterized read (`runQuery`). Its rows are what `rows` selects: one property per declared column, in
 * the declared types, with non-null values in the order columns (they identify a row, so a page boundary is exact).
 * Parameters arrive validated against `parameters`, with defaults filled, and are only ever bound as SQL values.
 */
export interface GovernedQuery<P = Record<string, never>> {
  id: string;
  title: string;
  description: string;
  parameters: ParametersSchema;
  /** Checks across parameters, after the schema's. */
  check?(parameters: P): ParameterProblem[];
  columns: readonly QueryColumn[];
  order: QueryOrder;
  /** The scope of the data it reads, needed besides external:queries:run. */
  scope: string;
  /** The capability of the data it reads, needed besides queries.run. */
  capability: string;
  /** A query whose rows cannot be reduced for a no_phi session; otherwise its columns' phi marks decide. */
  noPhiDenied?: true;
  costUnits: number;
  /** The agency's rows, unordered and unpaged: the runner pages them by `order`. `asOf` is the run's instant. */
  rows(store: TenantStore, parameters: P, asOf: Date): SelectQueryBuilder<any, any, Record<string, unknown>>;
}

/** A column's declaration, written once per kind. */
export const column = (
  name: string,
  type: QueryColumn['type'],
  description: string,
  phi: QueryColumnPhi = { reduce: 'kept' },
): QueryColumn => ({
  name,
  type,
  description,
  phi,
});

/**
 * The no_phi mark of a property of a contract schema (its x-svc-phi, compiled into noPhiPlans) as a column's: a column
 * that serves a field of a route's resource shows a no_phi session no more of it than the route does, and the mark is
 * written once, in the contract. A reduction a column cannot carry fails at startup.
 */
export function phiOf<S extends keyof Schemas>(schema: S, property: keyof Schemas[S] & string): QueryColumnPhi {
  const reduction = noPhiPlans[schema]?.fields[property];
  if (!reduction) return { reduce: 'kept' };
  if (reduction.reduce === 'withheld' || reduction.reduce === 'year' || reduction.reduce === 'zip3')
    return { reduce: reduction.reduce };
  if (reduction.reduce === 'handle' && !reduction.when)
    return { reduce: 'handle', kind: reduction.kind as QueryColumnPhi['kind'] };
  throw new Error(`${schema}.${property}: its no_phi mark ${JSON.stringify(reduction)} cannot be a column's`);
}

/**
 * The first column of a query that totals its groups in SQL (GROUPING SETS with the empty set): `agency` on the row of
 * the agency's total, which sorts first so that a one-page read always has it, `group` on each group's row.
 */
export const levelColumn = (group: string): QueryColumn =>
  column('level', 'string', `agency on the first row, the agency's total; ${group} on each ${group}'s row.`);

/** The level of a row, from `grouped`, one of the expressions the query groups its rows by. */
export const levelOf = (group: string, grouped: Expression<unknown>) =>
  sql<string>`case when grouping(${grouped}) = 1 then 'agency' else ${sql.lit(group)} end`.as('level');

/** Shared parameter declarations. */
export const DATE_RANGE: ParametersSchema['properties'] = {
  from: { type: 'string', format: 'date', description: 'First day of the range (UTC calendar day, included).' },
  to: {
    type: 'string',
    format: 'date',
    description: 'Last day of the range (UTC calendar day, included); at most 366 days after from.',
  },
};

export const OFFICE_ID: ParameterSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  description: 'Only this office (its id, as the catalog of offices and the clinical lists give it).',
};

const DAY_MS = 86_400_000;

/** from ≤ to, at most 366 days apart. */
export function checkDateRange({ from, to }: { from: string; to: string }): ParameterProblem[] {
  const days = (Date.parse(to) - Date.parse(from)) / DAY_MS;
  if (days < 0) return [{ parameter: 'to', message: `to (${to}) is before from (${from})` }];
  if (days > 365) return [{ parameter: 'to', message: `the range from ${from} to ${to} is longer than 366 days` }];
  return [];
}

/** The day after a date, for half-open ranges: [from, to + 1 day). */
export function dayAfter(date: string): string {
  return new Date(Date.parse(date) + DAY_MS).toISOString().slice(0, 10);
}

/**
 * The scope and capability of a query: those of the route whose data it reads, from the contract, so that a query never
 * reaches data its route would refuse.
 */
export function readsDataOf(operationId: OperationId): { scope: string; capability: string } {
  const { scope, capability } = operations[operationId] as { scope?: string; capability?: string };
  if (!scope || !capability) throw new Error(`${operationId} has no scope and capability to read its data with`);
  return { scope, capability };
}
