import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { EventOutbox } from '../db/tenant-store.js';
import type { ProposalStatus } from '../db/tables/people.js';
import { DECIDING_ROLES, decideProposal, listProposals, type Proposal } from '../proposals/proposals.js';
import { PlatformError } from '../shared/platform-error.js';
import { AdminError, describe, requiredOption, stringOption, type Commands } from './command.js';
import { asOperator } from './operator-command.js';

const STATUSES: readonly ProposalStatus[] = ['pending', 'approved', 'rejected', 'executed', 'failed'];

function row(proposal: Proposal) {
  return {
    id: proposal.id,
    status: proposal.status,
    summary: proposal.summary,
    operation: proposal.action.operationId,
    proposed_by: proposal.user_id,
    created_at: proposal.created_at.toISOString(),
    decided_at: proposal.decided_at?.toISOString() ?? null,
    executed_at: proposal.executed_at?.toISOString() ?? null,
    last_execution_error: proposal.last_execution_error,
  };
}

/** The deciding user, who must be active and in a role that decides (administrator or manager). */
async function decider(db: Kysely<DB>, email: string) {
  const user = await db
    .selectFrom('users')
    .select(['id', 'agency_id', 'role', 'status'])
    .where('email', '=', email.trim().toLowerCase())
    .executeTakeFirst();
  if (user?.status !== 'active') throw new AdminError(`no active user with the email ${email}`);
  if (!(DECIDING_ROLES as readonly string[]).includes(user.role)) {
    throw new AdminError(`${email} is a ${user.role}: only ${DECIDING_ROLES.join(' and ')} users decide proposals`);
  }
  return user;
}

/** Approves or rejects as the user `email`; approval.decided is written through `outbox` with the decision. */
export async function decideAs(
  db: Kysely<DB>,
  outbox: EventOutbox | undefined,
  email: string,
  proposalId: string,
  decision: 'approved' | 'rejected',
  note?: string,
) {
  const user = await decider(db, email);
  try {
    return await decideProposal(db, outbox, {
      agencyId: user.agency_id,
      proposalId,
      deciderId: user.id,
      decision,
      note,
    });
  } catch (err) {
    if (err instanceof PlatformError) throw new AdminError(err.message);
    throw err;
  }
}

function decisionCommand(decision: 'approved' | 'rejected') {
  const verb = decision === 'approved' ? 'approve' : 'reject';
  return {
    usage: `proposal ${verb} --id ID --user EMAIL [--note TEXT]`,
    options: { id: { type: 'string' }, user: { type: 'string' }, note: { type: 'string' } },
    async run({ db, options, outbox }) {
      const proposal = await decideAs(
        db,
        outbox,
        requiredOption(options, 'user'),
        requiredOption(options, 'id'),
        decision,
        stringOption(options, 'note'),
      );
      const json = row(proposal);
      const after =
        decision === 'approved'
          ? "It runs shortly (the server's proposal executor); its status tool tells when it ran."
          : 'Nothing will run.';
      return { json, text: `Proposal ${decision}. ${after}\n${describe(json)}` };
    },
  } satisfies Commands[string];
}

export const proposalCommands: Commands = {
  list: {
    usage: `proposal list --agency ID [--status ${STATUSES.join('|')}]`,
    options: { agency: { type: 'string' }, status: { type: 'string' } },
    async run(ctx) {
      const status = stringOption(ctx.options, 'status') as ProposalStatus | undefined;
      if (status !== undefined && !STATUSES.includes(status))
        throw new AdminError(`--status must be one of ${STATUSES.join(', ')}`);
      const listed = await asOperator(
        ctx,
        { operation: 'listProposals', resourceType: 'proposal', phiMode: 'no_phi' },
        (store) => listProposals(store, status),
      );
      const proposals = listed.map(row);
      return {
        json: { proposals },
        text: proposals.length === 0 ? 'No proposals.' : proposals.map((p) => describe(p)).join('\n\n'),
      };
    },
  },
  approve: decisionCommand('approved'),
  reject: decisionCommand('rejected'),
};
