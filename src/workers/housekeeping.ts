import { purgeExpiredIdempotencyKeys } from '../gateway/core/idempotency.js';
import { purgeUsageWindows } from '../gateway/core/usage-limits.js';
import { purgeWebhookHistory, WEBHOOK_RETENTION_DAYS } from '../events/retention.js';
import { purgeExpiredAssertionIds } from '../identity/client-assertions.js';
import { purgeEndedSessions } from '../identity/console-sessions.js';
import { periodic } from './periodic.js';
import type { Worker } from './worker.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Hourly: drop idempotency keys past their retention, usage windows older than two days, settled webhook events
 * (with their deliveries) older than the webhook retention, a batch at a time, the ids of expired client assertions,
 * and ended console sessions.
 */
export function housekeeping(): Worker {
  return periodic({
    name: 'housekeeping',
    intervalMs: HOUR_MS,
    async run({ db, log }) {
      const keys = await purgeExpiredIdempotencyKeys(db);
      const windows = await purgeUsageWindows(db, new Date(Date.now() - 2 * DAY_MS));
      const events = await purgeWebhookHistory(db, new Date(Date.now() - WEBHOOK_RETENTION_DAYS * DAY_MS));
      const assertionIds = await purgeExpiredAssertionIds(db);
      const consoleSessions = await purgeEndedSessions(db);
      if (keys || windows || events || assertionIds || consoleSessions)
        log.info(
          { keys, windows, webhook_events: events, assertion_ids: assertionIds, console_sessions: consoleSessions },
          'housekeeping purged expired rows',
        );
    },
  });
}
