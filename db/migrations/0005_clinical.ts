import { sql, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely';

/**
 * Clinical operations: reference data (payors, sources, physicians, hospitals, users, documents), charts
 * (patients, episodes, coverages), the intake pipeline (referrals, intakes) and the work on top (visits, tasks).
 * Every table is keyed (agency_id, id) and every reference carries agency_id, so rows can never point into
 * another agency and the tables can be distributed by agency later.
 * The value lists below are frozen copies as of this migration: widening one takes a new migration.
 */

type Table = CreateTableBuilder<string, any>;
type ColumnOptions = (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;

const required: ColumnOptions = (c) => c.notNull();
const optional: ColumnOptions = (c) => c;

const SERVICE_LINES = ['home_health', 'hospice', 'private_duty'];
const GENDERS = ['female', 'male', 'unknown'];
const DISCIPLINES = ['SN', 'PT', 'OT', 'ST', 'MSW', 'HHA'];
// X12 element 1069: 18 self, 01 spouse, 19 child, 20 employee, 53 life partner, G8 other, 21 unknown.
const RELATIONSHIPS_TO_INSURED = ['18', '01', '19', '20', '53', 'G8', '21'];

/**
 * `agencyPinnedBy`: the table's required composite reference to a parent, which already proves the agency
 * exists; the table then skips its own agencies reference (one check less per row on the largest tables).
 */
function agencyColumn(t: Table, agencyPinnedBy?: string): Table {
  return t.addColumn('agency_id', 'text', (c) =>
    agencyPinnedBy ? c.notNull() : c.notNull().references('agencies.id'),
  );
}

function tenantTable(db: Kysely<any>, name: string, agencyPinnedBy?: string): Table {
  return agencyColumn(db.schema.createTable(name), agencyPinnedBy)
    .addColumn('id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${name}_pk`, ['agency_id', 'id']);
}

function timestamps(t: Table): Table {
  return t
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`));
}

/** A text column holding the id of a row of `target` in the same agency. */
function reference(table: string, column: string, target: string, options = optional) {
  return (t: Table): Table =>
    t
      .addColumn(column, 'text', options)
      .addForeignKeyConstraint(`${table}_${column}_fk`, ['agency_id', column], target, ['agency_id', 'id']);
}

function oneOf(table: string, column: string, values: readonly string[], options = required) {
  const list = sql.join(values.map((v) => sql.lit(v)));
  return (t: Table): Table =>
    t
      .addColumn(column, 'text', options)
      .addCheckConstraint(`${table}_${column}_check`, sql`${sql.ref(column)} in (${list})`);
}

function matches(table: string, column: string, pattern: string) {
  return (t: Table): Table =>
    t.addCheckConstraint(`${table}_${column}_format`, sql`${sql.ref(column)} ~ ${sql.lit(pattern)}`);
}

function personName(prefix: string, options = optional) {
  return (t: Table): Table =>
    t
      .addColumn(`${prefix}first_name`, 'text', options)
      .addColumn(`${prefix}middle_name`, 'text')
      .addColumn(`${prefix}last_name`, 'text', options)
      .addColumn(`${prefix}suffix`, 'text');
}

function address(table: string, prefix: string, zipColumn: string) {
  return (t: Table): Table =>
    t
      .addColumn(`${prefix}address_line_1`, 'text')
      .addColumn(`${prefix}address_line_2`, 'text')
      .addColumn(`${prefix}city`, 'text')
      .addColumn(`${prefix}state`, 'text')
      .addColumn(zipColumn, 'text')
      .$call(matches(table, `${prefix}state`, '^[A-Z]{2}$'))
      .$call(matches(table, zipColumn, '^[0-9]{5}(-[0-9]{4})?$'));
}

/** Stable list order: the filter columns first, then the list's order, so one index serves filter and keyset page. */
async function index(db: Kysely<any>, table: string, name: string, columns: string[]): Promise<void> {
  await db.schema
    .createIndex(`${table}_${name}_idx`)
    .on(table)
    .columns(['agency_id', ...columns])
    .execute();
}

async function createReferenceData(db: Kysely<any>): Promise<void> {
  await tenantTable(db, 'payors')
    .addColumn('name', 'text', required)
    .$call(
      oneOf('payors', 'payor_type', [
        'medicare',
        'medicaid',
        'medicare_advantage',
        'managed_medicaid',
        'commercial',
        'private_pay',
      ]),
    )
    .addColumn('payer_code', 'text')
    .$call(timestamps)
    .execute();
  await tenantTable(db, 'referral_sources')
    .addColumn('name', 'text', required)
    .$call(
      oneOf('referral_sources', 'source_type', [
        'hospital',
        'skilled_nursing_facility',
        'physician_office',
        'assisted_living_facility',
        'community',
        'self_or_family',
      ]),
    )
    .addColumn('phone', 'text')
    .$call(timestamps)
    .execute();
  await tenantTable(db, 'physicians')
    .addColumn('npi', 'text', required)
    .$call(matches('physicians', 'npi', '^[0-9]{10}$'))
    .addUniqueConstraint('physicians_npi_unique', ['agency_id', 'npi'])
    .$call(personName('', required))
    .addColumn('credential', 'text')
    .addColumn('specialty', 'text')
    .addColumn('phone', 'text')
    .addColumn('fax', 'text')
    .$call(timestamps)
    .execute();
  await tenantTable(db, 'hospitals')
    .addColumn('name', 'text', required)
    .addColumn('city', 'text')
    .addColumn('state', 'text')
    .$call(timestamps)
    .execute();
  await createAgencyUsers(db);
  await tenantTable(db, 'documents')
    .$call(
      oneOf('documents', 'kind', [
        'referral_packet',
        'face_to_face',
        'history_and_physical',
        'medication_list',
        'insurance_card',
        'physician_order',
        'discharge_summary',
        'other',
      ]),
    )
    .addColumn('file_name', 'text', required)
    .addColumn('content_type', 'text', required)
    .addColumn('size_bytes', 'integer', (c) => c.notNull().check(sql`size_bytes >= 0`))
    .addColumn('uploaded_at', 'timestamptz', required)
    .$call(timestamps)
    .execute();
}

async function createAgencyUsers(db: Kysely<any>): Promise<void> {
  await tenantTable(db, 'agency_users')
    .$call(oneOf('agency_users', 'role', ['marketer', 'clinician', 'reviewer']))
    .addColumn('first_name', 'text', required)
    .addColumn('last_name', 'text', required)
    .addColumn('email', 'text')
    .$call(oneOf('agency_users', 'discipline', DISCIPLINES, optional))
    .addCheckConstraint('agency_users_clinician_discipline', sql`(role = 'clinician') = (discipline is not null)`)
    .$call(reference('agency_users', 'office_id', 'offices'))
    .$call(timestamps)
    .execute();
}

async function createCharts(db: Kysely<any>): Promise<void> {
  await tenantTable(db, 'patients')
    .addColumn('mrn', 'text')
    .addUniqueConstraint('patients_mrn_unique', ['agency_id', 'mrn'])
    .$call(personName('', required))
    .addColumn('dob', 'date')
    .$call(oneOf('patients', 'gender', GENDERS, optional))
    .addColumn('primary_phone', 'text')
    .addColumn('alt_phone', 'text')
    .$call(oneOf('patients', 'preferred_phone', ['primary', 'alternate'], optional))
    .$call(address('patients', '', 'zip_code'))
    .addColumn('latitude', 'numeric(9, 6)', (c) => c.check(sql`latitude between -90 and 90`))
    .addColumn('longitude', 'numeric(9, 6)', (c) => c.check(sql`longitude between -180 and 180`))
    .addCheckConstraint('patients_coordinates_pair', sql`(latitude is null) = (longitude is null)`)
    .$call(reference('patients', 'office_id', 'offices'))
    .$call(oneOf('patients', 'service_line', SERVICE_LINES))
    .$call(
      oneOf('patients', 'status', [
        'referred',
        'pending_admission',
        'active',
        'on_hold',
        'discharged',
        'deceased',
        'non_admit',
      ]),
    )
    .$call(reference('patients', 'primary_physician_id', 'physicians'))
    // Identity-match keys, written by the application beside the values they normalize (see src/db/patient-match-keys.ts).
    .addColumn('match_last_name', 'text', required)
    .addColumn('match_first_name', 'text', required)
    .addColumn('match_phone', 'text')
    .$call(timestamps)
    .execute();
  await tenantTable(db, 'episodes', 'patient_id')
    .$call(reference('episodes', 'patient_id', 'patients', required))
    .$call(oneOf('episodes', 'type', ['home_health_period', 'hospice_benefit_period', 'private_duty_authorization']))
    .$call(oneOf('episodes', 'status', ['planned', 'active', 'closed']))
    .addColumn('start_date', 'date', required)
    .addColumn('end_date', 'date')
    .addCheckConstraint('episodes_dates_order', sql`end_date >= start_date`)
    // Target of visits' (patient_id, episode_id) reference, so a visit cannot hang off another patient's episode;
    // also the index for a patient's episodes.
    .addUniqueConstraint('episodes_patient_unique', ['agency_id', 'patient_id', 'id'])
    .$call(timestamps)
    .execute();
  await createCoverages(db);
}

async function createCoverages(db: Kysely<any>): Promise<void> {
  await tenantTable(db, 'coverages', 'patient_id')
    .$call(reference('coverages', 'patient_id', 'patients', required))
    .$call(reference('coverages', 'payor_id', 'payors'))
    .addColumn('plan_name', 'text')
    .addColumn('policy_number', 'text')
    .addColumn('group_number', 'text')
    .addColumn('effective_date', 'date')
    .addColumn('termination_date', 'date')
    .addCheckConstraint('coverages_dates_order', sql`termination_date >= effective_date`)
    .addColumn('coverage_order', 'integer', (c) => c.notNull().check(sql`coverage_order >= 0`))
    .$call(oneOf('coverages', 'relationship_to_insured', RELATIONSHIPS_TO_INSURED, optional))
    .$call(personName('insured_'))
    .addColumn('insured_dob', 'date')
    .$call(oneOf('coverages', 'insured_gender', GENDERS, optional))
    .$call(address('coverages', 'insured_', 'insured_zip_code'))
    .$call(timestamps)
    .execute();
}

async function createIntakePipeline(db: Kysely<any>): Promise<void> {
  const physicianRoles = ['referring_physician_id', 'signing_physician_id', 'certifying_physician_id'];
  await tenantTable(db, 'referrals')
    .$call(reference('referrals', 'patient_id', 'patients'))
    .addColumn('intake_id', 'text', required)
    .addUniqueConstraint('referrals_intake_unique', ['agency_id', 'intake_id'])
    .addUniqueConstraint('referrals_intake_pair_unique', ['agency_id', 'id', 'intake_id'])
    .addColumn('patient_display_name', 'text')
    .addColumn('service_line', 'text', (c) => c.notNull().check(sql`service_line <> ''`))
    .addColumn('referral_type', 'text')
    .$call(oneOf('referrals', 'referral_type_category', ['soc', 'roc', 'other']))
    .addColumn('referral_date', 'timestamptz', required)
    .addColumn('referral_source', 'text')
    .$call(reference('referrals', 'referral_source_id', 'referral_sources'))
    .addColumn('referring_facility', 'text')
    .addColumn('referring_physician', 'text')
    .$call((t) => physicianRoles.reduce((table, role) => reference('referrals', role, 'physicians')(table), t))
    .$call(reference('referrals', 'payor_id', 'payors'))
    .$call(reference('referrals', 'hospital_id', 'hospitals'))
    .$call(reference('referrals', 'marketer_id', 'agency_users'))
    .addColumn('marketer_label', 'text')
    .addColumn('zip_code', 'text')
    .$call(reference('referrals', 'office_id', 'offices'))
    .$call(oneOf('referrals', 'disposition', ['accepted', 'declined']))
    .addColumn('decline_reason', 'text')
    .addColumn('decline_detail', 'text')
    .addCheckConstraint('referrals_decline_reason', sql`(disposition = 'declined') = (decline_reason is not null)`)
    .$call(oneOf('referrals', 'request_shape', ['2026-04-01', '2026-08-19']))
    .addColumn('source_system', 'text')
    .addColumn('external_reference_id', 'text')
    .addColumn('additional_fields', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addCheckConstraint('referrals_additional_fields_object', sql`jsonb_typeof(additional_fields) = 'object'`)
    .$call(timestamps)
    .execute();
  await createIntakes(db);
  // Deferred because referral and intake point at each other: both are inserted in one transaction, referral first.
  await db.schema
    .alterTable('referrals')
    .addForeignKeyConstraint('referrals_intake_id_fk', ['agency_id', 'intake_id'], 'intakes', ['agency_id', 'id'])
    .deferrable()
    .initiallyDeferred()
    .execute();
  await agencyColumn(db.schema.createTable('referral_documents'), 'referral_id')
    .$call(reference('referral_documents', 'referral_id', 'referrals', required))
    .$call(reference('referral_documents', 'document_id', 'documents', required))
    .addColumn('position', 'integer', (c) => c.notNull().check(sql`position >= 0`))
    .addPrimaryKeyConstraint('referral_documents_pk', ['agency_id', 'referral_id', 'document_id'])
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

function jsonOf(table: string, column: string, kind: 'array' | 'object') {
  return (t: Table): Table =>
    t
      .addColumn(column, 'jsonb', (c) => c.notNull().defaultTo(kind === 'array' ? sql`'[]'::jsonb` : sql`'{}'::jsonb`))
      .addCheckConstraint(`${table}_${column}_${kind}`, sql`jsonb_typeof(${sql.ref(column)}) = ${sql.lit(kind)}`);
}

async function createIntakes(db: Kysely<any>): Promise<void> {
  const statuses = [
    'pending_review',
    'in_review',
    'awaiting_information',
    'accepted',
    'declined',
    'admitted',
    'non_admit',
    'cancelled',
  ];
  await tenantTable(db, 'intakes', 'referral_id')
    .addColumn('referral_id', 'text', required)
    // Points at the referral that points back at this intake, so the two can never disagree.
    .addForeignKeyConstraint('intakes_referral_pair_fk', ['agency_id', 'referral_id', 'id'], 'referrals', [
      'agency_id',
      'id',
      'intake_id',
    ])
    .addUniqueConstraint('intakes_referral_unique', ['agency_id', 'referral_id'])
    .$call(oneOf('intakes', 'status', statuses))
    .$call(reference('intakes', 'reviewer_id', 'agency_users'))
    .addColumn('missing_information', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    // Pending coverages as sent, policy holders included, until a reviewer confirms them onto the chart.
    .$call(jsonOf('intakes', 'insurance', 'array'))
    .addColumn('insurance_notes', 'text')
    .$call(jsonOf('intakes', 'diagnoses', 'array'))
    .$call(jsonOf('intakes', 'custom_data', 'object'))
    .addColumn('notes', 'text')
    .addColumn('received_at', 'timestamptz', required)
    .$call(timestamps)
    .execute();
}

async function createVisits(db: Kysely<any>): Promise<void> {
  const visitTypes = [
    'start_of_care',
    'resumption_of_care',
    'recertification',
    'routine',
    'prn',
    'supervisory',
    'discharge',
    'evaluation',
  ];
  await tenantTable(db, 'visits', 'patient_id')
    .$call(reference('visits', 'patient_id', 'patients', required))
    .addColumn('episode_id', 'text')
    .addForeignKeyConstraint('visits_episode_id_fk', ['agency_id', 'patient_id', 'episode_id'], 'episodes', [
      'agency_id',
      'patient_id',
      'id',
    ])
    .$call(oneOf('visits', 'discipline', DISCIPLINES))
    .$call(oneOf('visits', 'visit_type', visitTypes))
    .$call(oneOf('visits', 'status', ['scheduled', 'in_progress', 'completed', 'missed', 'cancelled']))
    .addColumn('scheduled_start', 'timestamptz', required)
    .addColumn('scheduled_end', 'timestamptz', required)
    .addCheckConstraint('visits_scheduled_order', sql`scheduled_end > scheduled_start`)
    .addColumn('actual_start', 'timestamptz')
    .addColumn('actual_end', 'timestamptz')
    .addCheckConstraint('visits_actual_order', sql`actual_end >= actual_start`)
    .addCheckConstraint(
      'visits_actuals_by_status',
      sql`case status
      when 'completed' then actual_start is not null and actual_end is not null
      when 'in_progress' then actual_start is not null and actual_end is null
      else actual_start is null and actual_end is null end`,
    )
    .$call(reference('visits', 'clinician_id', 'agency_users'))
    .$call(reference('visits', 'office_id', 'offices'))
    .addColumn('service_code', 'text')
    .addColumn('duration_minutes', 'integer', (c) => c.check(sql`duration_minutes >= 0`))
    .$call(oneOf('visits', 'evv_status', ['verified', 'unverified', 'exception', 'not_required']))
    .$call(oneOf('visits', 'documentation_status', ['not_started', 'in_progress', 'submitted', 'approved']))
    .addColumn('missed_reason', 'text')
    .addColumn('cancellation_reason', 'text')
    .addCheckConstraint('visits_missed_reason', sql`missed_reason is null or status = 'missed'`)
    .addCheckConstraint('visits_cancellation_reason', sql`cancellation_reason is null or status = 'cancelled'`)
    .$call(timestamps)
    .execute();
}

async function createTasks(db: Kysely<any>): Promise<void> {
  const relatedTypes = [
    'patient',
    'referral',
    'intake',
    'visit',
    'physician_order',
    'remittance',
    'working_collection',
    'working_collection_row',
  ];
  await tenantTable(db, 'tasks')
    .addColumn('title', 'text', (c) => c.notNull().check(sql`title <> ''`))
    .addColumn('description', 'text')
    .$call(oneOf('tasks', 'status', ['open', 'in_progress', 'done', 'cancelled']))
    .$call(oneOf('tasks', 'priority', ['low', 'normal', 'high', 'urgent']))
    .addColumn('due_date', 'date')
    // A user id or a role name, so it is not a reference to agency_users.
    .addColumn('assignee_id', 'text')
    // The related resource may live in another family's table (orders, remittances, collections): no foreign key.
    .$call(oneOf('tasks', 'related_type', relatedTypes, optional))
    .addColumn('related_id', 'text')
    .addColumn('related_collection_id', 'text')
    .addCheckConstraint('tasks_related_pair', sql`(related_type is null) = (related_id is null)`)
    .addCheckConstraint(
      'tasks_related_collection',
      sql`related_collection_id is null or related_type = 'working_collection_row'`,
    )
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1).check(sql`version >= 1`))
    .addColumn('created_by', 'text', required)
    .addColumn('completed_at', 'timestamptz')
    .addCheckConstraint('tasks_completed_at', sql`(status = 'done') = (completed_at is not null)`)
    .$call(timestamps)
    .execute();
}

async function createIndexes(db: Kysely<any>): Promise<void> {
  const byName = ['last_name', 'first_name', 'id'];
  await index(db, 'patients', 'name', byName);
  for (const filter of ['status', 'service_line', 'office_id'])
    await index(db, 'patients', filter, [filter, ...byName]);
  await index(db, 'patients', 'updated', ['updated_at', 'id']);
  await index(db, 'patients', 'identity', ['match_last_name', 'match_first_name', 'dob', 'match_phone']);
  await index(db, 'coverages', 'patient', ['patient_id', 'coverage_order']);

  const newestReferral = ['referral_date desc', 'id desc'];
  await index(db, 'referrals', 'date', newestReferral);
  for (const filter of ['disposition', 'referral_type_category', 'referral_source_id', 'patient_id']) {
    await index(db, 'referrals', filter, [filter, ...newestReferral]);
  }
  const newestIntake = ['received_at desc', 'id desc'];
  await index(db, 'intakes', 'received', newestIntake);
  await index(db, 'intakes', 'status', ['status', ...newestIntake]);

  const bySchedule = ['scheduled_start', 'id'];
  await index(db, 'visits', 'scheduled', bySchedule);
  for (const filter of ['patient_id', 'discipline', 'status', 'clinician_id'])
    await index(db, 'visits', filter, [filter, ...bySchedule]);
  await index(db, 'tasks', 'related', ['related_type', 'related_id']);
  // current_episode: at most one active episode per patient.
  await db.schema
    .createIndex('episodes_one_active_idx')
    .unique()
    .on('episodes')
    .columns(['agency_id', 'patient_id'])
    .where(sql.ref('status'), '=', 'active')
    .execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  await createReferenceData(db);
  await createCharts(db);
  await createIntakePipeline(db);
  await createVisits(db);
  await createTasks(db);
  await createIndexes(db);
}
