import { sql, type Kysely } from 'kysely';
import type { DB } from '../schema.js';
import { randomId } from '../../identity/secrets.js';
import type { IntakeStore, RecordedIds } from '../../domain/intake/pipeline.js';
import type { IntakeRecord } from '../../domain/intake/records.js';
import type { ReferenceCheck, ReferenceKind } from '../../domain/intake/references.js';
import type { ChartRef, PatientIdentity } from '../../domain/intake/identity.js';

const TABLES = {
  patient: 'patients',
  referral_source: 'referral_sources',
  physician: 'physicians',
  payor: 'payors',
  hospital: 'hospitals',
  agency_user: 'agency_users',
  document: 'documents',
} as const satisfies Record<ReferenceKind, keyof DB>;

/** The checks whose id is not a row of its kind in the agency, in one round trip. */
async function unknownReferences(db: Kysely<DB>, agencyId: string, checks: ReferenceCheck[]): Promise<ReferenceCheck[]> {
  if (checks.length === 0) return [];
  const kinds = [...new Set(checks.map((c) => c.kind))];
  const lookups = kinds.map((kind) =>
    db
      .selectFrom(TABLES[kind])
      .select([sql.lit(kind).as('kind'), 'id'])
      .where('agency_id', '=', agencyId)
      .where('id', 'in', checks.filter((c) => c.kind === kind).map((c) => c.id)),
  );
  const found = await lookups.reduce((all, lookup) => all.unionAll(lookup)).execute();
  const known = new Set(found.map((row) => `${row.kind}:${row.id}`));
  return checks.filter((c) => !known.has(`${c.kind}:${c.id}`));
}

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

/**
 * Several charts can share an identity (duplicates made by hand): the most recently updated one is taken.
 * The identity is locked until the command's transaction ends, so two concurrent referrals for one person
 * (under different idempotency keys) open one chart: the second waits, then matches the first one's chart.
 */
async function chartByIdentity(db: Kysely<DB>, agencyId: string, identity: PatientIdentity): Promise<ChartRef | null> {
  const key = [agencyId, identity.match_last_name, identity.match_first_name, identity.dob, identity.match_phone].join('\n');
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(db);
  const row = await charts(db, agencyId)
    .where('patients.match_last_name', '=', identity.match_last_name)
    .where('patients.match_first_name', '=', identity.match_first_name)
    .where('patients.dob', '=', identity.dob)
    .where('patients.match_phone', '=', identity.match_phone)
    .orderBy('patients.updated_at', 'desc')
    .orderBy('patients.id')
    .limit(1)
    .executeTakeFirst();
  return toChartRef(row);
}

async function officeForZip(db: Kysely<DB>, agencyId: string, zip5: string): Promise<string | null> {
  const row = await db.selectFrom('agency_service_zips').select('office_id').where('agency_id', '=', agencyId).where('zip_code', '=', zip5).executeTakeFirst();
  return row?.office_id ?? null;
}

/** Chart (when new), referral, intake and document links; the referral goes first (the intake points back at it). */
async function recordIntake(db: Kysely<DB>, agencyId: string, record: IntakeRecord): Promise<RecordedIds> {
  let patientId = record.chartId;
  if (record.newChart) {
    patientId = randomId('pat_', 12);
    await db.insertInto('patients').values({ ...record.newChart, agency_id: agencyId, id: patientId }).execute();
  }
  const referralId = randomId('ref_', 12);
  const intakeId = randomId('int_', 12);
  await db.insertInto('referrals').values({ ...record.referral, agency_id: agencyId, id: referralId, intake_id: intakeId, patient_id: patientId }).execute();
  await db.insertInto('intakes').values({ ...record.intake, agency_id: agencyId, id: intakeId, referral_id: referralId }).execute();
  if (record.documentIds.length > 0) {
    const links = record.documentIds.map((document_id, position) => ({ agency_id: agencyId, referral_id: referralId, document_id, position }));
    await db.insertInto('referral_documents').values(links).execute();
  }
  return { referralId, intakeId, patientId };
}

/** The intake pipeline's store for one agency; `db` must be the command's transaction (never a second connection). */
export function referralIntakeStore(db: Kysely<DB>, agencyId: string): IntakeStore {
  return {
    officeForZip: (zip5) => officeForZip(db, agencyId, zip5),
    unknownReferences: (checks) => unknownReferences(db, agencyId, checks),
    chartById: async (id) => toChartRef(await charts(db, agencyId).where('patients.id', '=', id).executeTakeFirst()),
    chartByIdentity: (identity) => chartByIdentity(db, agencyId, identity),
    record: (record) => recordIntake(db, agencyId, record),
  };
}
