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
 * Surrogate handles for no_phi sessions (HIPAA 164.514(c)): random, stored per agency, stable for a resource, and
 * resolvable only within the agency that issued them. Bound to one agency (and one connection: a command's handles
 * are read and written in its transaction, since PGlite has one session and must never mix the two).
 */
export class TenantPseudonyms {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly agencyId: string,
  ) {}

  /** Handles for many ids at once (one lookup, one insert for the new ones). */
  async handlesFor(kind: PseudonymKind, realIds: readonly string[]): Promise<Map<string, string>> {
    const wanted = [...new Set(realIds)];
    if (wanted.length === 0) return new Map();
    const found = await this.existing(kind, wanted);
    const missing = wanted.filter((id) => !found.has(id));
    if (missing.length > 0) {
      await this.db
        .insertInto('pseudonyms')
        .values(missing.map((real_id) => ({ agency_id: this.agencyId, kind, real_id, handle: randomHandle(kind) })))
        .onConflict((oc) => oc.doNothing())
        .execute();
      // A concurrent request may have won the race for some ids: read back what is stored.
      for (const [id, handle] of await this.existing(kind, missing)) found.set(id, handle);
    }
    return found;
  }

  async handleFor(kind: PseudonymKind, realId: string): Promise<string> {
    return (await this.handlesFor(kind, [realId])).get(realId)!;
  }

  /** The real id behind a handle of this agency, or PLATFORM_PSEUDONYM_UNRESOLVED. */
  async resolve(kind: PseudonymKind, handle: string): Promise<string> {
    const row = await this.db
      .selectFrom('pseudonyms')
      .select('real_id')
      .where('agency_id', '=', this.agencyId)
      .where('handle', '=', handle)
      .where('kind', '=', kind)
      .executeTakeFirst();
    if (!row) {
      throw new PlatformError(
        'PLATFORM_PSEUDONYM_UNRESOLVED',
        `The handle ${handle} does not resolve in this agency. Use handles returned by a no_phi session of the same agency.`,
        {
          handle,
        },
      );
    }
    return row.real_id;
  }

  private async existing(kind: PseudonymKind, realIds: string[]) {
    const rows = await this.db
      .selectFrom('pseudonyms')
      .select(['real_id', 'handle'])
      .where('agency_id', '=', this.agencyId)
      .where('kind', '=', kind)
      .where('real_id', 'in', realIds)
      .execute();
    return new Map(rows.map((r) => [r.real_id, r.handle]));
  }
}
