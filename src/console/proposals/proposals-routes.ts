import type { FastifyReply, FastifyRequest } from 'fastify';
import { decideAs } from '../../admin/proposal.js';
import type { ProposalStatus } from '../../db/tables/people.js';
import { isStorableText } from '../../domain/storable-text.js';
import {
  doneNotices,
  type DoneWord,
  refusalOf,
  pageError,
  formText,
  needs,
  readStore,
  render,
  viewerOf,
  type ConsoleContext,
  type ConsoleSection,
} from '../console-context.js';
import { mayIn } from '../console-roles.js';
import type { Notice } from '../layout.js';
import { namedProposal, proposalQueue } from './proposal-reads.js';
import { PROPOSAL_STATUSES, PROPOSALS_PATH, proposalPage, queuePage } from './proposal-pages.js';

const MAX_REASON = 2000;

const DONE = doneNotices({
  approved: 'Approved. The proposal executor runs it shortly; its outcome appears below.',
  rejected: 'Rejected. Nothing will run.',
});

function shownStatus(request: FastifyRequest): ProposalStatus | undefined {
  const { status = 'pending' } = request.query as { status?: string };
  if (status === 'any') return undefined;
  if (!(PROPOSAL_STATUSES as readonly string[]).includes(status))
    throw pageError(400, `There is no proposal status "${status}": choose one of ${PROPOSAL_STATUSES.join(', ')}.`);
  return status as ProposalStatus;
}

/** Why a decision cannot be taken as sent, or undefined. */
/** A decision is one of the words its notices know. */
type Decision = DoneWord<typeof DONE>;
const isDecision = (word: string): word is Decision => word === 'approved' || word === 'rejected';

function reasonProblem(decision: Decision, reason: string): string | undefined {
  if (decision === 'rejected' && reason === '') return 'Say why you reject it: the person who asked reads the reason.';
  if (reason.length > MAX_REASON) return `The reason is ${reason.length} characters; keep it to ${MAX_REASON}.`;
  if (!isStorableText(reason)) return 'The reason holds characters that are not text (a NUL byte or a broken pair).';
  return undefined;
}

async function showProposal(
  ctx: ConsoleContext,
  request: FastifyRequest,
  reply: FastifyReply,
  notice?: Notice,
  status = 200,
) {
  const viewer = viewerOf(request);
  const { id } = request.params as { id: string };
  const found = await namedProposal(readStore(ctx, viewer.person), id);
  if (!found) throw pageError(404, 'There is no such proposal in this agency.');
  const mayDecide = mayIn(viewer.person.role, 'decide');
  const reason = notice?.kind === 'refused' ? formText(request, 'reason') : '';
  return render(request, reply, 'Proposal', proposalPage(viewer, found, mayDecide, reason), notice, status);
}

/**
 * The proposals of assistants (the MCP surface's `braes.proposals.create`): the queue, each proposal with its exact
 * operation and body, the decision of a manager or administrator (the admin CLI's, emitting approval.decided in the
 * decision's transaction), and what the executor then recorded.
 */
export const proposalsSection: ConsoleSection = {
  nav: { path: PROPOSALS_PATH, label: 'Proposals', capability: 'read' },
  register(scope, ctx) {
    scope.get('/proposals', async (request, reply) => {
      const shown = shownStatus(request);
      const queue = await proposalQueue(readStore(ctx, viewerOf(request).person), shown);
      return render(request, reply, 'Proposals', queuePage(queue, shown));
    });

    scope.get('/proposals/:id', async (request, reply) => showProposal(ctx, request, reply, DONE.of(request)));

    scope.post('/proposals/:id/decision', { preHandler: needs('decide') }, async (request, reply) => {
      const { person } = viewerOf(request);
      const { id } = request.params as { id: string };
      if (!(await namedProposal(readStore(ctx, person), id)))
        throw pageError(404, 'There is no such proposal in this agency.');
      const decision = formText(request, 'decision');
      const reason = formText(request, 'reason').trim();
      const refuse = (text: string) => showProposal(ctx, request, reply, { kind: 'refused', text }, 400);
      if (!isDecision(decision)) return refuse('Choose Approve or Reject.');
      const problem = reasonProblem(decision, reason);
      if (problem) return refuse(problem);
      try {
        await decideAs(ctx.db, ctx.services.outbox, person.email, id, decision, reason || undefined);
      } catch (err) {
        return showProposal(ctx, request, reply, refusalOf(err), 409);
      }
      return DONE.redirect(reply, `${PROPOSALS_PATH}/${id}`, decision);
    });
  },
};
