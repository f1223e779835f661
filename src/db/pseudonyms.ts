import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from './schema.js';
import { PlatformError } from '../shared/platform-error.js';
import { PSEUDONYM_PREFIX, type PseudonymKind } from '../shared/ids.js';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function randomHandle(kind: PseudonymKind): string {
  const bytes = randomBytes(12);
  return PSEUDONYM_PREFIX[kind] + Array.from(bytes, (b) => ALPHABET[b % 32]).join('');
}

/**
 * Surrogate handles for no_phi sessions (HIPAA 164.514(c)): random, stored per agency, stable for
 * a resource, and resolvable only within the agency that issued them.
 */
export class PseudonymService {
  constructor(private readonly db: Kysely<DB>) {}

  /** The same service on another connection, such as a command's transaction (PGlite has one session: never mix the two). */
  using(db: Kysely<DB>): PseudonymService {
    return db === this.db ? this : new PseudonymService(db);
  }

  /** Handles for many ids at once (one lookup, one insert for the new ones). */
  async handlesFor(agencyId: string, kind: PseudonymKind, realIds: readonly string[]): Promise<Map<string, string>> {
    const db = this.db;
    const wanted = [...new Set(realIds)];
    if (wanted.length === 0) return new Map();
    const found = await this.existing(db, agencyId, kind, wanted);
    const missing = wanted.filter((id) => !found.has(id));
    if (missing.length > 0) {
      await db
        .insertInto('pseudonyms')
        .values(missing.map((real_id) => ({ agency_id: agencyId, kind, real_id, handle: randomHandle(kind) })))
        .onConflict((oc) => oc.doNothing())
        .execute();
      // A concurrent request may have won the race for some ids: read back what is stored.
      for (const [id, handle] of await this.existing(db, agencyId, kind, missing)) found.set(id, handle);
    }
    return found;
  }

  async handleFor(agencyId: string, kind: PseudonymKind, realId: string): Promise<string> {
    return (await this.handlesFor(agencyId, kind, [realId])).get(realId)!;
  }

  /** The real id behind a handle of this agency, or PLATFORM_PSEUDONYM_UNRESOLVED. */
  async resolve(agencyId: string, kind: PseudonymKind, handle: string): Promise<string> {
    const row = await this.db
      .selectFrom('pseudonyms')
      .select('real_id')
      .where('agency_id', '=', agencyId)
      .where('handle', '=', handle)
      .where('kind', '=', kind)
      .executeTakeFirst();
    if (!row) {
      throw new PlatformError('PLATFORM_PSEUDONYM_UNRESOLVED', `The handle ${handle} does not resolve in this agency. Use handles returned by a no_phi session of the same agency.`, {
        handle,
      });
    }
    return row.real_id;
  }

  private async existing(db: Kysely<DB>, agencyId: string, kind: PseudonymKind, realIds: string[]) {
    const rows = await db
      .selectFrom('pseudonyms')
      .select(['real_id', 'handle'])
      .where('agency_id', '=', agencyId)
      .where('kind', '=', kind)
      .where('real_id', 'in', realIds)
      .execute();
    return new Map(rows.map((r) => [r.real_id, r.handle]));
  }
}
