import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Database } from '../../db/database-handle.js';
import { PlatformError } from '../../shared/platform-error.js';

/**
 * Liveness and readiness for orchestrators, outside the partition (every partition route,
 * health included, requires a bearer token).
 */
export function registerProbes(app: FastifyInstance, database: Database) {
  app.get('/livez', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request) => {
    try {
      await sql`select 1`.execute(database.db);
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed');
      throw new PlatformError('PLATFORM_SERVICE_UNAVAILABLE', 'The database is not reachable.');
    }
    return { status: 'ok', database: database.engine };
  });
}
