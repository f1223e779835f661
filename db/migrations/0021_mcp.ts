import { sql, type Kysely } from 'kysely';

/**
 * The MCP surface for people: users of an agency (who sign in there and decide proposals), the MCP clients an
 * administrator registered, what the authorization server (oidc-provider) stores, and proposals: changes an
 * assistant asked for, awaiting or after a person's decision, and their execution. Bearer values (access and refresh tokens, codes) are
 * stored under their SHA-256 only, so reading the database or a backup yields no usable token. MCP clients are
 * global (one assistant serves people of many agencies); users carry agency_id in their key.
 */

async function createUsers(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('agency_id', 'text', (c) => c.notNull().references('agencies.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    // Stored lower-case: one sign-in name per person across agencies.
    .addColumn('email', 'text', (c) => c.notNull().unique().check(sql`email = lower(email) and email like '%_@_%'`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) =>
      c.notNull().check(sql`role in ('administrator', 'manager', 'clinician', 'staff')`),
    )
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status in ('active', 'disabled')`))
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('users_pk', ['agency_id', 'id'])
    .addUniqueConstraint('users_id_unique', ['id'])
    .execute();
}

async function createMcpClients(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mcp_clients')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', sql`text[]`, (c) => c.notNull().check(sql`cardinality(redirect_uris) > 0`))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status in ('active', 'disabled')`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

/** oidc-provider's models (Session, Interaction, Grant, AuthorizationCode, AccessToken, RefreshToken...) in one table. */
async function createAuthorizationRecords(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mcp_authorization_records')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('id_hash', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('grant_id', 'text')
    .addColumn('uid', 'text')
    .addColumn('consumed_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz')
    .addPrimaryKeyConstraint('mcp_authorization_records_pk', ['model', 'id_hash'])
    .execute();
  await db.schema
    .createIndex('mcp_authorization_records_grant')
    .on('mcp_authorization_records')
    .columns(['grant_id'])
    .where(sql.ref('grant_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('mcp_authorization_records_uid')
    .on('mcp_authorization_records')
    .columns(['uid'])
    .where(sql.ref('uid'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('mcp_authorization_records_expiry')
    .on('mcp_authorization_records')
    .columns(['expires_at'])
    .execute();
}

async function createProposals(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('proposals')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull().references('mcp_clients.client_id'))
    .addColumn('idempotency_key', 'text', (c) => c.notNull().check(sql`length(idempotency_key) between 8 and 200`))
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('action', 'jsonb', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('pending').check(sql`status in ('pending', 'approved', 'rejected', 'executed', 'failed')`),
    )
    .addColumn('decided_by', 'text')
    .addColumn('decided_at', 'timestamptz')
    .addColumn('decision_note', 'text')
    .addColumn('execution_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('execution_lease_until', 'timestamptz')
    .addColumn('executed_at', 'timestamptz')
    .addColumn('execution_result', 'jsonb')
    .addColumn('last_execution_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('proposals_pk', ['agency_id', 'id'])
    .addUniqueConstraint('proposals_idempotency_unique', ['agency_id', 'user_id', 'idempotency_key'])
    .addForeignKeyConstraint('proposals_user_fk', ['agency_id', 'user_id'], 'users', ['agency_id', 'id'])
    .addForeignKeyConstraint('proposals_decided_by_fk', ['agency_id', 'decided_by'], 'users', ['agency_id', 'id'])
    .addCheckConstraint('proposals_decision', sql`(status = 'pending') = (decided_at is null)`)
    .execute();
  // The executor's queue: approved proposals not yet run.
  await db.schema
    .createIndex('proposals_approved')
    .on('proposals')
    .columns(['decided_at'])
    .where(sql.ref('status'), '=', 'approved')
    .execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  await createUsers(db);
  await createMcpClients(db);
  await createAuthorizationRecords(db);
  await createProposals(db);
}
