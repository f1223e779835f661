import type { Kysely } from 'kysely';
import type { DB } from '../schema.js';

/** Resource kinds stored in this deployment, by the table that holds them. */
const TABLES = { patient: 'patients', referral: 'referrals', intake: 'intakes', visit: 'visits' } as const;

export type StoredResourceType = keyof typeof TABLES;

export function isStoredResourceType(type: string): type is StoredResourceType {
  return type in TABLES;
}

export async function resourceExists(db: Kysely<DB>, agencyId: string, type: StoredResourceType, id: string): Promise<boolean> {
  const row = await db.selectFrom(TABLES[type]).select('id').where('agency_id', '=', agencyId).where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

export async function agencyUserExists(db: Kysely<DB>, agencyId: string, id: string): Promise<boolean> {
  const row = await db.selectFrom('agency_users').select('id').where('agency_id', '=', agencyId).where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}
