import { reusableTenantQuery, type CommandStore, type TenantStore } from '../../db/tenant-store.js';
import { randomId } from '../../shared/ids.js';
import { lockKey, xactLock } from '../../db/advisory-locks.js';
import { missingResources } from '../../db/agency-resources.js';
import type { IntakeStore, RecordedIds } from '../../domain/intake/pipeline.js';
import type { IntakeRecord } from '../../domain/intake/records.js';
import type { ChartRef, PatientIdentity } from '../../domain/intake/identity.js';

/** Patients with their active episode, if any (at most one: episodes_one_active_idx). */
function charts(store: TenantStore) {
  return store
    .selectFrom('patients')
    .leftJoin('episodes', (join) =>
      join
        .on(store.ofAgency('episodes'))
        .onRef('episodes.patient_id', '=', 'patients.id')
        .on('episodes.status', '=', 'active'),
    )
    .select(['patients.id', 'episodes.id as episode_id', 'episodes.start_date as episode_start_date']);
}

function toChartRef(
  row: { id: string; episode_id: string | null; episode_start_date: string | null } | undefined,
): ChartRef | null {
  if (!row) return null;
  return {
    id: row.id,
    activeEpisode:
      row.episode_id && row.episode_start_date ? { id: row.episode_id, start_date: row.episode_start_date } : null,
  };
}

const chartWithId = reusableTenantQuery('chart-by-id', ['id'], (store, p) =>
  charts(store).where('patients.id', '=', p.id),
);

const chartWithIdentity = reusableTenantQuery('chart-by-identity', ['last', 'first', 'dob', 'phone'], (store, p) =>
  charts(store)
    .where('patients.match_last_name', '=', p.last)
    .where('patients.match_first_name', '=', p.first)
    .where('patients.dob', '=', p.dob)
    .where('patients.match_phone', '=', p.phone)
    .orderBy('patients.updated_at', 'desc')
    .orderBy('patients.id')
    .limit(1),
);

/**
 * The service area's office for a ZIP, and the identity's lock until the transaction ends, in one round trip.
 * The lock is taken here, a statement before chartByIdentity, whose snapshot must start after the lock is held.
 * Either parameter may be null: both functions are strict, so a null key takes no lock.
 */
const officeAndLock = reusableTenantQuery('intake-office-and-lock', ['zip', 'lockKey'], (store, p) =>
  store.selectNoFrom([
    xactLock(p.lockKey).as('locked'),
    store.selectFrom('agency_service_zips').select('office_id').where('zip_code', '=', p.zip).as('office_id'),
  ]),
);

function identityLock(
  store: TenantStore,
  { match_last_name: last, match_first_name: first, dob, match_phone: phone }: PatientIdentity,
): string {
  return lockKey('patient-identity', store.agencyId, last, first, dob, phone);
}

async function officeLockingIdentity(
  store: TenantStore,
  zip: string | null,
  identity: PatientIdentity | null,
): Promise<string | null> {
  if (zip === null && identity === null) return null;
  const [row] = await officeAndLock(store, { zip, lockKey: identity && identityLock(store, identity) });
  return row.office_id;
}

/** Several charts can share an identity (duplicates made by hand): the most recently updated one is taken. */
async function chartByIdentity(store: TenantStore, identity: PatientIdentity): Promise<ChartRef | null> {
  const { match_last_name: last, match_first_name: first, dob, match_phone: phone } = identity;
  return toChartRef((await chartWithIdentity(store, { last, first, dob, phone }))[0]);
}

/**
 * Chart (when new), referral, intake and document links in one statement: each round trip inside the command's
 * transaction costs more than the inserts themselves. Foreign keys are checked at the end of the statement
 * (the intake's deferred one at commit), when every row of it exists.
 */
async function recordIntake(store: CommandStore, record: IntakeRecord): Promise<RecordedIds> {
  const patientId = record.newChart ? randomId('pat_', 12) : record.chartId;
  const referralId = randomId('ref_', 12);
  const intakeId = randomId('int_', 12);
  const links = record.documentIds.map((document_id, position) => ({ referral_id: referralId, document_id, position }));
  // A few texts (with or without a chart, by number of documents), each prepared once per connection.
  // The audit record names what the statement wrote in this order: the referral, its intake, then the chart.
  await store.insertTogether('intake-record', [
    store
      .insertInto('referrals')
      .values({ ...record.referral, id: referralId, intake_id: intakeId, patient_id: patientId }),
    store.insertInto('intakes').values({ ...record.intake, id: intakeId, referral_id: referralId }),
    ...(record.newChart ? [store.insertInto('patients').values({ ...record.newChart, id: patientId! })] : []),
    ...(links.length > 0 ? [store.insertInto('referral_documents').values(links)] : []),
  ]);
  // An existing chart the referral links to is part of what the command disclosed, though not written.
  if (patientId && !record.newChart) store.auditReferences([patientId]);
  return { referralId, intakeId, patientId };
}

/** The intake pipeline's store, on the command's transaction. */
export function referralIntakeStore(store: CommandStore): IntakeStore {
  return {
    unknownReferences: (checks) => missingResources(store, checks),
    officeLockingIdentity: (zip5, identity) => officeLockingIdentity(store, zip5, identity),
    chartById: async (id) => toChartRef((await chartWithId(store, { id }))[0]),
    chartByIdentity: (identity) => chartByIdentity(store, identity),
    record: (record) => recordIntake(store, record),
  };
}
