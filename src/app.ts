import Fastify from 'fastify';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/database-handle.js';
import type { KeyEncryption } from './identity/key-encryption.js';
import { installBodyParsers } from './gateway/body-parsing.js';
import { clientErrorHandler, installErrorHandler } from './gateway/error-handler.js';
import { installNotFound } from './gateway/not-found.js';
import { registerOperations } from './gateway/operation-routes.js';
import { Gateway, shuttingDown } from './gateway/gateway.js';
import { requestIdFor } from './gateway/request-id.js';
import { accessLog, requestLogging } from './gateway/request-logger.js';
import { markReceived } from './gateway/response-time.js';
import { createHandlers } from './resources/index.js';
import { routeGrantTypes } from './resources/oauth/token-handler.js';
import { createMcpSurface } from './mcp/surface.js';
import { inProcessGatewayWorkers } from './workers/registry.js';
import { startWorkers } from './workers/worker.js';
import { registerWellKnown } from './identity/well-known.js';
import { createServices } from './services.js';
import { registerProbes } from './resources/platform/probes.js';
import { registerApiReference } from './docs/api-reference.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The operations behind the HTTP routes, for transports without HTTP (gateway/direct-call.ts). */
    gateway: Gateway;
  }
}

export interface AppOptions {
  config: Config;
  database: Database;
  /** The key-encryption keys of the secrets stored in the database (src/identity/key-encryption-keys.ts). */
  keyEncryption: KeyEncryption;
  /** The process logger; tests run silent. */
  logger?: Logger;
}

export async function buildApp({ config, database, keyEncryption, logger = pino({ level: 'silent' }) }: AppOptions) {
  const app = Fastify({
    ...requestLogging(logger),
    genReqId: requestIdFor,
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    // request.ip: the client behind these proxies (X-Forwarded-For), otherwise the socket's peer.
    trustProxy: config.trustProxy,
    exposeHeadRoutes: false,
    // Refused below in the contract's error shape instead of Fastify's own body.
    return503OnClosing: false,
    clientErrorHandler: clientErrorHandler(logger),
  });
  let closing = false;
  app.addHook('onClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', (request, reply, done) => {
    markReceived(request);
    reply.header('x-request-id', request.id);
    if (!closing) return done();
    reply.header('connection', 'close');
    done(shuttingDown());
  });
  accessLog(app, logger);
  installBodyParsers(app);
  installErrorHandler(app);
  installNotFound(app);
  const services = createServices(config, database.db, keyEncryption, logger);
  const mcp = await createMcpSurface(config, database.db, keyEncryption);
  routeGrantTypes(app, mcp.grantHandovers);
  const gateway = new Gateway(createHandlers(services), { ...services, db: database.db, handlerTimeoutMs: config.handlerTimeoutMs }, logger);
  app.decorate('gateway', gateway);
  registerOperations(app, gateway);
  const stopGatewayWorkers = startWorkers(inProcessGatewayWorkers(config.inProcessWorkers, gateway), { db: database.db, log: logger });
  // After in-flight requests, and handlers whose client hung up, have finished: flush what the buffers still hold.
  app.addHook('onClose', async () => {
    await stopGatewayWorkers();
    await gateway.close();
    await services.close();
  });
  registerProbes(app, database);
  registerWellKnown(app, services);
  mcp.register(app, gateway);
  await registerApiReference(app);
  return app;
}
