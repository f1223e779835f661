import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { UserRole } from '../../db/tables/people.js';
import { dummySecretHash, hashSecret, PASSWORD_PARAMS, verifySecret } from '../secrets.js';

/** A user as the MCP surface sees them: who signs in, for which agency, in which role. */
export interface Person {
  id: string;
  agencyId: string;
  email: string;
  name: string;
  role: UserRole;
}

export const USER_ROLES: readonly UserRole[] = ['administrator', 'manager', 'clinician', 'staff'];

export const hashPassword = (password: string) => hashSecret(password, PASSWORD_PARAMS);


/** An active user of an active agency, by id (the authorization server's account id). */
export async function findPerson(db: Kysely<DB>, userId: string): Promise<Person | undefined> {
  const row = await db
    .selectFrom('users as u')
    .innerJoin('agencies as a', 'a.id', 'u.agency_id')
    .select(['u.id', 'u.agency_id', 'u.email', 'u.name', 'u.role'])
    .where('u.id', '=', userId)
    .where('u.status', '=', 'active')
    .where('a.status', '=', 'active')
    .executeTakeFirst();
  return row && { id: row.id, agencyId: row.agency_id, email: row.email, name: row.name, role: row.role };
}

/**
 * The user whose email and password these are, or undefined. An unknown email costs one hash too, so that the time
 * taken does not tell whether the email is registered.
 */
export async function signIn(db: Kysely<DB>, email: string, password: string): Promise<Person | undefined> {
  const row = await db.selectFrom('users').select(['id', 'password_hash']).where('email', '=', email.trim().toLowerCase()).executeTakeFirst();
  if (!row) {
    await verifySecret(password, await dummySecretHash(PASSWORD_PARAMS));
    return undefined;
  }
  if (!(await verifySecret(password, row.password_hash))) return undefined;
  return findPerson(db, row.id);
}
