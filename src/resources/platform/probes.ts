import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Database } from '../../db/database-handle.js';
import { PlatformError } from '../../shared/platform-error.js';
import type { PressureMonitor } from '../../observability/pressure.js';
import type { ServiceMetrics } from '../../observability/metrics.js';

/**
 * Liveness and readiness for orchestrators, outside the partition (every partition route,
 * health included, requires a bearer token). Liveness stays up under load; readiness reports the pressure and
 * answers 503 while the partition sheds load, so a balancer sends the calls to other instances meanwhile.
 */
export function registerProbes(app: FastifyInstance, database: Database, pressure: PressureMonitor) {
  app.get('/livez', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    try {
      await sql`select 1`.execute(database.db);
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed');
      throw new PlatformError('PLATFORM_SERVICE_UNAVAILABLE', 'The database is not reachable.');
    }
    const report = pressure.report();
    if (!report.shedding) return { status: 'ok', database: database.engine, pressure: report };
    reply.code(503).header('retry-after', String(pressure.thresholds.retryAfterSeconds));
    return { status: 'overloaded', database: database.engine, pressure: report };
  });
}

/** Prometheus metrics on the main port, outside the partition: no token, no PHI, no agency names (METRICS_PORT moves them). */
export function registerMetrics(app: FastifyInstance, metrics: ServiceMetrics) {
  app.get('/metrics', async (_request, reply) => {
    reply.type(metrics.contentType);
    return metrics.text();
  });
}
