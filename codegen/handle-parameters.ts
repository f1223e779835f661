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

function handleMark(where: string, mark: Json, problems: string[]): Omit<HandleParameter, 'in' | 'field'> | null {
  const spec = (typeof mark === 'string' ? { reduce: mark } : mark) as JsonObject;
  if (spec.reduce !== 'handle') {
    if (spec.reduce !== 'kept') problems.push(`${where}: a request value takes only a handle (or kept) ${MARK} mark`);
    return null;
  }
  const kind = (spec.kind as string | undefined) ?? 'patient';
  if (!(kind in PSEUDONYM_PREFIX)) problems.push(`${where}: ${JSON.stringify(kind)} is not a handle kind`);
  const when = spec.when as Record<string, string[]> | undefined;
  const condition = when && Object.entries(when).map(([property, values]) => ({ property, values }))[0];
  return { kind, ...(condition ? { when: condition } : {}) };
}

/** The marked properties of a request body, through its component schemas, as dotted paths. */
function bodyHandles(doc: JsonObject, schema: Json, prefix: string, problems: string[], enclosing = new Set<Json>()) {
  const node = resolve(doc, schema) as JsonObject;
  if (enclosing.has(node)) return [];
  const within = new Set(enclosing).add(node);
  const found: HandleParameter[] = [];
  for (const [name, property] of Object.entries((node.properties ?? {}) as JsonObject)) {
    const field = `${prefix}${name}`;
    const mark = (property as JsonObject)[MARK];
    const handle = mark === undefined ? null : handleMark(`body ${field}`, mark, problems);
    if (handle) found.push({ in: 'body', field, ...handle });
    else found.push(...bodyHandles(doc, property, `${field}.`, problems, within));
  }
  return found;
}

function handlesOf(doc: JsonObject, entry: OperationEntry, problems: string[]): HandleParameter[] {
  const where = (name: string) => `${entry.operationId} ${name}`;
  const parameters = entry.parameters.flatMap((p) => {
    const handle = p[MARK] === undefined ? null : handleMark(where(p.name), p[MARK], problems);
    if (handle && p.in !== 'path' && p.in !== 'query')
      problems.push(`${where(p.name)}: only path and query parameters`);
    return handle ? [{ in: p.in as 'path' | 'query', field: p.name, ...handle }] : [];
  });
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
