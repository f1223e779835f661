import type { FastifyInstance } from 'fastify';
import type { OperationId } from '../../generated/contract.js';
import type { OperationCall } from '../core/operation-call.js';
import { checkContentType, refuseRepeatedAuthorization } from '../core/request-validation.js';
import type { OperationPipeline } from '../core/pipeline.js';
import type { Gateway } from '../core/gateway.js';
import { callOf } from './http-call.js';

declare module 'fastify' {
  // A FastifyReply is a ResponseHead as it stands. receivedAt is set on every request, operation or not, by the app's
  // first hook (markReceived).
  interface FastifyRequest extends Pick<OperationCall, 'receivedAt'> {}
  interface FastifyContextConfig {
    /** Set on the contract's operations; other routes (probes, documents) have none. */
    operationId?: OperationId;
  }
}

/** One operation's route: the pipeline's steps as the route's hooks and handler. */
function registerOperation(app: FastifyInstance, pipeline: OperationPipeline) {
  const { operation } = pipeline;
  // Callback hooks, answered synchronously on a warm call: an async hook costs a promise and a microtask per request.
  app.route({
    method: operation.method,
    url: operation.url,
    config: { operationId: operation.operationId },
    // Version, identity, access and limits, before any body is read.
    onRequest: (request, reply, done) => {
      // One clock read for the warm checks: each read is a call into the runtime.
      const nowMs = Date.now();
      let admitting: void | Promise<void>;
      try {
        const call = callOf(request);
        pipeline.begin(call, reply, nowMs);
        refuseRepeatedAuthorization(request.raw.rawHeaders);
        admitting = pipeline.admit(call, reply, nowMs, request.headers.authorization);
      } catch (err) {
        return done(err as Error);
      }
      if (!admitting) return done();
      admitting.then(() => done(), done);
    },
    // After the body is parsed: the content type is the wire's matter, the rest the pipeline's.
    handler: (request, reply) => {
      const call = callOf(request);
      checkContentType(operation, call);
      return pipeline.run(call, reply);
    },
    // As the response is handed to the socket: an onResponse hook would make Fastify listen for every response's 'finish'.
    onSend: (request, reply, _payload, done) => {
      pipeline.record(callOf(request), reply);
      done();
    },
  });
}

/** Registers every operation of the gateway as an HTTP route; the gateway's close() drains their handlers. */
export function registerOperations(app: FastifyInstance, gateway: Gateway) {
  // Declared up front, so that every request has the same shape.
  app.decorateRequest('call', undefined);
  for (const pipeline of gateway.all()) registerOperation(app, pipeline);
}
