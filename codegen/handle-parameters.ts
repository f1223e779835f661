import { resolve, type Json, type JsonObject, type OperationEntry } from './contract-document.js';
import { PSEUDONYM_PREFIX } from '../src/shared/ids.js';

/**
 * The ids a no_phi session sends as surrogate handles, per operation: parameters and request body properties with an
 * `x-svc-phi` `handle` mark, the mark output properties carry (a request property shares its schema with the answer).
 */
const MARK = 'x-svc-phi';

export interface HandleParameter {
  in: 'path' | 'query' | 'body';
  /** The parameter's name, or the body property's dotted path: where the value is, and the field a refusal names. */
  field: string;
  kind: string;
  /** A body property is a handle only when a sibling property has one of these values. */
  when?: { property: string; values: string[] };
}

const reduceOf = (mark: Json | undefined) =>
  typeof mark === 'string' ? mark : (mark as JsonObject | null | undefined)?.reduce;

function handleMark(where: string, mark: Json, problems: string[]): Omit<HandleParameter, 'in' | 'field'> {
  const spec = (typeof mark === 'string' ? { reduce: mark } : mark) as JsonObject;
  const kind = (spec.kind as string | undefined) ?? 'patient';
  if (!(kind in PSEUDONYM_PREFIX)) problems.push(`${where}: ${JSON.stringify(kind)} is not a handle kind`);
  const when = spec.when as Record<string, string[]> | undefined;
  const condition = when && Object.entries(when).map(([property, values]) => ({ property, values }))[0];
  return { kind, ...(condition ? { when: condition } : {}) };
}

/**
 * The handle-marked properties of a request body, through its component schemas, as dotted paths (a schema shared
 * with answers carries their other reductions too, which say nothing about what is sent). A handle inside a list is
 * refused: the gateway resolves one value per mark.
 */
function bodyHandles(doc: JsonObject, schema: Json, prefix: string, problems: string[], enclosing = new Set<Json>()) {
  const node = resolve(doc, schema) as JsonObject;
  if (enclosing.has(node)) return [];
  const within = new Set(enclosing).add(node);
  if (node.items && bodyHandles(doc, node.items, `${prefix}[].`, [], within).length > 0)
    problems.push(`body ${prefix.slice(0, -1)}: a handle inside a list is not resolved by the gateway`);
  const found: HandleParameter[] = [];
  for (const [name, property] of Object.entries((node.properties ?? {}) as JsonObject)) {
    const field = `${prefix}${name}`;
    const mark = (property as JsonObject)[MARK];
    if (reduceOf(mark) === 'handle') found.push({ in: 'body', field, ...handleMark(`body ${field}`, mark, problems) });
    else found.push(...bodyHandles(doc, property, `${field}.`, problems, within));
  }
  return found;
}

function parameterHandles(entry: OperationEntry, problems: string[]): HandleParameter[] {
  return entry.parameters.flatMap((p) => {
    const where = `${entry.operationId} ${p.name}`;
    const reduce = reduceOf(p[MARK]);
    if (reduce !== undefined && reduce !== 'handle') problems.push(`${where}: a parameter takes only a handle mark`);
    if (reduce !== 'handle') return [];
    if (p.in !== 'path' && p.in !== 'query') problems.push(`${where}: only path and query parameters`);
    return [{ in: p.in as 'path' | 'query', field: p.name, ...handleMark(where, p[MARK], problems) }];
  });
}

function handlesOf(doc: JsonObject, entry: OperationEntry, problems: string[]): HandleParameter[] {
  const parameters = parameterHandles(entry, problems);
  const content = (resolve(doc, entry.operation.requestBody ?? null) as JsonObject | null)?.content as
    | JsonObject
    | undefined;
  const json = content?.['application/json'] as JsonObject | undefined;
  return json ? [...parameters, ...bodyHandles(doc, json.schema, '', problems)] : parameters;
}

/** Each operation that takes a handle, and where; throws listing every mark it cannot honour. */
export function handleParameters(doc: JsonObject, operations: OperationEntry[]): Record<string, HandleParameter[]> {
  const problems: string[] = [];
  const table: Record<string, HandleParameter[]> = {};
  for (const entry of operations) {
    const handles = handlesOf(doc, entry, problems);
    if (handles.length > 0) table[entry.operationId] = handles;
  }
  if (problems.length > 0)
    throw new Error(`openapi.json: x-svc-phi marks on requests are wrong:\n  ${problems.join('\n  ')}`);
  return table;
}
