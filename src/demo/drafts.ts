import type { Insertable, Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { ClinicalTables } from '../db/tables/clinical.js';

export type SeededTable = keyof ClinicalTables;

/** A row before it is given its agency: the generator builds the same drafts for every agency. */
export type Draft<T extends SeededTable> = Omit<Insertable<ClinicalTables[T]>, 'agency_id'>;

export type Drafts = { [T in SeededTable]: Draft<T>[] };

/** Parents before children; referrals before intakes (the referral-to-intake key is checked at commit). */
const INSERT_ORDER: readonly SeededTable[] = [
  'payors',
  'referral_sources',
  'physicians',
  'hospitals',
  'agency_users',
  'documents',
  'patients',
  'episodes',
  'coverages',
  'referrals',
  'intakes',
  'referral_documents',
  'visits',
  'tasks',
];

// PostgreSQL takes at most 65,535 parameters per statement.
const MAX_PARAMETERS = 60_000;
const MAX_BATCH_ROWS = 1_000;

export function emptyDrafts(): Drafts {
  return Object.fromEntries(INSERT_ORDER.map((table) => [table, []])) as unknown as Drafts;
}

/** Multi-row inserts of up to 1,000 rows, table by table; adds what it wrote to `counts`. */
export async function insertDrafts(db: Kysely<DB>, agencyId: string, drafts: Drafts, counts: Record<SeededTable, number>): Promise<void> {
  for (const table of INSERT_ORDER) {
    const rows = drafts[table].map((row) => ({ agency_id: agencyId, ...row }));
    if (rows.length === 0) continue;
    const batchSize = Math.min(MAX_BATCH_ROWS, Math.floor(MAX_PARAMETERS / Object.keys(rows[0]).length));
    for (let start = 0; start < rows.length; start += batchSize) {
      await db
        .insertInto(table)
        .values(rows.slice(start, start + batchSize) as Insertable<DB[typeof table]>[])
        .execute();
    }
    counts[table] += rows.length;
  }
}
