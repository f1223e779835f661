import type { ProposalStatus } from '../../db/tables/people.js';
import { operations } from '../../generated/contract.js';
import type { Proposal } from '../../proposals/proposals.js';
import { html, type Html } from '../html.js';
import { instant } from '../instant.js';
import { CONSOLE_PATH, csrfField, type Viewer } from '../layout.js';
import type { NamedProposal } from './proposal-reads.js';

export const PROPOSALS_PATH = `${CONSOLE_PATH}/proposals`;
export const PROPOSAL_STATUSES: readonly ProposalStatus[] = ['pending', 'approved', 'rejected', 'executed', 'failed'];

/** The status filter of the queue: a plain GET form, so that the filtered queue has an address of its own. */
function statusFilter(shown: ProposalStatus | undefined): Html {
  const option = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="${PROPOSALS_PATH}" class="filter"><label for="status">Status</label>
<select id="status" name="status">${option('any', 'Any status', shown === undefined)}${PROPOSAL_STATUSES.map((s) => option(s, s, s === shown))}</select>
<button type="submit" class="secondary">Show</button></form>`;
}

export function queuePage(queue: readonly NamedProposal[], shown: ProposalStatus | undefined): Html {
  const rows = queue.map(
    ({ proposal, proposedBy, assistant }) =>
      html`<tr><td>${instant(proposal.created_at)}</td><td>${proposedBy}</td><td>${assistant}</td><td><a href="${PROPOSALS_PATH}/${proposal.id}">${proposal.summary}</a></td><td>${proposal.status}</td></tr>`,
  );
  const table =
    queue.length === 0
      ? html`<p>${shown ? `No ${shown} proposals.` : 'No proposals.'}</p>`
      : html`<table><caption>Proposals${shown ? html` (${shown})` : ''}, newest first</caption>
<thead><tr><th scope="col">Proposed</th><th scope="col">By</th><th scope="col">Assistant</th><th scope="col">What</th><th scope="col">Status</th></tr></thead>
<tbody>${rows}</tbody></table>`;
  return html`<p>What assistants proposed on behalf of the agency’s people. Nothing runs until a manager or an administrator approves it.</p>
${statusFilter(shown)}${table}`;
}

/** The task an executed createTask made, from the response the executor recorded. */
function createdId(proposal: Proposal): string | undefined {
  const id = (proposal.execution_result?.body as { data?: { id?: unknown } } | undefined)?.data?.id;
  return typeof id === 'string' ? id : undefined;
}

/** What became of the proposal after the decision, as the executor recorded it. */
function outcome(proposal: Proposal): Html {
  const attempts = html`<dt>Attempts</dt><dd>${proposal.execution_attempts}</dd>`;
  switch (proposal.status) {
    case 'pending':
      return html`<p>Waiting for a person to decide. Nothing has run.</p>`;
    case 'rejected':
      return html`<p>Rejected: nothing will run.</p>`;
    case 'approved':
      return html`<p>Approved; the proposal executor runs it shortly.</p>${
        proposal.last_execution_error
          ? html`<dl class="facts">${attempts}<dt>Last error (it will try again)</dt><dd>${proposal.last_execution_error}</dd></dl>`
          : ''
      }`;
    case 'executed': {
      const id = createdId(proposal);
      return html`<dl class="facts"><dt>Executed</dt><dd>${instant(proposal.executed_at)}</dd>
<dt>Answered (HTTP status)</dt><dd>${proposal.execution_result?.status ?? '—'}</dd>${id ? html`<dt>Task created</dt><dd><code>${id}</code></dd>` : ''}${attempts}</dl>`;
    }
    case 'failed':
      return html`<dl class="facts"><dt>Failed</dt><dd>${proposal.last_execution_error ?? '—'}</dd>${attempts}</dl>`;
  }
}

function decisionForm(viewer: Viewer, proposal: Proposal, reason: string): Html {
  return html`<h2>Decide</h2>
<form method="post" action="${PROPOSALS_PATH}/${proposal.id}/decision" class="stack">${csrfField(viewer)}
<label for="reason">Reason (required to reject: the person who asked reads it)</label>
<textarea id="reason" name="reason" rows="3" maxlength="2000">${reason}</textarea>
<button type="submit" name="decision" value="approved">Approve</button> <button type="submit" name="decision" value="rejected" class="danger">Reject</button></form>`;
}

export function proposalPage(
  viewer: Viewer,
  { proposal, proposedBy, assistant, decidedBy }: NamedProposal,
  mayDecide: boolean,
  reason = '',
): Html {
  const operation = operations[proposal.action.operationId];
  const decision = proposal.decided_at
    ? html`<h2>Decision</h2><dl class="facts"><dt>Decided by</dt><dd>${decidedBy}</dd><dt>When</dt><dd>${instant(proposal.decided_at)}</dd>
<dt>Reason</dt><dd>${proposal.decision_note ?? '—'}</dd></dl>`
    : '';
  return html`<p><a href="${PROPOSALS_PATH}">All proposals</a></p>
<dl class="facts"><dt>Status</dt><dd>${proposal.status}</dd><dt>Proposed by</dt><dd>${proposedBy}</dd><dt>Assistant</dt><dd>${assistant}</dd><dt>Proposed</dt><dd>${instant(proposal.created_at)}</dd><dt>Id</dt><dd><code>${proposal.id}</code></dd></dl>
<h2>What would run</h2><p>${proposal.summary}</p>
<p>Operation <code>${operation.operationId}</code> (${operation.method} ${operation.path}), with this body:</p>
<pre>${JSON.stringify(proposal.action.body, null, 2)}</pre>
${decision}${mayDecide && proposal.status === 'pending' ? decisionForm(viewer, proposal, reason) : ''}
<h2>Outcome</h2>${outcome(proposal)}`;
}
