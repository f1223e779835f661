import Fastify from 'fastify';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/database-handle.js';
import type { KeyEncryption } from './identity/key-encryption.js';
import { installBodyParsers } from './gateway/http/body-parsing.js';
import { clientErrorHandler, routingErrorHandler, installErrorHandler } from './gateway/http/error-handler.js';
import { installNotFound } from './gateway/http/not-found.js';
import { installQueryTokenCors } from './gateway/http/query-token-cors.js';
import { registerOperations } from './gateway/http/operation-routes.js';
import { Gateway, shuttingDown } from './gateway/core/gateway.js';
import { requestIdFor } from './gateway/core/request-id.js';
import { accessLog, requestLogging } from './gateway/http/request-logger.js';
import { markReceived } from './gateway/core/response-time.js';
import { createResources } from './resources/index.js';
import type { GovernedQuery } from './resources/queries/governed-query.js';
import { routeGrantTypes } from './resources/oauth/token-handler.js';
import { createMcpSurface } from './mcp/surface.js';
import { inProcessGatewayWorkers, inProcessWorkers } from './workers/registry.js';
import { auditFlusher, meteringFlusher } from './workers/flushers.js';
import { startWorkers } from './workers/worker.js';
import { registerWellKnown } from './identity/well-known.js';
import { createServices, type AppServices } from './services.js';
import { registerMetrics, registerProbes } from './resources/platform/probes.js';
import { registerApiReference } from './docs/api-reference.js';
import { registerFavicon } from './docs/favicon.js';
import { registerConsole } from './console/console-plugin.js';
import { observe, type Observability } from './observability/observability.js';
import type { Tracing } from './observability/call-trace.js';
import { redactingDatabaseValues } from './db/database-error-log.js';
import type { ServiceMetrics } from './observability/metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The operations behind the HTTP routes, for transports without HTTP (src/gateway/core/direct-call.ts). */
    gateway: Gateway;
    /** Metrics, load shedding and tracing of this app (the server serves metrics on METRICS_PORT from here). */
    observability: Observability;
  }
}

interface AppOptions {
  config: Config;
  database: Database;
  /** The key-encryption keys of the secrets stored in the database (src/identity/key-encryption-keys.ts). */
  keyEncryption: KeyEncryption;
  /** The process logger; tests run silent. */
  logger?: Logger;
  /** The process's tracing, started before the app when the OTEL_* variables ask for it (src/server.ts). */
  tracing?: Tracing;
  /** The approved governed queries; this deployment's registry unless given (tests register their own). */
  governedQueries?: readonly GovernedQuery<any>[];
}

interface WorkerWiring {
  config: Config;
  database: Database;
  keyEncryption: KeyEncryption;
  logger: Logger;
  services: AppServices;
  gateway: Gateway;
  metrics?: ServiceMetrics;
  tracing?: Tracing;
}

/**
 * Every worker of the server, started here and nowhere else; the stop follows the order work flows in: the workers that
 * run operations, then the gateway's running handlers, then the rest (the flushers write what the buffers still hold)
 * while unspent usage leases go back.
 */
function startServerWorkers({
  config,
  database,
  keyEncryption,
  logger,
  services,
  gateway,
  metrics,
  tracing,
}: WorkerWiring): () => Promise<void> {
  const context = {
    db: database.db,
    log: logger,
    keyEncryption: () => keyEncryption,
    metrics: metrics?.registrar,
    deliveryTracer: tracing?.deliveries,
  };
  const stopGatewayWorkers = startWorkers(inProcessGatewayWorkers(config.inProcessWorkers, gateway), context);
  const stopWorkers = startWorkers(
    [meteringFlusher(services.metering), auditFlusher(services.audit), ...inProcessWorkers(config.inProcessWorkers)],
    context,
  );
  return async () => {
    await stopGatewayWorkers();
    await gateway.close();
    await Promise.all([stopWorkers(), services.close()]);
  };
}

export async function buildApp({
  config,
  database,
  keyEncryption,
  logger: processLogger = pino({ level: 'silent' }),
  tracing,
  governedQueries,
}: AppOptions) {
  const logger = redactingDatabaseValues(processLogger);
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
    frameworkErrors: routingErrorHandler,
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
  const observability = observe({ metrics: config.metrics.enabled, pressure: config.pressure }, database, tracing);
  app.decorate('observability', observability);
  const { metrics, pressure } = observability;
  installQueryTokenCors(app);
  const services = createServices(config, database.db, keyEncryption, logger, metrics);
  const mcp = await createMcpSurface(config, database.db, keyEncryption);
  routeGrantTypes(app, mcp.grantHandovers);
  const { handlers, admissions } = createResources(services, governedQueries, mcp.catalog);
  const gatewayServices = {
    ...services,
    db: database.db,
    replicas: database.replicas,
    handlerTimeoutMs: config.handlerTimeoutMs,
    metrics,
    pressure,
    tracer: tracing?.tracer,
  };
  const gateway = new Gateway(handlers, gatewayServices, logger, admissions);
  app.decorate('gateway', gateway);
  registerOperations(app, gateway);
  const stopServerWorkers = startServerWorkers({
    config,
    database,
    keyEncryption,
    logger,
    services,
    gateway,
    metrics,
    tracing,
  });
  // After in-flight requests, and handlers whose client hung up, have finished: flush what the buffers still hold.
  app.addHook('onClose', async () => {
    await stopServerWorkers();
    observability.close();
  });
  registerProbes(app, database, pressure);
  if (metrics && config.metrics.port === undefined) registerMetrics(app, metrics);
  registerWellKnown(app, services);
  mcp.register(app, gateway);
  await registerApiReference(app, config.tokenIssuer);
  registerFavicon(app);
  await registerConsole(app, { db: database.db, services, keyEncryption }, keyEncryption);
  return app;
}
