import type { Kysely } from 'kysely';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { DB } from '../db/schema.js';
import { operations } from '../generated/contract.js';
import type { McpAccess } from '../identity/mcp-authorization/authorization-server.js';
import { PlatformError } from '../shared/platform-error.js';
import { toolError, type ToolDescription } from './tools.js';
import { MAX_EXECUTION_ATTEMPTS } from '../proposals/execution.js';
import { createProposal, findOwnProposal, type Proposal } from '../proposals/proposals.js';

/** What the next step is, for the assistant and the person it works for. */
function nextStep(proposal: Proposal): string {
  switch (proposal.status) {
    case 'pending':
      return 'Waiting for a person of the agency (an administrator or manager) to approve or reject it in the product. Check again later; do not propose it again.';
    case 'approved':
      return proposal.last_execution_error
        ? `Approved; the last run failed for a passing reason and is retried (attempt ${proposal.execution_attempts} of ${MAX_EXECUTION_ATTEMPTS}). Check again shortly.`
        : 'Approved and about to run. Check again shortly: approval does not mean it ran.';
    case 'rejected':
      return 'Rejected: nothing will run. Ask the person who decided if it should be proposed differently.';
    case 'executed':
      return 'Done: the action ran once. Nothing more to do.';
    case 'failed':
      return 'The approved action could not run (see lastExecutionError); it will not be retried. Propose a corrected action with a new idempotency key.';
  }
}

function taskIdOf(proposal: Proposal): string | null {
  const data = (proposal.execution_result?.body as { data?: { id?: unknown } } | undefined)?.data;
  return typeof data?.id === 'string' ? data.id : null;
}

/** `braes.proposals.status`: status, decided, executedAt, lastExecutionError, next; and what was decided and made. */
function proposalStatus(proposal: Proposal) {
  return {
    approvalId: proposal.id,
    status: proposal.status,
    decided: proposal.decided_at !== null,
    decision: proposal.decided_at === null ? null : proposal.status === 'rejected' ? 'rejected' : 'approved',
    decidedAt: proposal.decided_at?.toISOString() ?? null,
    executedAt: proposal.executed_at?.toISOString() ?? null,
    lastExecutionError: proposal.last_execution_error,
    result: proposal.status === 'executed' ? { taskId: taskIdOf(proposal) } : null,
    next: nextStep(proposal),
  };
}

function statusResult(proposal: Proposal, extra: Record<string, unknown> = {}): CallToolResult {
  const structured = { ...proposalStatus(proposal), ...extra };
  return {
    content: [
      {
        type: 'text',
        text: `Proposal ${proposal.id}: ${proposal.status}. ${structured.next}\n${JSON.stringify(structured)}`,
      },
    ],
    structuredContent: structured,
  };
}

const PROPOSAL_STATUSES = [
  'pending',
  'approved',
  'rejected',
  'executed',
  'failed',
] as const satisfies readonly Proposal['status'][];
const instant = z.string().nullable();
const statusOutput = {
  approvalId: z.string(),
  status: z.enum(PROPOSAL_STATUSES),
  decided: z.boolean(),
  decision: z.enum(['approved', 'rejected']).nullable(),
  decidedAt: instant,
  executedAt: instant.describe('When the action ran; null until it did.'),
  lastExecutionError: z.string().nullable(),
  result: z.object({ taskId: z.string().nullable() }).nullable().describe('What the action made, once executed.'),
  next: z.string().describe('The next step, for the assistant and the person it works for.'),
};
const createOutput = {
  ...statusOutput,
  replayed: z.boolean().describe('true when the key and proposal were already recorded: this is the first answer.'),
};

const createInput = {
  idempotencyKey: z
    .string()
    .min(8)
    .max(200)
    .describe(
      '8 to 200 characters, new for each new proposal: a retry with the same key and the same proposal answers the first; another proposal under it is refused.',
    ),
  summary: z
    .string()
    .min(1)
    .max(2000)
    .describe('What the change is and why, for the person who decides. No patient names or other identifiers.'),
  action: z.object({
    operation: z
      .literal('create_task')
      .describe(
        "The only proposable action: create a task (for example to ask a working collection's owner for a change).",
      ),
    task: z
      .record(z.string(), z.unknown())
      .describe(
        'The body of POST /api/v1/ext/tasks (TaskCreateRequest): title, description, priority, due_date, assignee_id, related_resource; patients by their PT- handles.',
      ),
  }),
};

type CreateArgs = {
  idempotencyKey: string;
  summary: string;
  action: { operation: 'create_task'; task: Record<string, unknown> };
};

async function create(db: Kysely<DB>, access: McpAccess, args: CreateArgs): Promise<CallToolResult> {
  const validate = operations.createTask.validate.body;
  if (!validate(args.action.task)) {
    const issues = (validate.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? '' }));
    return toolError({
      code: 'PLATFORM_INVALID_INPUT',
      message: 'action.task is not a valid task (TaskCreateRequest).',
      issues,
    });
  }
  try {
    const { proposal, replayed } = await createProposal(db, {
      agencyId: access.person.agencyId,
      userId: access.person.id,
      clientId: access.clientId,
      idempotencyKey: args.idempotencyKey,
      summary: args.summary,
      action: { operationId: 'createTask', body: args.action.task },
    });
    return statusResult(proposal, { replayed });
  } catch (err) {
    if (err instanceof PlatformError) return toolError({ code: err.code, message: err.message });
    throw err;
  }
}

const CREATE = {
  name: 'braes.proposals.create',
  title: 'Propose a change for a person to approve',
  description:
    'Records a proposed change (today: create a task) for a person of the agency to approve or reject. Nothing runs until a person approves it; follow it with braes.proposals.status.',
};
const STATUS = {
  name: 'braes.proposals.status',
  title: 'Status of a proposal',
  description:
    'The current truth of a proposal: status, whether a person decided, when the action ran, its last error, and the next step. approval.decided does not prove the action ran; this does.',
};

export const PROPOSAL_TOOL_DESCRIPTIONS: readonly ToolDescription[] = [
  { ...CREATE, read_only: false },
  { ...STATUS, read_only: true },
];

/** Proposals: the assistant proposes and follows up; only a person decides, and there is no decision tool. */
export function registerProposalTools(server: McpServer, db: Kysely<DB>, access: McpAccess) {
  server.registerTool(
    CREATE.name,
    {
      ...CREATE,
      inputSchema: createInput,
      outputSchema: createOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args: CreateArgs) => create(db, access, args),
  );
  server.registerTool(
    STATUS.name,
    {
      ...STATUS,
      inputSchema: { approvalId: z.string().min(1).max(64) },
      outputSchema: statusOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ approvalId }: { approvalId: string }) => {
      // A person follows their own proposals; another's id answers like an unknown one.
      const proposal = await findOwnProposal(db, access.person, approvalId);
      return proposal
        ? statusResult(proposal)
        : toolError({ code: 'PLATFORM_APPROVAL_NOT_FOUND', message: `No proposal ${approvalId} of yours.` });
    },
  );
}
