import type { Generated, JSONColumnType } from 'kysely';

export type UserRole = 'administrator' | 'manager' | 'clinician' | 'staff';
type UserStatus = 'active' | 'disabled';

/** A person of an agency: signs in to the MCP surface's authorization server, and may decide proposals (by role). */
interface UsersTable {
  agency_id: string;
  id: string;
  /** Lower-case, unique across agencies. */
  email: string;
  name: string;
  role: UserRole;
  status: Generated<UserStatus>;
  /** scrypt, see src/identity/secrets.ts. */
  password_hash: string;
  /** Set while the password is the one an administrator handed over: the next sign-in asks for a new one. */
  password_change_required: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** An MCP client (an assistant application) an administrator registered: public, PKCE only. */
interface McpClientsTable {
  client_id: string;
  name: string;
  redirect_uris: string[];
  status: Generated<'active' | 'disabled'>;
  created_at: Generated<Date>;
}

/** One oidc-provider model instance; bearer values are keyed by their SHA-256 (id_hash) and never stored. */
interface McpAuthorizationRecordsTable {
  model: string;
  id_hash: string;
  payload: JSONColumnType<Record<string, unknown>, string, string>;
  grant_id: string | null;
  uid: string | null;
  consumed_at: Date | null;
  expires_at: Date | null;
}

export type ProposalStatus = 'pending' | 'approved' | 'rejected' | 'executed' | 'failed';

/** The operation an approved proposal runs, as its proposer would have called it. */
export interface ProposedAction {
  operationId: 'createTask';
  body: Record<string, unknown>;
}

interface ProposalExecutionResult {
  status: number;
  body: unknown;
}

/** A change an assistant proposed for a person of the agency to approve or reject; run once after approval. */
export interface ProposalsTable {
  agency_id: string;
  id: string;
  user_id: string;
  client_id: string;
  /** 8 to 200 characters, per user: a replay answers the same proposal, another request under it is a conflict. */
  idempotency_key: string;
  fingerprint: string;
  action: JSONColumnType<ProposedAction, string, string>;
  summary: string;
  status: Generated<ProposalStatus>;
  decided_by: string | null;
  decided_at: Date | null;
  decision_note: string | null;
  execution_attempts: Generated<number>;
  /** An executor holds the proposal until then; past it another may take it (the operation's idempotency key makes that safe). */
  execution_lease_until: Date | null;
  executed_at: Date | null;
  execution_result: JSONColumnType<ProposalExecutionResult, string | null, string | null> | null;
  last_execution_error: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** A person's agency console session; the cookie's value is never stored, only its SHA-256. */
interface ConsoleSessionsTable {
  id_hash: string;
  user_id: string;
  agency_id: string;
  created_at: Generated<Date>;
  last_seen_at: Generated<Date>;
  /** The absolute end of the session; an idle one ends earlier (src/identity/console-sessions.ts). */
  expires_at: Date;
}

export interface PeopleTables {
  console_sessions: ConsoleSessionsTable;
  proposals: ProposalsTable;
  users: UsersTable;
  mcp_clients: McpClientsTable;
  mcp_authorization_records: McpAuthorizationRecordsTable;
}
