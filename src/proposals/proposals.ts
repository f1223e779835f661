import { createHash } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../db/schema.js';
import type { ProposalsTable, ProposedAction } from '../db/tables/people.js';
import type { CommandStore, EventOutbox, TenantStore } from '../db/tenant-store.js';
import { personActor, runPlatformCommand } from '../platform-commands/platform-command.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { randomId } from '../shared/ids.js';
import { PlatformError } from '../shared/platform-error.js';

export type Proposal = Selectable<ProposalsTable>;

/** The roles whose people may approve or reject proposals. */
export const DECIDING_ROLES = ['administrator', 'manager'] as const;

interface ProposalRequest {
  agencyId: string;
  userId: string;
  clientId: string;
  idempotencyKey: string;
  action: ProposedAction;
  summary: string;
}

const fingerprintOf = (request: ProposalRequest) =>
  createHash('sha256')
    .update(canonicalJson({ action: request.action, summary: request.summary }))
    .digest('base64url');

/** A person's platform command on proposals: their own, audited as theirs. */
const byPerson = (agencyId: string, userId: string, operation: string) =>
  ({
    agencyId,
    operation,
    actor: personActor(userId),
    resourceType: 'proposal',
    phiMode: 'no_phi',
    outbox: undefined,
  }) as const;

/**
 * Records a proposal once per (user, idempotency key): the same request again answers the proposal it made
 * (replayed), another request under the key is PLATFORM_IDEMPOTENCY_CONFLICT, as a REST command's key would be.
 */
export function createProposal(
  db: Kysely<DB>,
  request: ProposalRequest,
): Promise<{ proposal: Proposal; replayed: boolean }> {
  return runPlatformCommand(db, byPerson(request.agencyId, request.userId, 'createProposal'), (store) =>
    recordProposal(store, request),
  );
}

