import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { operations, type OperationId } from '../../generated/contract.js';
import type { Principal } from '../../shared/principal.js';
import { CURRENT_CONTRACT_VERSION } from '../grants.js';
import type { McpAccess } from './authorization-server.js';

/**
 * The operations the MCP surface's tools run (src/mcp/tools.ts), all reads that no_phi sessions may use: the policy
 * of the agency's people extension grants exactly their scopes and capabilities.
 */
const MCP_TOOL_OPERATIONS: readonly OperationId[] = [
  'listPatients',
  'listIntakes',
  'listReferrals',
  'listVisits',
  'listPhysicianOrders',
  'getHhvbpSummary',
  'listHhvbpMeasures',
  'getCatalog',
  'runQuery',
  // Read by governed queries only (remittance totals): runQuery needs each query's data scope and capability besides its own.
  'listRemittances',
];

/** The operations an approved proposal may run (src/proposals/), as its proposer; no tool runs them. */
const PROPOSABLE_OPERATIONS: readonly OperationId[] = ['createTask'];

/**
 * Each agency's MCP surface runs as one extension of the agency (the gateway's policy, limits, metering and audit
 * apply to it as to any integration): an administrator disables the whole surface with `integration disable`, or
 * revokes every token of it at once. Created with the agency's first user.
 */
export const PEOPLE_EXTENSION_ID = 'mcp-people';

const scopesOf = (ids: readonly OperationId[]): string[] => [
  ...new Set(
    ids.flatMap((id): string[] => {
      const scope: string | null = operations[id].scope;
      return scope === null ? [] : [scope];
    }),
  ),
];
const capabilitiesOf = (ids: readonly OperationId[]): string[] => [
  ...new Set(ids.map((id) => operations[id].capability)),
];

const TOOL_SCOPES: ReadonlySet<string> = new Set(scopesOf(MCP_TOOL_OPERATIONS));

// The limits of a person at an assistant: a tool call runs several reads.
const RATE_LIMIT_PER_MINUTE = 600;
const DAILY_QUOTA = 20_000;

export async function ensurePeopleExtension(db: Kysely<DB>, agencyId: string): Promise<void> {
  await db
    .insertInto('extensions')
    .values({
      agency_id: agencyId,
      id: PEOPLE_EXTENSION_ID,
      name: 'MCP surface for people',
      scopes: scopesOf([...MCP_TOOL_OPERATIONS, ...PROPOSABLE_OPERATIONS]),
      capabilities: capabilitiesOf([...MCP_TOOL_OPERATIONS, ...PROPOSABLE_OPERATIONS]),
      phi_modes: ['no_phi'],
      rate_limit_per_minute: RATE_LIMIT_PER_MINUTE,
      daily_quota: DAILY_QUOTA,
      daily_cost_budget: null,
      contract_version: CURRENT_CONTRACT_VERSION,
      tokens_revoked_before: null,
    })
    .onConflict((oc) => oc.columns(['agency_id', 'id']).doNothing())
    .execute();
}

/** The principal a tool call runs as: the user's agency, the people extension, no_phi, only the tools' read scopes. */
export function toolPrincipal(access: McpAccess): Principal {
  return {
    agencyId: access.person.agencyId,
    extensionId: PEOPLE_EXTENSION_ID,
    clientId: access.clientId,
    phiMode: 'no_phi',
    scopes: TOOL_SCOPES,
    tokenId: access.tokenId,
    issuedAt: access.issuedAt,
    expiresAt: access.expiresAt,
  };
}
