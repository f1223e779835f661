import type { TenantStore } from '../../db/tenant-store.js';
import type { ProposalStatus } from '../../db/tables/people.js';
import { listProposals, type Proposal } from '../../proposals/proposals.js';

/** A proposal with the names people read instead of ids: who proposed it, through which assistant, who decided. */
export interface NamedProposal {
  proposal: Proposal;
  proposedBy: string;
  assistant: string;
  decidedBy: string | null;
}

/** The names of the agency's people and of the MCP clients (the platform's, not an agency's) the proposals name. */
async function namesFor(store: TenantStore, proposals: readonly Proposal[]) {
  const userIds = [...new Set(proposals.flatMap((p) => [p.user_id, ...(p.decided_by ? [p.decided_by] : [])]))];
  const clientIds = [...new Set(proposals.map((p) => p.client_id))];
  const [people, clients] = await Promise.all([
    userIds.length === 0 ? [] : store.selectFrom('users').select(['id', 'name']).where('id', 'in', userIds).execute(),
    clientIds.length === 0
      ? []
      : store
          .unscoped('the names of the MCP clients the proposals name: the platform registers them for every agency')
          .selectFrom('mcp_clients')
          .select(['client_id', 'name'])
          .where('client_id', 'in', clientIds)
          .execute(),
  ]);
  const person = new Map(people.map((p) => [p.id, p.name]));
  const client = new Map(clients.map((c) => [c.client_id, c.name]));
  return (proposal: Proposal): NamedProposal => ({
    proposal,
    proposedBy: person.get(proposal.user_id) ?? proposal.user_id,
    assistant: client.get(proposal.client_id) ?? proposal.client_id,
    decidedBy: proposal.decided_by ? (person.get(proposal.decided_by) ?? proposal.decided_by) : null,
  });
}

/** The agency's proposals, newest first (those of one status when given). */
export async function proposalQueue(store: TenantStore, status?: ProposalStatus): Promise<NamedProposal[]> {
  const proposals = await listProposals(store, status);
  return proposals.map(await namesFor(store, proposals));
}

/** One of the agency's proposals; another agency's id answers like an unknown one. */
export async function namedProposal(store: TenantStore, id: string): Promise<NamedProposal | undefined> {
  const proposal = await store.selectFrom('proposals').selectAll().where('id', '=', id).executeTakeFirst();
  return proposal && (await namesFor(store, [proposal]))(proposal);
}
