import { v1Shapes, type OperationDefinition } from '../../generated/contract.js';
import { toV1 } from '../../shared/contract-v1.js';
import type { ContractVersion } from '../../shared/versioning.js';

/**
 * Serializes a handler's (version 2) result for the negotiated contract version. The version 1
 * shape is derived from the document's x-svc-since and x-svc-v1-name marks, not hand-written.
 */
export function serializeFor(version: ContractVersion, operation: OperationDefinition, body: unknown): unknown {
  return version === '1' && operation.v1Schema ? toV1(body, operation.v1Schema, v1Shapes) : body;
}