async function recordProposal(
  store: CommandStore,
  request: ProposalRequest,
): Promise<{ proposal: Proposal; replayed: boolean }> {
  const fingerprint = fingerprintOf(request);
  const inserted = await store
    .insertInto('proposals')
    .values({
      id: randomId('apr_'),
      user_id: request.userId,
      client_id: request.clientId,
      idempotency_key: request.idempotencyKey,
      fingerprint,
      action: JSON.stringify(request.action),
      summary: request.summary,
    })
    .onConflict((oc) => oc.columns(['agency_id', 'user_id', 'idempotency_key']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { proposal: inserted, replayed: false };
  const existing = await store
    .selectFrom('proposals')
    .selectAll()
    .where('user_id', '=', request.userId)
    .where('idempotency_key', '=', request.idempotencyKey)
    .executeTakeFirstOrThrow();
  if (existing.fingerprint !== fingerprint) {
    throw new PlatformError(
      'PLATFORM_IDEMPOTENCY_CONFLICT',
      'This idempotency key was already used for a different proposal; use a new key for a new proposal.',
      { idempotencyKey: request.idempotencyKey },
    );
  }
  return { proposal: existing, replayed: true };
}

/** A proposal the person made, read as theirs; another's id, or another agency's, answers like an unknown one. */
export function findOwnProposal(
  db: Kysely<DB>,
  person: { agencyId: string; id: string },
  id: string,
): Promise<Proposal | undefined> {
  return runPlatformCommand(db, byPerson(person.agencyId, person.id, 'getProposalStatus'), (store) =>
    store.selectFrom('proposals').selectAll().where('id', '=', id).where('user_id', '=', person.id).executeTakeFirst(),
  );
}

export function listProposals(store: TenantStore, status?: Proposal['status']): Promise<Proposal[]> {
  let query = store.selectFrom('proposals').selectAll().orderBy('created_at', 'desc').limit(200);
  if (status) query = query.where('status', '=', status);
  return query.execute();
}

interface Decision {
  agencyId: string;
  proposalId: string;
  deciderId: string;
  decision: 'approved' | 'rejected';
  note?: string;
}

/**
 * A person's decision, as a platform command of theirs (its audit record names them and the proposal), and its
 * `approval.decided` event in the same transaction (through the outbox port, which refuses rather than drops the
 * event when none is configured). The event says what was decided, not that anything ran: execution is the
 * executor's, and the status tool tells it.
 */
export async function decideProposal(
  db: Kysely<DB>,
  outbox: EventOutbox | undefined,
  decision: Decision,
): Promise<Proposal> {
  const command = {
    agencyId: decision.agencyId,
    operation: 'decideProposal',
    actor: personActor(decision.deciderId),
    resourceType: 'proposal',
    phiMode: 'no_phi',
    outbox,
  } as const;
  return runPlatformCommand(db, command, async (store) => {
    const decided = await store
      .updateTable('proposals')
      .set({
        status: decision.decision,
        decided_by: decision.deciderId,
        decided_at: sql<Date>`now()`,
        decision_note: decision.note ?? null,
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', decision.proposalId)
      .where('status', '=', 'pending')
      .returningAll()
      .executeTakeFirst();
    if (!decided) {
      const existing = await store
        .selectFrom('proposals')
        .select('status')
        .where('id', '=', decision.proposalId)
        .executeTakeFirst();
      if (!existing)
        throw new PlatformError('PLATFORM_APPROVAL_NOT_FOUND', `No proposal ${decision.proposalId} in this agency.`);
      throw new PlatformError(
        'PLATFORM_APPROVAL_ALREADY_USED',
        `Proposal ${decision.proposalId} was already ${existing.status === 'rejected' ? 'rejected' : 'approved'}.`,
      );
    }
    await store.emit({
      type: 'approval.decided',
      data: {
        approval_id: decided.id,
        decision: decision.decision,
        decided_at: decided.decided_at!.toISOString(),
        proposed_operation: decided.action.operationId,
      },
    });
    return decided;
  });
}

/** Seconds to wait before retrying a passing failure, times the attempts made. */
const RETRY_BACKOFF_SECONDS = 30;

/** How long an executor holds a proposal it took before another may take it. */
const LEASE_SECONDS = 120;

/** Approved proposals not yet executed and not held by another executor, each now held by this one for a while. */
export async function takeApproved(db: Kysely<DB>, limit: number): Promise<Proposal[]> {
  return db
    .updateTable('proposals')
    .set({
      execution_lease_until: sql<Date>`now() + make_interval(secs => ${LEASE_SECONDS})`,
      execution_attempts: sql<number>`execution_attempts + 1`,
      updated_at: sql<Date>`now()`,
    })
    .where(({ eb, refTuple, selectFrom }) =>
      eb(
        refTuple('agency_id', 'id'),
        'in',
        selectFrom('proposals')
          .select(['agency_id', 'id'])
          .where('status', '=', 'approved')
          .where((w) =>
            w.or([w('execution_lease_until', 'is', null), w('execution_lease_until', '<', sql<Date>`now()`)]),
          )
          .orderBy('decided_at')
          .limit(limit)
          .forUpdate()
          .skipLocked() as never,
      ),
    )
    .returningAll()
    .execute();
}

export type ExecutionOutcome =
  | { kind: 'executed'; result: { status: number; body: unknown } }
  | { kind: 'failed' | 'retry'; error: string };

/** Records what running the action did, as the executor's platform command: once executed, a proposal never runs again. */
export function recordExecution(db: Kysely<DB>, proposal: Proposal, outcome: ExecutionOutcome): Promise<void> {
  const command = {
    agencyId: proposal.agency_id,
    operation: 'recordProposalExecution',
    actor: 'proposal-executor',
    resourceType: 'proposal',
    phiMode: 'no_phi',
    outbox: undefined,
  } as const;
  return runPlatformCommand(db, command, (store) => recordOutcome(store, proposal, outcome));
}

async function recordOutcome(store: CommandStore, proposal: Proposal, outcome: ExecutionOutcome): Promise<void> {
  const update = store.updateTable('proposals').where('id', '=', proposal.id).where('status', '=', 'approved');
  if (outcome.kind === 'executed') {
    await update
      .set({
        status: 'executed',
        executed_at: sql<Date>`now()`,
        execution_result: JSON.stringify(outcome.result),
        last_execution_error: null,
        execution_lease_until: null,
        updated_at: sql<Date>`now()`,
      })
      .execute();
  } else if (outcome.kind === 'failed') {
    await update
      .set({
        status: 'failed',
        last_execution_error: outcome.error,
        execution_lease_until: null,
        updated_at: sql<Date>`now()`,
      })
      .execute();
  } else {
    // Not before a wait that grows with each attempt: five quick retries would all fall in one rate-limit minute.
    const wait = sql<Date>`now() + make_interval(secs => ${RETRY_BACKOFF_SECONDS * proposal.execution_attempts})`;
    await update
      .set({ last_execution_error: outcome.error, execution_lease_until: wait, updated_at: sql<Date>`now()` })
      .execute();
  }
}
