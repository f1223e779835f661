import { sql, type Kysely } from 'kysely';

/**
 * Webhooks: subscriptions (managed by the admin CLI), their signing secrets sealed at rest, the transactional
 * outbox that commands write their events to, and one delivery per event and subscription, claimed by workers.
 */

const list = (values: string[]) => sql.join(values.map((v) => sql.lit(v)));

async function createSubscriptions(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_subscriptions')
    .addColumn('agency_id', 'text', (c) => c.notNull().references('agencies.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_subscriptions_pk', ['agency_id', 'id'])
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('event_types', sql`text[]`, (c) => c.notNull().check(sql`cardinality(event_types) > 0`))
    .addColumn('phi_mode', 'text', (c) => c.notNull().check(sql`phi_mode in ('phi', 'no_phi')`))
    .addColumn('baa_signed_at', 'timestamptz')
    // Development only: plain http:// to a loopback receiver.
    .addColumn('allow_http_loopback', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('enabled').check(sql`status in ('enabled', 'disabled')`))
    .addColumn('disabled_reason', 'text')
    // Set by the first failure after a success, cleared by the next success: how long the receiver has been failing.
    .addColumn('failing_since', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('webhook_subscriptions_disabled', sql`(status = 'disabled') = (disabled_reason is not null)`)
    .execute();
  // The admin CLI names a subscription by its id alone.
  await db.schema
    .createIndex('webhook_subscriptions_id_idx')
    .unique()
    .on('webhook_subscriptions')
    .column('id')
    .execute();
}

async function createSecrets(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_secrets')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_secrets_pk', ['agency_id', 'subscription_id', 'id'])
    .addForeignKeyConstraint(
      'webhook_secrets_subscription_fk',
      ['agency_id', 'subscription_id'],
      'webhook_subscriptions',
      ['agency_id', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    // Sealed under the key-encryption key (src/identity/key-encryption.ts), bound to webhook_secrets/<id>.
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Null for the current secret; a retiring one signs x-svc-signature-previous until then.
    .addColumn('retires_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('webhook_secrets_current_idx')
    .unique()
    .on('webhook_secrets')
    .columns(['agency_id', 'subscription_id'])
    .where(sql.ref('retires_at'), 'is', null)
    .execute();
}

async function createEvents(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_events')
    .addColumn('agency_id', 'text', (c) => c.notNull().references('agencies.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_events_pk', ['agency_id', 'id'])
    .addColumn('seq', 'bigint', (c) => c.notNull().generatedAlwaysAsIdentity())
    .addColumn('type', 'text', (c) => c.notNull())
    // As the change's own transaction saw it (PHI included): a no_phi subscription's copy is reduced at delivery.
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Set once a worker has made the event's deliveries.
    .addColumn('fanned_out_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('webhook_events_unfanned_idx')
    .on('webhook_events')
    .column('seq')
    .where(sql.ref('fanned_out_at'), 'is', null)
    .execute();
}

const DELIVERY_STATUSES = ['held', 'pending', 'delivered', 'failed'];

async function createDeliveries(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_deliveries_pk', ['agency_id', 'id'])
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_seq', 'bigint', (c) => c.notNull())
    .addForeignKeyConstraint(
      'webhook_deliveries_subscription_fk',
      ['agency_id', 'subscription_id'],
      'webhook_subscriptions',
      ['agency_id', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    .addForeignKeyConstraint('webhook_deliveries_event_fk', ['agency_id', 'event_id'], 'webhook_events', [
      'agency_id',
      'id',
    ])
    // One delivery per event and subscription: retries and replays keep its id.
    .addUniqueConstraint('webhook_deliveries_once', ['agency_id', 'subscription_id', 'event_id'])
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in (${list(DELIVERY_STATUSES)})`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // When a pending delivery is due; while an attempt runs, the end of its lease (a dead worker's attempt is retried then).
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_attempt_at', 'timestamptz')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .columns(['next_attempt_at', 'event_seq'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_subscription_idx')
    .on('webhook_deliveries')
    .columns(['agency_id', 'subscription_id', 'event_seq'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_id_idx').unique().on('webhook_deliveries').column('id').execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  await createSubscriptions(db);
  await createSecrets(db);
  await createEvents(db);
  await createDeliveries(db);
}
