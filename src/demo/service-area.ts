import type { CommandStore } from '../db/tenant-store.js';
import { DemoSeedError } from './errors.js';
import { placeOf, type ZipPlace } from './geography.js';
import type { Random } from './random.js';

interface DemoOffice {
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
export async function prepareServiceArea(store: CommandStore, rng: Random, now: Date): Promise<ServiceArea> {
  const offices = await store.selectFrom('offices').select(['id', 'name', 'timezone']).orderBy('id').execute();
  const zips = await store
    .selectFrom('agency_service_zips')
    .select(['zip_code', 'office_id'])
    .orderBy('zip_code')
    .execute();
  if (zips.length === 0)
    throw new DemoSeedError(
      `Agency ${store.agencyId} has no service ZIPs; add its service area before seeding demo data`,
    );
  const branches = offices.length === 1 ? await addBranches(store, { now, rng, main: offices[0] }, zips) : [];
  return {
    offices: [...offices, ...branches],
    zips: zips.map((z) => ({ ...placeOf(z.zip_code), officeId: z.office_id })),
    timezoneOf: new Map([...offices, ...branches].map((o) => [o.id, o.timezone])),
    officesCreated: branches.length,
  };
}

/** `count` consecutive slices of about equal length. */
function contiguousRuns<T>(items: T[], count: number): T[][] {
  return Array.from({ length: count }, (_, i) =>
    items.slice(Math.floor((i * items.length) / count), Math.floor(((i + 1) * items.length) / count)),
  );
}

/** Inserts the branches and routes each its run of ZIPs (updating `zips` to match what was written). */
async function addBranches(
  store: CommandStore,
  { now, rng, main }: { now: Date; rng: Random; main: DemoOffice },
  zips: { zip_code: string; office_id: string }[],
): Promise<DemoOffice[]> {
  const runs = contiguousRuns(zips, Math.min(rng.int(2, 3), zips.length - 1) + 1).slice(1);
  const branches = runs.map((run) => ({
    id: rng.id('off'),
    name: `${placeOf(run[0].zip_code).city} Branch`,
    timezone: main.timezone,
  }));
  if (branches.length === 0) return branches;
  await store
    .insertInto('offices')
    .values(branches.map((b) => ({ ...b, created_at: now })))
    .execute();
  for (const [i, branch] of branches.entries()) {
    for (const zip of runs[i]) zip.office_id = branch.id;
    await store
      .updateTable('agency_service_zips')
      .set({ office_id: branch.id })
      .where(
        'zip_code',
        'in',
        runs[i].map((z) => z.zip_code),
      )
      .execute();
  }
  return branches;
}
