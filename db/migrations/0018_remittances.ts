import { sql, type Kysely } from 'kysely';

/**
 * ERA remittances imported from X12 835 files (admin `era import`; `listRemittances`, `listRemittanceAllocations`): the file, one remittance per
 * ST/SE payment with its totals, its claim-level allocations and its provider-level (PLB) adjustments. A file is
 * imported once per agency (by its SHA-256), and a payer's trace number once (TRN03, TRN02), whichever file brings it.
 */

const STATUSES = ['received', 'posted', 'reconciled', 'exception'];
const MATCH_STATUSES = ['matched', 'partially_matched', 'unmatched'];
const list = (values: string[]) => sql.join(values.map((v) => sql.lit(v)));
const money = 'numeric(14, 2)' as const;

async function createFiles(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('era_files')
    .addColumn('agency_id', 'text', (c) => c.notNull().references('agencies.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('byte_size', 'bigint', (c) => c.notNull())
    .addColumn('interchange_control_number', 'text', (c) => c.notNull())
    .addColumn('sender_id', 'text', (c) => c.notNull())
    .addColumn('receiver_id', 'text', (c) => c.notNull())
    .addColumn('payment_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('claim_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('era_files_pk', ['agency_id', 'id'])
    .addUniqueConstraint('era_files_content_unique', ['agency_id', 'sha256'])
    .execute();
}

async function createRemittances(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('remittances')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('era_file_id', 'text', (c) => c.notNull())
    .addColumn('transaction_control_number', 'text', (c) => c.notNull())
    .addColumn('payer_name', 'text', (c) => c.notNull())
    .addColumn('payer_id', 'text')
    .addColumn('payee_name', 'text', (c) => c.notNull())
    .addColumn('payee_id', 'text')
    .addColumn('trace_originator', 'text', (c) => c.notNull())
    .addColumn('trace_number', 'text', (c) => c.notNull())
    .addColumn('credit_debit', 'text', (c) => c.notNull().check(sql`credit_debit in ('C', 'D')`))
    .addColumn('payment_amount', money, (c) => c.notNull().check(sql`payment_amount >= 0`))
    .addColumn('payment_method', 'text', (c) => c.notNull())
    .addColumn('payment_date', 'date', (c) => c.notNull())
    .addColumn('production_date', 'date')
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('received')
        .check(sql`status in (${list(STATUSES)})`),
    )
    // Totals of the payment, written when its SE is read (its allocations never change afterwards).
    .addColumn('claim_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('charged_amount', money, (c) => c.notNull().defaultTo(0))
    .addColumn('allowed_amount', money, (c) => c.notNull().defaultTo(0))
    .addColumn('paid_amount', money, (c) => c.notNull().defaultTo(0))
    .addColumn('adjustment_amount', money, (c) => c.notNull().defaultTo(0))
    .addColumn('patient_responsibility_amount', money, (c) => c.notNull().defaultTo(0))
    .addColumn('variance_amount', money, (c) => c.notNull().defaultTo(0))
    .addColumn('adjustments_by_group', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('provider_adjustment_amount', money, (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('remittances_pk', ['agency_id', 'id'])
    .addForeignKeyConstraint('remittances_file_fk', ['agency_id', 'era_file_id'], 'era_files', ['agency_id', 'id'])
    .addUniqueConstraint('remittances_trace_unique', ['agency_id', 'trace_originator', 'trace_number'])
    .execute();
  const newest = ['payment_date desc', 'id desc'];
  await db.schema
    .createIndex('remittances_newest_idx')
    .on('remittances')
    .columns(['agency_id', ...newest])
    .execute();
  for (const filter of ['status', 'era_file_id']) {
    await db.schema
      .createIndex(`remittances_${filter}_idx`)
      .on('remittances')
      .columns(['agency_id', filter, ...newest])
      .execute();
  }
}

async function createAllocations(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('remittance_allocations')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('remittance_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('patient_control_number', 'text', (c) => c.notNull())
    .addColumn('claim_status_code', 'text', (c) => c.notNull())
    .addColumn('payer_claim_number', 'text')
    .addColumn('original_payer_claim_number', 'text')
    .addColumn('claim_filing_indicator', 'text')
    .addColumn('patient_last_name', 'text')
    .addColumn('patient_first_name', 'text')
    .addColumn('patient_middle_name', 'text')
    .addColumn('member_id', 'text')
    .addColumn('patient_id', 'text')
    .addColumn('match_status', 'text', (c) => c.notNull().check(sql`match_status in (${list(MATCH_STATUSES)})`))
    .addColumn('service_date_from', 'date')
    .addColumn('service_date_to', 'date')
    .addColumn('charged_amount', money, (c) => c.notNull())
    .addColumn('allowed_amount', money, (c) => c.notNull())
    .addColumn('paid_amount', money, (c) => c.notNull())
    .addColumn('adjustment_amount', money, (c) => c.notNull())
    .addColumn('patient_responsibility_amount', money, (c) => c.notNull())
    .addColumn('variance_amount', money, (c) => c.notNull())
    .addColumn('adjustment_codes', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('remittance_allocations_pk', ['agency_id', 'id'])
    .addForeignKeyConstraint('remittance_allocations_remittance_fk', ['agency_id', 'remittance_id'], 'remittances', [
      'agency_id',
      'id',
    ])
    .addForeignKeyConstraint('remittance_allocations_patient_fk', ['agency_id', 'patient_id'], 'patients', [
      'agency_id',
      'id',
    ])
    .addUniqueConstraint('remittance_allocations_position_unique', ['agency_id', 'remittance_id', 'position', 'id'])
    .execute();
}

async function createProviderAdjustments(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('remittance_provider_adjustments')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('remittance_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('provider_id', 'text', (c) => c.notNull())
    .addColumn('fiscal_period_date', 'date', (c) => c.notNull())
    .addColumn('reason_code', 'text', (c) => c.notNull())
    .addColumn('reference', 'text')
    .addColumn('amount', money, (c) => c.notNull())
    .addPrimaryKeyConstraint('remittance_provider_adjustments_pk', ['agency_id', 'remittance_id', 'position'])
    .addForeignKeyConstraint(
      'remittance_provider_adjustments_remittance_fk',
      ['agency_id', 'remittance_id'],
      'remittances',
      ['agency_id', 'id'],
    )
    .execute();
}

/** The claim match looks patients up by MRN and by their coverages' policy numbers. */
async function createMatchIndexes(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('patients_mrn_idx').on('patients').columns(['agency_id', 'mrn']).execute();
  await db.schema
    .createIndex('coverages_policy_number_idx')
    .on('coverages')
    .columns(['agency_id', 'policy_number'])
    .execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  await createFiles(db);
  await createRemittances(db);
  await createAllocations(db);
  await createProviderAdjustments(db);
  await createMatchIndexes(db);
}
