import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { randomId } from '../../shared/ids.js';
import { asPrepared, reusableQuery } from '../../db/reusable-query.js';
import { lockKey, xactLock } from '../../db/advisory-locks.js';
import { missingResources } from '../../db/agency-resources.js';
import type { IntakeStore, RecordedIds } from '../../domain/intake/pipeline.js';
import type { IntakeRecord } from '../../domain/intake/records.js';
import type { ChartRef, PatientIdentity } from '../../domain/intake/identity.js';

/** Patients with their active episode, if any (at most one: episodes_one_active_idx). */
function charts(db: Kysely<DB>, agencyId: string) {
  return db
    .selectFrom('patients')
    .leftJoin('episodes', (join) =>
      join.onRef('episodes.agency_id', '=', 'patients.agency_id').onRef('episodes.patient_id', '=', 'patients.id').on('episodes.status', '=', 'active'),
    )
    .select(['patients.id', 'episodes.id as episode_id', 'episodes.start_date as episode_start_date'])
    .where('patients.agency_id', '=', agencyId);
}

function toChartRef(row: { id: string; episode_id: string | null; episode_start_date: string | null } | undefined): ChartRef | null {
  if (!row) return null;
  return { id: row.id, activeEpisode: row.episode_id && row.episode_start_date ? { id: row.episode_id, start_date: row.episode_start_date } : null };
}

const chartWithId = reusableQuery('chart-by-id', ['agencyId', 'id'], (db, p) => charts(db, p.agencyId).where('patients.id', '=', p.id));

const chartWithIdentity = reusableQuery('chart-by-identity', ['agencyId', 'last', 'first', 'dob', 'phone'], (db, p) =>
  charts(db, p.agencyId)
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
const officeAndLock = reusableQuery('intake-office-and-lock', ['agencyId', 'zip', 'lockKey'], (db, p) =>
  db.selectNoFrom((eb) => [
    xactLock(p.lockKey).as('locked'),
    eb.selectFrom('agency_service_zips').select('office_id').where('agency_id', '=', p.agencyId).where('zip_code', '=', p.zip).as('office_id'),
  ]),
);

function identityLock(agencyId: string, { match_last_name: last, match_first_name: first, dob, match_phone: phone }: PatientIdentity): string {
  return lockKey('patient-identity', agencyId, last, first, dob, phone);
}

async function officeLockingIdentity(db: Kysely<DB>, agencyId: string, zip: string | null, identity: PatientIdentity | null): Promise<string | null> {
  if (zip === null && identity === null) return null;
  const [row] = await officeAndLock(db, { agencyId, zip, lockKey: identity && identityLock(agencyId, identity) });
  return row.office_id;
}

/** Several charts can share an identity (duplicates made by hand): the most recently updated one is taken. */
async function chartByIdentity(db: Kysely<DB>, agencyId: string, identity: PatientIdentity): Promise<ChartRef | null> {
  const { match_last_name: last, match_first_name: first, dob, match_phone: phone } = identity;
  return toChartRef((await chartWithIdentity(db, { agencyId, last, first, dob, phone }))[0]);
}

/**
 * Chart (when new), referral, intake and document links in one statement: each round trip inside the command's
 * transaction costs more than the inserts themselves. Foreign keys are checked at the end of the statement
 * (the intake's deferred one at commit), when every row of it exists.
 */
async function recordIntake(db: Kysely<DB>, agencyId: string, record: IntakeRecord): Promise<RecordedIds> {
  const patientId = record.newChart ? randomId('pat_', 12) : record.chartId;
  const referralId = randomId('ref_', 12);
  const intakeId = randomId('int_', 12);
  const links = record.documentIds.map((document_id, position) => ({ agency_id: agencyId, referral_id: referralId, document_id, position }));
  const statement = db
    .with('chart', (q) => (record.newChart ? q.insertInto('patients').values({ ...record.newChart, agency_id: agencyId, id: patientId! }) : q.selectNoFrom(sql.lit(1).as('none'))))
    .with('referral', (q) => q.insertInto('referrals').values({ ...record.referral, agency_id: agencyId, id: referralId, intake_id: intakeId, patient_id: patientId }))
    .with('links', (q) => (links.length > 0 ? q.insertInto('referral_documents').values(links) : q.selectNoFrom(sql.lit(1).as('none'))))
    .insertInto('intakes')
    .values({ ...record.intake, agency_id: agencyId, id: intakeId, referral_id: referralId });
  // A few texts (with or without a chart, by number of documents), each prepared once per connection.
  await db.executeQuery(asPrepared('intake-record', statement.compile()));
  return { referralId, intakeId, patientId };
}

/** The intake pipeline's store for one agency; `db` must be the command's transaction (never a second connection). */
export function referralIntakeStore(db: Kysely<DB>, agencyId: string): IntakeStore {
  return {
    unknownReferences: (checks) => missingResources(db, agencyId, checks),
    officeLockingIdentity: (zip5, identity) => officeLockingIdentity(db, agencyId, zip5, identity),
    chartById: async (id) => toChartRef((await chartWithId(db, { agencyId, id }))[0]),
    chartByIdentity: (identity) => chartByIdentity(db, agencyId, identity),
    record: (record) => recordIntake(db, agencyId, record),
  };
}
