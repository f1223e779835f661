import type { OperationDefinition } from '../generated/contract.js';
import type { ExtensionPolicy, Principal } from '../shared/principal.js';
import { operationRefusal } from '../domain/access-policy.js';

/** The access policy's answer for an operation (src/domain/access-policy.ts), thrown when it refuses. */
export function authorize(operation: OperationDefinition, principal: Principal, policy: ExtensionPolicy) {
  const refusal = operationRefusal(operation, principal, policy);
  if (refusal) throw refusal;
}
