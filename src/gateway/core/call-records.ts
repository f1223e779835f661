import type { OperationDefinition } from '../../generated/contract.js';
import type { AuditEvent } from '../audit.js';
import type { MeteringEvent } from './metering.js';
import type { OperationCall } from './operation-call.js';

function outcomeOf(status: number): AuditEvent['outcome'] {
  if (status < 400) return 'success';
  return status === 401 || status === 403 ? 'denied' : 'failure';
}

/** The audit record of an admitted call (it has a principal), answered with `status`. */
export function auditEvent(operation: OperationDefinition, call: OperationCall, status: number): AuditEvent {
  const principal = call.principal!;
  const trail = call.auditTrail;
  return {
    agencyId: principal.agencyId,
    extensionId: principal.extensionId,
    operationId: operation.operationId,
    resourceType: trail.resourceType,
    resourceIds: trail.resourceIds,
    outcome: outcomeOf(status),
    status,
    requestId: call.id,
    phiMode: principal.phiMode,
    sourceSystem: trail.sourceSystem ?? null,
    externalReferenceId: trail.externalReferenceId ?? null,
    details: trail.details ?? null,
  };
}

/** The metering event of a call with a principal, answered with `status`, at the instant it was admitted. */
export function meteringEvent(
  operation: OperationDefinition,
  call: OperationCall,
  status: number,
  durationMs: number,
): MeteringEvent {
  const principal = call.principal!;
  return {
    agencyId: principal.agencyId,
    extensionId: principal.extensionId,
    operationId: operation.operationId,
    status,
    // A replay runs nothing, so it costs nothing.
    costUnits: call.replayed ? 0 : call.costUnits,
    durationMs,
    requestId: call.id,
    occurredAtMs: call.admittedAtMs,
    errorCode: call.refusal,
    contractVersion: call.contractVersion,
    replayed: call.replayed,
  };
}
