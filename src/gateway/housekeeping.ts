import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { purgeExpiredIdempotencyKeys } from './idempotency.js';
import { purgeUsageWindows } from './usage-limits.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Hourly: drop idempotency keys past their retention and usage windows older than two days. */
export function startHousekeeping(db: Kysely<DB>, log: FastifyBaseLogger, intervalMs = HOUR_MS): () => void {
  const run = async () => {
    try {
      const keys = await purgeExpiredIdempotencyKeys(db);
      const windows = await purgeUsageWindows(db, new Date(Date.now() - 2 * DAY_MS));
      if (keys || windows) log.info({ keys, windows }, 'housekeeping purged expired rows');
    } catch (err) {
      log.warn({ err }, 'housekeeping failed; it runs again next hour');
    }
  };
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
