import type { BreakingChange } from './findings.js';
import { atPointer, pointerToken } from '../../src/shared/json-pointer.js';

/**
 * What `redocly diff` cannot see: the rules this document keeps in its own `x-svc-*` tables and marks, which the
 * gateway enforces, and a changed parameter default (oasdiff's request-parameter-default-value-changed). Each rule
 * reports only a tightening; loosening a rule is a compatible change.
 */
type Node = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const NO_PHI_RANK: Record<string, number> = { allowed: 0, pseudonymized: 1, denied: 2 };
const ERROR_CODE_FIELDS = ['status', 'category', 'retryable', 'terminal'];

const show = (value: unknown) => JSON.stringify(value ?? null);

function resolve(doc: Node, node: Node): Node {
  if (typeof node?.$ref !== 'string' || !node.$ref.startsWith('#/')) return node;
  return resolve(doc, atPointer(doc, node.$ref) as Node);
}

function operations(doc: Node): Map<string, { pointer: string; operation: Node; parameters: Node[] }> {
  const found = new Map();
  for (const [path, item] of Object.entries<Node>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p: Node) =>
        resolve(doc, p),
      );
      found.set(`${method.toUpperCase()} ${path}`, {
        pointer: `#/paths/${pointerToken(path)}/${method}`,
        operation,
        parameters,
      });
    }
  }
  return found;
}

function operationRules(base: Node, head: Node): BreakingChange[] {
  const changes: BreakingChange[] = [];
  const headOperations = operations(head);
  for (const [name, before] of operations(base)) {
    const after = headOperations.get(name);
    if (!after) continue; // a removed operation is redocly's finding
    const was = before.operation;
    const now = after.operation;
    const at = (key: string) => `${after.pointer}/${key}`;
    if (now['x-svc-scope'] != null && now['x-svc-scope'] !== was['x-svc-scope']) {
      changes.push({
        rule: 'x-svc-scope-tightened',
        pointer: at('x-svc-scope'),
        message: `${name} now requires scope ${now['x-svc-scope']} (was ${show(was['x-svc-scope'])}): tokens issued for the old scope are refused.`,
      });
    }
    if ((NO_PHI_RANK[now['x-svc-no-phi']] ?? 0) > (NO_PHI_RANK[was['x-svc-no-phi']] ?? 0)) {
      changes.push({
        rule: 'x-svc-no-phi-tightened',
        pointer: at('x-svc-no-phi'),
        message: `${name} is now ${now['x-svc-no-phi']} in a no_phi session (was ${was['x-svc-no-phi']}).`,
      });
    }
    if (now['x-svc-command'] === true && was['x-svc-command'] !== true) {
      changes.push({
        rule: 'x-svc-command-added',
        pointer: at('x-svc-command'),
        message: `${name} became a command: it now requires an idempotency-key header and a granted capability.`,
      });
    }
    if (now['x-svc-capability'] != null && now['x-svc-capability'] !== was['x-svc-capability']) {
      changes.push({
        rule: 'x-svc-capability-required',
        pointer: at('x-svc-capability'),
        message: `${name} now needs the agency policy to permit ${now['x-svc-capability']} (was ${show(was['x-svc-capability'])}).`,
      });
    }
    for (const parameter of before.parameters) {
      const same = after.parameters.find((p) => p.name === parameter.name && p.in === parameter.in);
      if (
        same &&
        parameter.schema?.default !== undefined &&
        show(same.schema?.default) !== show(parameter.schema.default)
      ) {
        changes.push({
          rule: 'request-parameter-default-value-changed',
          pointer: at(`parameters`),
          message: `${name}: the default of ${parameter.in} parameter ${parameter.name} changed from ${show(parameter.schema.default)} to ${show(same.schema?.default)}; a client that omits it gets another answer.`,
        });
      }
    }
  }
  return changes;
}

/**
 * Every `x-svc-phi` mark by its JSON pointer: where a no_phi session sees a property reduced. A parameter's mark is
 * left out: it says what a session sends (a handle the gateway resolves), and reduces nothing it sees.
 */
