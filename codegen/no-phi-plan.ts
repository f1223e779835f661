import { resolve, type Json, type JsonObject, type OperationEntry } from './contract-document.js';
import { refName, schemaNameOf } from '../src/shared/contract-v1.js';

/**
 * What a no_phi session sees of each response, compiled from the `x-svc-phi` marks on the properties of the schemas
 * that pseudonymized operations answer with. Every property that can hold free text (an unenumerated string, a
 * free-form object, or an array of either) must be marked, so a new field cannot leak by default.
 */
const MARK = 'x-svc-phi';

/** The reductions implemented (src/domain/no-phi-reduction.ts); the document's table must list exactly these. */
const IMPLEMENTED = ['kept', 'withheld', 'handle', 'year', 'zip3', 'birth_date', 'age', 'category', 'columns'];

type Reduction =
  | { reduce: 'withheld'; empty: Json }
  | { reduce: 'handle'; kind: string; when?: { property: string; values: string[] } }
  | { reduce: 'year'; format: 'date' | 'date-time' }
  | { reduce: 'zip3' | 'birth_date' }
  | { reduce: 'age' | 'columns'; from: string }
  | { reduce: 'category'; values: string[]; otherwise: string };

export interface SchemaPlan {
  fields: Record<string, Reduction>;
  children: Record<string, string>;
}

const typesOf = (node: JsonObject): string[] => {
  const own = Array.isArray(node.type) ? (node.type as string[]) : typeof node.type === 'string' ? [node.type] : [];
  const members = ((node.oneOf ?? node.anyOf ?? []) as JsonObject[]).flatMap(typesOf);
  return [...own, ...members];
};

const nullable = (node: JsonObject) => typesOf(node).includes('null');

/** Whether the values can be text nobody checked: an unenumerated string, a free-form object, or a list of either. */
function holdsText(node: JsonObject): boolean {
  if (schemaNameOf(node)) return false;
  const types = typesOf(node);
  if (types.includes('array')) return holdsText((node.items ?? {}) as JsonObject);
  return (
    (types.includes('string') && !node.enum) || (types.includes('object') && !node.properties) || types.length === 0
  );
}

function emptyOf(node: JsonObject): Json {
  if (nullable(node)) return null;
  const [type] = typesOf(node);
  return type === 'array' ? [] : type === 'object' ? {} : '';
}

class PlanCompiler {
  readonly plans: Record<string, SchemaPlan> = {};
  readonly problems: string[] = [];
  private readonly visited = new Set<string>();
  private readonly schemas: JsonObject;
  private readonly vocabulary: Set<string>;

  constructor(doc: JsonObject) {
    this.schemas = (doc.components as JsonObject).schemas as JsonObject;
    this.vocabulary = new Set(
      ((doc['x-svc-phi-reductions'] ?? []) as JsonObject[]).map((entry) => entry.reduction as string),
    );
    const documented = [...this.vocabulary].sort().join(', ');
    if (documented !== [...IMPLEMENTED].sort().join(', '))
      this.problems.push(`x-svc-phi-reductions lists ${documented}; the gateway implements ${IMPLEMENTED.join(', ')}`);
  }

  /** Plans the schema and what it holds; true when something in it is reduced. */
  visit(name: string): boolean {
    if (this.visited.has(name)) return name in this.plans;
    this.visited.add(name);
    const schema = this.schemas[name] as JsonObject;
    if (schema[MARK] === 'kept') return false;
    const parts = this.unkeptParts(schema);
    if (parts.length === 0 && holdsText(schema)) this.problems.push(`${name} has no ${MARK} mark`);
    const plan: SchemaPlan = { fields: {}, children: {} };
    for (const part of parts) this.planProperties(name, part, plan);
    if (Object.keys(plan.fields).length + Object.keys(plan.children).length === 0) return false;
    this.plans[name] = plan;
    return true;
  }

  /** Object parts of a schema (itself and its allOf members), but for members marked kept whole. */
  private unkeptParts(schema: JsonObject): JsonObject[] {
    const members = ((schema.allOf ?? []) as JsonObject[]).flatMap((member) => {
      const name = refName(member);
      const resolved = name ? (this.schemas[name] as JsonObject) : member;
      return resolved[MARK] === 'kept' ? [] : this.unkeptParts(resolved);
    });
    return schema.properties ? [schema, ...members] : members;
  }

