import { purgeExpiredIdempotencyKeys } from '../gateway/idempotency.js';
import { purgeUsageWindows } from '../gateway/usage-limits.js';
import { periodic } from './periodic.js';
import type { Worker } from './worker.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Hourly: drop idempotency keys past their retention and usage windows older than two days. */
export function housekeeping(): Worker {
  return periodic({
    name: 'housekeeping',
    intervalMs: HOUR_MS,
    async run({ db, log }) {
      const keys = await purgeExpiredIdempotencyKeys(db);
      const windows = await purgeUsageWindows(db, new Date(Date.now() - 2 * DAY_MS));
      if (keys || windows) log.info({ keys, windows }, 'housekeeping purged expired rows');
    },
  });
}
