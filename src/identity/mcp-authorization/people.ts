import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { UserRole } from '../../db/tables/people.js';
import { dummySecretHash, hashSecret, PASSWORD_PARAMS, verifySecret } from '../secrets.js';
import type { FailureSource } from '../failure-limits.js';
import type { SignInFailureLimiter } from './sign-in-failures.js';
import { isStorableText } from '../../domain/storable-text.js';

/** A user as the MCP surface sees them: who signs in, for which agency, in which role. */
export interface Person {
  id: string;
  agencyId: string;
  /** Its agency's name, as the console's pages head. */
  agencyName: string;
  email: string;
  name: string;
  role: UserRole;
  /** The password is still the one an administrator handed over: the person must choose their own before going on. */
  passwordChangeRequired: boolean;
}

export const USER_ROLES: readonly UserRole[] = ['administrator', 'manager', 'clinician', 'staff'];

export const hashPassword = (password: string) => hashSecret(password, PASSWORD_PARAMS);

/** Emails are stored and looked up trimmed, in lower case. */
export const normalizedEmail = (email: string) => email.trim().toLowerCase();

/** An account's failures are counted under a hash of its email: the table keeps neither who has an account nor what was typed as one. */
function signInSource(email: string, remoteAddress: string): FailureSource {
  return { subject: createHash('sha256').update(normalizedEmail(email)).digest('base64url'), remoteAddress };
}

/** An active user of an active agency, by id (the authorization server's account id). */
export async function findPerson(db: Kysely<DB>, userId: string): Promise<Person | undefined> {
  const row = await activePeople(db).where('u.id', '=', userId).executeTakeFirst();
  return row && personOf(row);
}

/** The active people of active agencies, as `u`, with what a Person holds (a session joins its own table to it). */
export function activePeople(db: Kysely<DB>) {
  return db
    .selectFrom('users as u')
    .innerJoin('agencies as a', 'a.id', 'u.agency_id')
    .select([
      'u.id',
      'u.agency_id',
      'u.email',
      'u.name',
      'u.role',
      'u.password_change_required',
      'a.name as agency_name',
    ])
    .where('u.status', '=', 'active')
    .where('a.status', '=', 'active');
}

type PersonRow = NonNullable<Awaited<ReturnType<ReturnType<typeof activePeople>['executeTakeFirst']>>>;

export const personOf = (row: PersonRow): Person => ({
  id: row.id,
  agencyId: row.agency_id,
  agencyName: row.agency_name,
  email: row.email,
  name: row.name,
  role: row.role,
  passwordChangeRequired: row.password_change_required,
});

/** What the sign-in form sent, and from where (the client's address, see TRUST_PROXY). */
interface SignInAttempt {
  email: string;
  password: string;
  remoteAddress: string;
}

/**
 * The user whose email and password these are, or undefined. An unknown email costs one hash too, so that the time
 * taken does not tell whether the email is registered. Refused with 429 by the failure limits, or 503 while too many
 * hashes run (see secrets.ts).
 */
export async function signIn(
  db: Kysely<DB>,
  failures: SignInFailureLimiter,
  { email, password, remoteAddress }: SignInAttempt,
): Promise<Person | undefined> {
  const admission = await failures.admit(signInSource(email, remoteAddress));
  const person = await checkPassword(db, email, password);
  if (person) return person;
  const refusal = await failures.recordFailure(admission);
  if (refusal) throw refusal;
  return undefined;
}

async function checkPassword(db: Kysely<DB>, email: string, password: string): Promise<Person | undefined> {
  // An email no row can hold (a NUL) is an unknown one, not a failed query.
  const row = isStorableText(email)
    ? await db
        .selectFrom('users')
        .select(['id', 'password_hash'])
        .where('email', '=', normalizedEmail(email))
        .executeTakeFirst()
    : undefined;
  if (!row) {
    await verifySecret(password, await dummySecretHash(PASSWORD_PARAMS));
    return undefined;
  }
  if (!(await verifySecret(password, row.password_hash))) return undefined;
  return findPerson(db, row.id);
}

export const MIN_PASSWORD_LENGTH = 12;

/** Why a new password is refused, or undefined: long enough, typed twice alike, and not the one handed over. */
export function newPasswordProblem(current: string, chosen: string, confirmation: string): string | undefined {
  if (chosen.length < MIN_PASSWORD_LENGTH) return `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (chosen !== confirmation) return 'The two new passwords are not the same.';
  if (chosen === current) return 'Choose a password other than the one you were given.';
  return undefined;
}

/** Sets the person's own password; the one handed over stops working at once. */
export async function changePassword(db: Kysely<DB>, userId: string, password: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  await db
    .updateTable('users')
    .set({ password_hash: passwordHash, password_change_required: false, updated_at: new Date() })
    .where('id', '=', userId)
    .execute();
}
