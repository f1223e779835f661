import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { operations, type OperationDefinition, type OperationId } from '../generated/contract.js';
import type { DB } from '../db/schema.js';
import type { Handler, Handlers, RequestContext } from '../routes/handler.js';
import { PlatformError } from '../errors/platform-error.js';
import { negotiateVersion, deprecationHeader, type ContractVersion, type Deprecation } from './contract-version.js';
import { checkContentType, validateRequest } from './request-validation.js';
import { serializeFor } from './contract-serializers.js';

declare module 'fastify' {
  interface FastifyRequest {
    deprecations: Deprecation[];
    contractVersion: ContractVersion;
  }
}

export interface OperationRouteOptions {
  db: Kysely<DB>;
  handlerTimeoutMs: number;
}

async function withTimeout<T>(work: (signal: AbortSignal) => Promise<T>, ms: number): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new PlatformError('PLATFORM_TIMEOUT', `The operation did not finish within ${ms} ms; nothing of a command was committed.`));
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Adds deprecations that the request collected (contract version, request shape, fields) to the envelope. */
function withDeprecations(body: unknown, request: FastifyRequest, reply: FastifyReply): unknown {
  const deprecations = request.deprecations;
  if (deprecations.length === 0 || typeof body !== 'object' || body === null) return body;
  if (!reply.hasHeader('deprecation') && deprecations[0].since) reply.header('deprecation', deprecationHeader(deprecations[0].since));
  const envelope = body as { meta?: Record<string, unknown> };
  return { ...envelope, meta: { ...envelope.meta, deprecations } };
}

function route(app: FastifyInstance, operation: OperationDefinition, handler: Handler<OperationId>, options: OperationRouteOptions) {
  const containsPhi = operation.noPhi !== 'allowed';
  app.route({
    method: operation.method,
    url: operation.url,
    config: { operationId: operation.operationId },
    onRequest: async (request, reply) => {
      request.deprecations = [];
      request.contractVersion = negotiateVersion(request, reply);
    },
    preValidation: async (request) => {
      checkContentType(operation, request);
      validateRequest(operation, request);
    },
    handler: async (request, reply) => {
      const body = await withTimeout((signal) => {
        const ctx = {
          operation,
          params: request.params,
          query: request.query,
          headers: request.headers,
          body: request.body,
          contractVersion: request.contractVersion,
          deprecations: request.deprecations,
          requestId: request.id,
          db: options.db,
          log: request.log,
          reply,
          signal,
        } as RequestContext<OperationId>;
        return handler(ctx);
      }, options.handlerTimeoutMs);
      if (containsPhi) reply.header('cache-control', 'no-store');
      if (operation.responseContentType === 'text/plain') return reply.type('text/plain; charset=utf-8').send(body);
      return withDeprecations(serializeFor(request.contractVersion, operation, body), request, reply);
    },
  });
}

/** Registers every operation of the contract, from the generated route table, with its handler. */
export function registerOperations(app: FastifyInstance, handlers: Handlers, options: OperationRouteOptions) {
  for (const operation of Object.values(operations) as OperationDefinition[]) {
    route(app, operation, handlers[operation.operationId] as Handler<OperationId>, options);
  }
}
