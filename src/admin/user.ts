import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { UserRole } from '../db/tables/people.js';
import { ensurePeopleExtension } from '../identity/mcp-authorization/people-extension.js';
import {
  changePassword,
  hashPassword,
  normalizedEmail,
  USER_ROLES,
  type Person,
} from '../identity/mcp-authorization/people.js';
import { endSessionsOf } from '../identity/console-sessions.js';
import { randomId } from '../shared/ids.js';
import { sqlState } from '../db/sql-state.js';
import type { CommandStore, TenantStore } from '../db/tenant-store.js';
import { personActor, type PlatformActor } from '../platform-commands/platform-command.js';
import { AdminError, describe, requiredOption, type Commands } from './command.js';
import { asOperator, asOperatorOn, noAgency, type OperatorCommand } from './operator-command.js';

interface UserInput {
  agencyId: string;
  email: string;
  name: string;
  role: UserRole;
}

export interface CreatedUser {
  userId: string;
  agencyId: string;
  email: string;
  /** Shown once: only its scrypt hash is stored. */
  initialPassword: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function checkUser(input: UserInput): void {
  if (!EMAIL.test(input.email)) throw new AdminError(`--email must be an email address, got "${input.email}"`);
  if (!input.name.trim()) throw new AdminError('--name must not be empty');
  if (!USER_ROLES.includes(input.role))
    throw new AdminError(`--role must be one of ${USER_ROLES.join(', ')}, got "${input.role}"`);
}

/** What a user command does, on the audit record: to the agency's people, never with PHI. */
const ON_USERS: Omit<OperatorCommand, 'operation'> = { resourceType: 'user', phiMode: 'no_phi' };

/** A user of an agency with a random initial password; the agency's MCP surface (its people extension) exists after. */
export async function createUser(
  db: Kysely<DB>,
  input: UserInput,
  actor: PlatformActor = 'admin-cli',
): Promise<CreatedUser> {
  checkUser(input);
  const initialPassword = randomId('', 18);
  const userId = randomId('usr_');
  const email = normalizedEmail(input.email);
  const passwordHash = await hashPassword(initialPassword);
  const user = { id: userId, email, name: input.name.trim(), role: input.role, password_hash: passwordHash };
  try {
    await asOperatorOn(
      db,
      input.agencyId,
      { ...ON_USERS, operation: 'createUser', actor },
      async (store) => {
        await store.insertInto('users').values(user).execute();
        store.auditReferences([userId]);
        const handle = store.unscoped('identity writes the people extension on the handle it is given');
        await ensurePeopleExtension(handle, store.agencyId);
      },
      { unknownAgency: noAgency },
    );
  } catch (err) {
    if (sqlState(err) === '23505') throw new AdminError(`a user with the email ${email} exists already`);
    throw err;
  }
  return { userId, agencyId: input.agencyId, email, initialPassword };
}

async function setUserStatus(db: Kysely<DB>, email: string, status: 'active' | 'disabled') {
  // A person is found by their email, whichever agency they belong to.
  const person = await db
    .selectFrom('users')
    .select('agency_id')
    .where('email', '=', normalizedEmail(email))
    .executeTakeFirst();
  if (!person) throw new AdminError(`no user with the email ${email}`);
  const operation = status === 'active' ? 'enableUser' : 'disableUser';
  return asOperatorOn(db, person.agency_id, { ...ON_USERS, operation }, async (store) => {
    const updated = await updatePerson(store, { email: normalizedEmail(email) }, { status });
    if (!updated) throw new AdminError(`no user with the email ${email}`);
    return updated;
  });
}

/**
 * Sets a person's status or role, found by id or email in the store's agency; undefined when the agency has no such
 * person. (A disabled person's console sessions and MCP tokens stop at their next request.)
 */
export async function updatePerson(
  store: CommandStore,
  which: { id: string } | { email: string },
  change: { status: 'active' | 'disabled' } | { role: UserRole },
) {
  const [column, value] = 'id' in which ? (['id', which.id] as const) : (['email', which.email] as const);
  const updated = await store
    .updateTable('users')
    .set({ ...change, updated_at: new Date() })
    .where(column, '=', value)
    .returning(['id', 'email', 'status', 'role'])
    .executeTakeFirst();
  if (updated) store.auditReferences([updated.id]);
  return updated;
}

/**
 * A person replaces the password an administrator handed over (the first sign-in, on the console's page or the MCP
 * surface's): audited with the person as actor, and every console session of theirs ends, in one transaction.
 */
export function changeOwnPassword(db: Kysely<DB>, person: Person, chosen: string): Promise<void> {
  const command = { ...ON_USERS, operation: 'changeOwnPassword', actor: personActor(person.id) };
  return asOperatorOn(db, person.agencyId, command, async (store) => {
    store.auditReferences([person.id]);
    const users = store.unscoped('a person changes their own password: a row of the users table, and their sessions');
    await changePassword(users, person.id, chosen);
    await endSessionsOf(users, person.id);
  });
}

export function listUsers(store: TenantStore) {
  return store
    .selectFrom('users')
    .select(['id', 'email', 'name', 'role', 'status', 'created_at'])
    .orderBy('email')
    .execute();
}

export const userCommands: Commands = {
  create: {
    usage: `user create --agency ID --email EMAIL --name NAME --role ${USER_ROLES.join('|')}`,
    options: {
      agency: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string' },
    },
    async run({ db, options }) {
      const created = await createUser(db, {
        agencyId: requiredOption(options, 'agency'),
        email: requiredOption(options, 'email'),
        name: requiredOption(options, 'name'),
        role: requiredOption(options, 'role') as UserRole,
      });
      const json = {
        user_id: created.userId,
        agency_id: created.agencyId,
        email: created.email,
        initial_password: created.initialPassword,
      };
      return {
        json,
        text: `User created. The initial password is shown only this once; hand it over in person: the first sign-in replaces it with the person's own.\n${describe(json)}`,
      };
    },
  },
  list: {
    usage: 'user list --agency ID',
    options: { agency: { type: 'string' } },
    async run(ctx) {
      const users = await asOperator(ctx, { ...ON_USERS, operation: 'listUsers' }, listUsers);
      const rows = users.map((u) => ({
        user_id: u.id,
        email: u.email,
        name: u.name,
        role: u.role,
        status: u.status,
        created_at: u.created_at.toISOString(),
      }));
      return {
        json: { users: rows },
        text: rows.length === 0 ? 'No users.' : rows.map((row) => describe(row)).join('\n\n'),
      };
    },
  },
  disable: {
    usage: 'user disable --email EMAIL',
    options: { email: { type: 'string' } },
    async run({ db, options }) {
      const user = await setUserStatus(db, requiredOption(options, 'email'), 'disabled');
      return {
        json: { user_id: user.id, email: user.email, status: user.status },
        text: 'User disabled: they cannot sign in, and their MCP tokens are refused from now on.',
      };
    },
  },
};
