import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** performance.now() as the request arrived. Fastify times a response only when it has a logger (request-logger.ts). */
    receivedAt: number | undefined;
  }
}

export function markReceived(request: FastifyRequest): void {
  request.receivedAt = performance.now();
}

/** Milliseconds since the request arrived; the gateway's hooks run only after markReceived(). */
export function elapsedMs(request: FastifyRequest): number {
  return performance.now() - request.receivedAt!;
}
