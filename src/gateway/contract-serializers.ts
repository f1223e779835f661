import { v1Shapes, type OperationDefinition } from '../generated/contract.js';
import type { ContractVersion } from '../shared/versioning.js';

function toV1(value: unknown, schema: string): unknown {
  const shape = v1Shapes[schema];
  if (!shape || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => toV1(item, schema));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (shape.omit.includes(key)) continue;
    const child = shape.children[key];
    out[shape.rename[key] ?? key] = child ? toV1(item, child) : item;
  }
  return out;
}

/**
 * Serializes a handler's (version 2) result for the negotiated contract version. The version 1
 * shape is derived from the document's x-svc-since and x-svc-v1-name marks, not hand-written.
 */
export function serializeFor(version: ContractVersion, operation: OperationDefinition, body: unknown): unknown {
  return version === '1' && operation.v1Schema ? toV1(body, operation.v1Schema) : body;
}
