import { operations, type OperationDefinition } from '../../generated/contract.js';

type ReadOnly = NonNullable<OperationDefinition['readOnly']>;

interface PathEntry {
  pattern: RegExp;
  byMethod: Map<string, OperationDefinition>;
  readOnly: ReadOnly | null;
}

/** A parameter may be empty (`/patients/`), as Fastify's router takes it: the route answers, not a 404 of the path. */
function templateToRegExp(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\{[^}]+\}/g, '[^/]*')}$`);
}

const paths = new Map<string, PathEntry>();
for (const op of Object.values(operations) as OperationDefinition[]) {
  const entry = paths.get(op.path) ?? { pattern: templateToRegExp(op.path), byMethod: new Map(), readOnly: null };
  entry.byMethod.set(op.method, op);
  entry.readOnly ??= op.readOnly;
  paths.set(op.path, entry);
}

function entryFor(url: string): PathEntry | undefined {
  const path = url.split('?')[0];
  for (const entry of paths.values()) if (entry.pattern.test(path)) return entry;
  return undefined;
}

/** Methods the contract documents for the path of a URL, or undefined when the path is not in it. */
export function allowedMethods(url: string): string[] | undefined {
  const entry = entryFor(url);
  return entry && [...entry.byMethod.keys()];
}

/** Why a path takes no other method than those it documents, and what to do instead (x-svc-read-only), if it says. */
export function readOnlyReason(url: string): ReadOnly | undefined {
  return entryFor(url)?.readOnly ?? undefined;
}

export function findOperation(method: string, url: string): OperationDefinition | undefined {
  return entryFor(url)?.byMethod.get(method.toUpperCase());
}
