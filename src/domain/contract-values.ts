import { operations, type OperationId } from '../generated/contract.js';

type ParameterOf<K extends OperationId, N extends string> = Extract<
  (typeof operations)[K]['queryParameters'][number],
  { name: N }
>;
type ValueOf<K extends OperationId, N extends string> =
  ParameterOf<K, N> extends { schema: { enum: readonly (infer V)[] } } ? V : never;

/**
 * The values a list operation's query parameter takes, as openapi.json enumerates them: a figure per service line or
 * status follows the contract when it gains a value, instead of a list written again beside it.
 */
function queryParameterValues<K extends OperationId, N extends string>(
  operationId: K,
  name: N,
): readonly ValueOf<K, N>[] {
  const parameters = operations[operationId].queryParameters as readonly { name: string; schema: { enum?: unknown } }[];
  const values = parameters.find((parameter) => parameter.name === name)?.schema.enum;
  if (!Array.isArray(values)) throw new Error(`${operationId} has no query parameter ${name} with enumerated values`);
  return values as ValueOf<K, N>[];
}

export const SERVICE_LINES = queryParameterValues('listPatients', 'service_line');
export const DISPOSITIONS = queryParameterValues('listReferrals', 'disposition');
export const INTAKE_STATUSES = queryParameterValues('listIntakes', 'status');
export const VISIT_STATUSES = queryParameterValues('listVisits', 'status');

export type VisitStatusValue = (typeof VISIT_STATUSES)[number];
export type IntakeStatusValue = (typeof INTAKE_STATUSES)[number];