  private planProperties(name: string, part: JsonObject, plan: SchemaPlan) {
    const properties = part.properties as JsonObject;
    for (const [prop, value] of Object.entries(properties)) {
      const node = value as JsonObject;
      const where = `${name}.${prop}`;
      if (node[MARK] !== undefined) {
        const reduction = this.reduction(where, node, properties);
        if (reduction) plan.fields[prop] = reduction;
        continue;
      }
      const child = schemaNameOf(node);
      if (child && this.visit(child)) plan.children[prop] = child;
      else if (!child && typesOf(node).includes('object') && node.properties)
        this.problems.push(`${where} is an inline object: give it a component schema`);
      else if (!child && holdsText(node)) this.problems.push(`${where} can hold free text and has no ${MARK} mark`);
    }
  }

  private reduction(where: string, node: JsonObject, siblings: JsonObject): Reduction | null {
    const mark = node[MARK] as string | JsonObject;
    const spec = (typeof mark === 'string' ? { reduce: mark } : mark) as JsonObject;
    const reduce = spec.reduce as string;
    if (!this.vocabulary.has(reduce)) {
      this.problems.push(`${where}: ${MARK} "${reduce}" is not in x-svc-phi-reductions`);
      return null;
    }
    const sibling = (property: Json) => {
      if (typeof property !== 'string' || !(property in siblings))
        this.problems.push(`${where}: ${JSON.stringify(property)} is not a sibling property`);
      return property as string;
    };
    switch (reduce) {
      case 'kept':
        return null;
      case 'withheld':
        return { reduce, empty: emptyOf(node) };
      case 'handle': {
        const when = spec.when as Record<string, string[]> | undefined;
        const condition =
          when && Object.entries(when).map(([property, values]) => ({ property: sibling(property), values }))[0];
        return {
          reduce,
          kind: (spec.kind as string | undefined) ?? 'patient',
          ...(condition ? { when: condition } : {}),
        };
      }
      case 'year': {
        const format = [node, ...((node.oneOf ?? []) as JsonObject[])].map((n) => n.format).find(Boolean);
        if (format !== 'date' && format !== 'date-time')
          this.problems.push(`${where}: year needs format date or date-time`);
        return { reduce, format: format as 'date' | 'date-time' };
      }
      case 'age':
      case 'columns':
        return { reduce, from: sibling(spec.from) };
      case 'category':
        return { reduce, values: spec.values as string[], otherwise: spec.otherwise as string };
      default:
        return { reduce: reduce as 'zip3' | 'birth_date' };
    }
  }
}

const okSchemaName = (doc: JsonObject, entry: OperationEntry): string | undefined => {
  const ok = resolve(doc, (entry.operation.responses as JsonObject)['200'] ?? null) as JsonObject | null;
  const schema = ((ok?.content as JsonObject | undefined)?.['application/json'] as JsonObject | undefined)?.schema as
    | JsonObject
    | undefined;
  return schema && refName(schema);
};

/**
 * The reduction plans, and the root schema of each pseudonymized operation that has one; `eventData` are the data
 * schemas of webhook events, which no_phi subscriptions receive reduced. Throws listing every unmarked field.
 */
export function noPhiPlans(
  doc: JsonObject,
  entries: OperationEntry[],
  eventData: string[],
): { plans: Record<string, SchemaPlan>; roots: Record<string, string> } {
  const compiler = new PlanCompiler(doc);
  const roots: Record<string, string> = {};
  for (const entry of entries) {
    const root = entry.operation['x-svc-no-phi'] === 'pseudonymized' ? okSchemaName(doc, entry) : undefined;
    if (root && compiler.visit(root)) roots[entry.operationId] = root;
  }
  for (const schema of eventData) compiler.visit(schema);
  if (compiler.problems.length > 0)
    throw new Error(`openapi.json: no_phi marks are missing or wrong:\n  ${compiler.problems.join('\n  ')}`);
  return { plans: compiler.plans, roots };
}
