import type { Generated, JSONColumnType } from 'kysely';

export type UserRole = 'administrator' | 'manager' | 'clinician' | 'staff';
export type UserStatus = 'active' | 'disabled';

/** A person of an agency: signs in to the MCP surface's authorization server, and may decide proposals (by role). */
export interface UsersTable {
  agency_id: string;
  id: string;
  /** Lower-case, unique across agencies. */
  email: string;
  name: string;
  role: UserRole;
  status: Generated<UserStatus>;
  /** scrypt, see src/identity/passwords.ts. */
  password_hash: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** An MCP client (an assistant application) an administrator registered: public, PKCE only. */
export interface McpClientsTable {
  client_id: string;
  name: string;
  redirect_uris: string[];
  status: Generated<'active' | 'disabled'>;
  created_at: Generated<Date>;
}

/** One oidc-provider model instance; bearer values are keyed by their SHA-256 (id_hash) and never stored. */
export interface McpAuthorizationRecordsTable {
  model: string;
  id_hash: string;
  payload: JSONColumnType<Record<string, unknown>, string, string>;
  grant_id: string | null;
  uid: string | null;
  consumed_at: Date | null;
  expires_at: Date | null;
}

export interface PeopleTables {
  users: UsersTable;
  mcp_clients: McpClientsTable;
  mcp_authorization_records: McpAuthorizationRecordsTable;
}
