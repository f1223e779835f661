import { createHash, randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { activePeople, personOf, type Person } from './mcp-authorization/people.js';

/** A console session ends after this long without a request, and at the latest after SESSION_LIFETIME_MS. */
export const SESSION_IDLE_MS = 30 * 60_000;
export const SESSION_LIFETIME_MS = 12 * 3_600_000;
/** last_seen_at is written at most this often, so that reading pages does not write a row per request. */
const TOUCH_EVERY_MS = 60_000;

const hashOf = (value: string) => createHash('sha256').update(value).digest('base64url');

/** Starts a session for a person who just signed in; the value returned goes in the cookie and is stored nowhere. */
export async function startSession(db: Kysely<DB>, person: Person): Promise<string> {
  const value = randomBytes(32).toString('base64url');
  await db
    .insertInto('console_sessions')
    .values({
      id_hash: hashOf(value),
      user_id: person.id,
      agency_id: person.agencyId,
      expires_at: new Date(Date.now() + SESSION_LIFETIME_MS),
    })
    .execute();
  return value;
}

/**
 * The person of a live session: neither idle too long nor past its end, of an active user of an active agency (a
 * disabled user or agency is signed out at the next request). Undefined otherwise.
 */
export async function sessionPerson(db: Kysely<DB>, value: string): Promise<Person | undefined> {
  const idHash = hashOf(value);
  const row = await activePeople(db)
    .innerJoin('console_sessions as s', 's.user_id', 'u.id')
    .select('s.last_seen_at')
    .where('s.id_hash', '=', idHash)
    .where('s.expires_at', '>', sql<Date>`now()`)
    .where('s.last_seen_at', '>', sql<Date>`now() - ${`${SESSION_IDLE_MS} milliseconds`}::interval`)
    .executeTakeFirst();
  if (!row) return undefined;
  if (Date.now() - row.last_seen_at.getTime() > TOUCH_EVERY_MS)
    await db.updateTable('console_sessions').set({ last_seen_at: new Date() }).where('id_hash', '=', idHash).execute();
  return personOf(row);
}

export async function endSession(db: Kysely<DB>, value: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('id_hash', '=', hashOf(value)).execute();
}

/** Every session of a person ends: after a password change, and when an administrator disables them. */
export async function endSessionsOf(db: Kysely<DB>, userId: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('user_id', '=', userId).execute();
}

/** Drops sessions past their end or idle too long (housekeeping): how many. */
export async function purgeEndedSessions(db: Kysely<DB>): Promise<number> {
  const result = await db
    .deleteFrom('console_sessions')
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', sql<Date>`now()`),
        eb('last_seen_at', '<=', sql<Date>`now() - ${`${SESSION_IDLE_MS} milliseconds`}::interval`),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
