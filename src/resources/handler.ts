import type { OperationId } from '../generated/contract.js';
import { PlatformError } from '../shared/platform-error.js';
import type { Handler } from '../gateway/core/handler.js';

// The gateway defines what it calls; handlers see those types through this module, beside the refusals they throw.
export type { Handler, Handlers, QueryParams, RequestContext } from '../gateway/core/handler.js';

/** An id that is not a resource of the caller's agency: ids of other agencies answer exactly like unknown ones. */
export function resourceNotFound(resourceType: string, id: string): PlatformError {
  return new PlatformError('PLATFORM_RESOURCE_NOT_FOUND', `No ${resourceType} ${id} in this agency.`, {
    resource_type: resourceType,
    id,
  });
}

const notEnabled = new WeakSet<object>();

/**
 * For operations whose domain is not built in this deployment: a documented refusal
 * (PLATFORM_UNSUPPORTED_OPERATION), never invented data. The catalog reports them as not enabled.
 */
export function unsupported<K extends OperationId>(operationId: K): Handler<K> {
  const handler: Handler<K> = async () => {
    throw new PlatformError(
      'PLATFORM_UNSUPPORTED_OPERATION',
      `${operationId} is part of the contract but not enabled in this deployment.`,
      {
        operation_id: operationId,
      },
    );
  };
  notEnabled.add(handler);
  return handler;
}

export function isEnabled(handler: object): boolean {
  return !notEnabled.has(handler);
}
