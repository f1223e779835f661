import type { Gateway } from '../gateway/core/gateway.js';
import { executeApproved } from '../proposals/execution.js';
import { periodic } from './periodic.js';
import type { Worker } from './worker.js';

export const PROPOSAL_EXECUTOR = 'proposals';

/**
 * Every few seconds: runs approved proposals through the gateway, as their proposers, once each (src/proposals/).
 * It needs the server's gateway, so it runs inside a server (IN_PROCESS_WORKERS), on any number of them: a
 * proposal is held by one executor at a time, and its idempotency key makes a second run a replay.
 */
export function proposalExecutor(gateway: Gateway, intervalMs = 2_000): Worker {
  return periodic({
    name: PROPOSAL_EXECUTOR,
    intervalMs,
    async run({ db, log }) {
      const ran = await executeApproved(db, gateway);
      if (ran) log.info({ proposals: ran }, 'approved proposals run');
    },
  });
}