function phiMarks(node: unknown, pointer = '#', marks = new Map<string, unknown>()): Map<string, unknown> {
  if (!node || typeof node !== 'object') return marks;
  const isParameter = typeof (node as Node).in === 'string' && typeof (node as Node).name === 'string';
  for (const [key, value] of Object.entries(node)) {
    if (key !== 'x-svc-phi') phiMarks(value, `${pointer}/${pointerToken(key)}`, marks);
    else if (!isParameter) marks.set(pointer, value);
  }
  return marks;
}

/** The node a `#/…` pointer names in `doc`, or undefined. */
function at(doc: Node, pointer: string): unknown {
  return atPointer(doc, pointer);
}

/**
 * The reductions head records in `x-svc-no-phi-fixes`, by pointer: added to released properties to close a way a
 * no_phi session learned what the contract says it does not, in every live version at once.
 */
const recordedFixes = (head: Node) =>
  new Map<string, string>((head['x-svc-no-phi-fixes'] ?? []).map((fix: Node) => [fix.pointer, show(fix['x-svc-phi'])]));

/**
 * A reduction added to a property clients already read; `kept` reduces nothing, a new property is new to everyone,
 * and a privacy fix recorded with exactly this mark is released as one.
 */
function phiMarkRules(base: Node, head: Node): BreakingChange[] {
  const before = phiMarks(base);
  const fixes = recordedFixes(head);
  return [...phiMarks(head)]
    .filter(
      ([pointer, mark]) =>
        mark !== 'kept' && show(before.get(pointer)) !== show(mark) && fixes.get(pointer) !== show(mark),
    )
    .filter(([pointer]) => before.has(pointer) || at(base, pointer) !== undefined)
    .map(([pointer, mark]) => ({
      rule: 'x-svc-phi-reduction-added',
      pointer: `${pointer}/x-svc-phi`,
      message: `A no_phi session now sees this property reduced (${show(mark)}, was ${before.has(pointer) ? show(before.get(pointer)) : 'served as stored'}).`,
    }));
}

function errorCodeRules(base: Node, head: Node): BreakingChange[] {
  const headCodes = new Map<string, Node>((head['x-svc-error-codes'] ?? []).map((entry: Node) => [entry.code, entry]));
  return (base['x-svc-error-codes'] ?? []).flatMap((entry: Node): BreakingChange[] => {
    const now = headCodes.get(entry.code);
    const pointer = '#/x-svc-error-codes';
    if (!now)
      return [
        {
          rule: 'x-svc-error-codes-code-removed',
          pointer,
          message: `${entry.code} is no longer a known code; clients branch on it.`,
        },
      ];
    return ERROR_CODE_FIELDS.filter((field) => show(now[field]) !== show(entry[field])).map((field) => ({
      rule: `x-svc-error-codes-${field}-changed`,
      pointer,
      message: `${entry.code}: ${field} changed from ${show(entry[field])} to ${show(now[field])}.`,
    }));
  });
}

function requestShapeRules(base: Node, head: Node): BreakingChange[] {
  return Object.entries<Node[]>(base['x-svc-request-shapes'] ?? {}).flatMap(([operationId, shapes]) => {
    const kept = new Set((head['x-svc-request-shapes']?.[operationId] ?? []).map((s: Node) => s.shape));
    return shapes
      .filter((s) => !kept.has(s.shape))
      .map((s) => ({
        rule: 'x-svc-request-shapes-shape-removed',
        pointer: `#/x-svc-request-shapes/${pointerToken(operationId)}`,
        message: `${operationId}: request shape ${s.shape} is no longer accepted.`,
      }));
  });
}

export function tableChanges(base: Node, head: Node): BreakingChange[] {
  return [
    ...operationRules(base, head),
    ...phiMarkRules(base, head),
    ...errorCodeRules(base, head),
    ...requestShapeRules(base, head),
  ];
}
