import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { DemoSeedError } from './errors.js';
import { placeOf, type ZipPlace } from './geography.js';
import type { Random } from './random.js';

export interface DemoOffice {
  id: string;
  name: string;
  timezone: string;
}

export interface ServiceZip extends ZipPlace {
  officeId: string;
}

export interface ServiceArea {
  offices: DemoOffice[];
  zips: ServiceZip[];
  timezoneOf: ReadonlyMap<string, string>;
  officesCreated: number;
}

/**
 * The agency's offices and service ZIPs. A one-office agency gets two or three branches (never more than it
 * has ZIPs to give them), each taking a contiguous run of the sorted ZIPs, so routing by office shows in the demo.
 */
export async function prepareServiceArea(db: Kysely<DB>, agencyId: string, rng: Random, now: Date): Promise<ServiceArea> {
  const offices = await db.selectFrom('offices').select(['id', 'name', 'timezone']).where('agency_id', '=', agencyId).orderBy('id').execute();
  const zips = await db
    .selectFrom('agency_service_zips')
    .select(['zip_code', 'office_id'])
    .where('agency_id', '=', agencyId)
    .orderBy('zip_code')
    .execute();
  if (zips.length === 0) throw new DemoSeedError(`Agency ${agencyId} has no service ZIPs; add its service area before seeding demo data`);
  let officesCreated = 0;
  if (offices.length === 1) {
    const branches = branchOffices(rng, offices[0], zips.map((z) => z.zip_code), Math.min(rng.int(2, 3), zips.length - 1));
    await addBranches(db, { agencyId, now }, branches, zips);
    offices.push(...branches);
    officesCreated = branches.length;
  }
  return {
    offices,
    zips: zips.map((z) => ({ ...placeOf(z.zip_code), officeId: z.office_id })),
    timezoneOf: new Map(offices.map((o) => [o.id, o.timezone])),
    officesCreated,
  };
}

function branchOffices(rng: Random, main: DemoOffice, zipCodes: string[], count: number): DemoOffice[] {
  return Array.from({ length: count }, (_, i) => {
    const firstZip = zipCodes[Math.floor(((i + 1) * zipCodes.length) / (count + 1))];
    return { id: rng.id('off'), name: `${placeOf(firstZip).city} Branch`, timezone: main.timezone };
  });
}

/** Inserts the branches and hands each its share of ZIPs (mutating `zips` to match what was written). */
async function addBranches(
  db: Kysely<DB>,
  { agencyId, now }: { agencyId: string; now: Date },
  branches: DemoOffice[],
  zips: { zip_code: string; office_id: string }[],
): Promise<void> {
  if (branches.length === 0) return;
  await db
    .insertInto('offices')
    .values(branches.map((b) => ({ agency_id: agencyId, ...b, created_at: now })))
    .execute();
  const share = zips.length / (branches.length + 1);
  for (const [i, branch] of branches.entries()) {
    const taken = zips.slice(Math.floor((i + 1) * share), Math.floor((i + 2) * share));
    for (const zip of taken) zip.office_id = branch.id;
    await db
      .updateTable('agency_service_zips')
      .set({ office_id: branch.id })
      .where('agency_id', '=', agencyId)
      .where('zip_code', 'in', taken.map((z) => z.zip_code))
      .execute();
  }
}
