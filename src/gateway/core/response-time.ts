import type { OperationCall } from './operation-call.js';

type Arrival = Pick<OperationCall, 'receivedAt'>;

/** performance.now() as the call arrived. Fastify times a response only when it has a logger (request-logger.ts). */
export function markReceived(call: Arrival): void {
  call.receivedAt = performance.now();
}

/** Milliseconds since the call arrived; the gateway's steps run only after markReceived() or a direct call's start. */
export function elapsedMs(call: Arrival): number {
  return performance.now() - call.receivedAt!;
}
