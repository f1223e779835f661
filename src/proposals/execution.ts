import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { operations } from '../generated/contract.js';
import { callOperation } from '../gateway/core/direct-call.js';
import type { Gateway } from '../gateway/core/gateway.js';
import { PEOPLE_EXTENSION_ID } from '../identity/mcp-authorization/people-extension.js';
import type { Principal } from '../shared/principal.js';
import { recordExecution, takeApproved, type ExecutionOutcome, type Proposal } from './proposals.js';

/** Attempts before an action that keeps failing for passing (retryable) reasons counts as failed. */
export const MAX_EXECUTION_ATTEMPTS = 5;

/**
 * Who an approved action runs as: the proposing user's agency and client through the people extension, in no_phi,
 * with only the scope of the proposed operation. A revocation of the extension's tokens after the decision stops it.
 */
function proposerPrincipal(proposal: Proposal): Principal {
  const scope = operations[proposal.action.operationId].scope;
  return {
    agencyId: proposal.agency_id,
    extensionId: PEOPLE_EXTENSION_ID,
    clientId: proposal.client_id,
    phiMode: 'no_phi',
    scopes: new Set(scope ? [scope] : []),
    tokenId: `proposal:${proposal.id}`,
    issuedAt: proposal.decided_at!,
    expiresAt: new Date(Date.now() + 60_000),
  };
}

/**
 * Runs an approved proposal's operation through the gateway. The idempotency key is the proposal's, so a second run
 * (an executor that stopped after the operation committed and before recording it, then took it again) replays the
 * first answer instead of acting twice; the gateway keeps keys 24 hours.
 */
export async function executeProposal(gateway: Gateway, proposal: Proposal): Promise<ExecutionOutcome> {
  const result = await callOperation(gateway, {
    operationId: proposal.action.operationId,
    principal: proposerPrincipal(proposal),
    body: proposal.action.body as never,
    idempotencyKey: `proposal.${proposal.id}`,
  });
  if (!result.refusal) return { kind: 'executed', result: { status: result.status, body: result.body } };
  const { code, message, retryable } = result.refusal;
  // Whether to try again is the contract's call (x-svc-error-codes), not the status class's: a 409 can pass, a 501 cannot.
  const kind = retryable && proposal.execution_attempts < MAX_EXECUTION_ATTEMPTS ? 'retry' : 'failed';
  return { kind, error: `${result.status} ${code}: ${message}` };
}

/** One executor pass: takes what is approved and not held, runs each, records each outcome. */
export async function executeApproved(db: Kysely<DB>, gateway: Gateway, batch = 10): Promise<number> {
  const taken = await takeApproved(db, batch);
  for (const proposal of taken) {
    const outcome = await executeProposal(gateway, proposal);
    await recordExecution(db, proposal, outcome);
  }
  return taken.length;
}
