import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.js';
import type { KeyEncryption } from './key-encryption.js';

/** The names the sealed values are bound to: one row's sealed secret does not open as another's. */
export const signingKeyRow = (kid: string) => `signing_keys/${kid}`;
export const serviceSecretRow = (purpose: string) => `service_secrets/${purpose}`;
export const webhookSecretRow = (id: string) => `webhook_secrets/${id}`;

/**
 * A random 32-byte secret of the service, shared by every instance through the database and stored sealed under the
 * key-encryption key: the first instance to need it creates it, the others read the one that won.
 */
export async function serviceSecret(db: Kysely<DB>, keyEncryption: KeyEncryption, purpose: string): Promise<Buffer> {
  const row = serviceSecretRow(purpose);
  await db
    .insertInto('service_secrets')
    .values({ purpose, secret_sealed: keyEncryption.seal(randomBytes(32), row) })
    .onConflict((oc) => oc.column('purpose').doNothing())
    .execute();
  const stored = await db
    .selectFrom('service_secrets')
    .select('secret_sealed')
    .where('purpose', '=', purpose)
    .executeTakeFirstOrThrow();
  return keyEncryption.open(stored.secret_sealed, row);
}

export interface SealingReport {
  /** Rows found in plaintext (written before secrets were sealed) and sealed now. */
  sealed: number;
  /** Rows sealed under a previous key and sealed again under the current one. */
  rewrapped: number;
  /** Rows left sealed under a previous key (not rewrapping): that key is still needed. */
  underPreviousKey: number;
  /** Every stored secret; all of them open with the configured keys. */
  total: number;
}

interface StoredSecret {
  row: string;
  plaintext: Buffer | null;
  sealed: string | null;
}

class Sealing {
  readonly report: SealingReport = { sealed: 0, rewrapped: 0, underPreviousKey: 0, total: 0 };

  constructor(
    private readonly keys: KeyEncryption,
    private readonly rewrap: boolean,
  ) {}

  /** The secret's new sealed value, or undefined when it stays as it is (once checked that it opens). */
  next(secret: StoredSecret): string | undefined {
    this.report.total++;
    if (secret.plaintext !== null) {
      this.report.sealed++;
      return this.keys.seal(secret.plaintext, secret.row);
    }
    const plaintext = this.keys.open(secret.sealed, secret.row);
    if (this.keys.isCurrent(secret.sealed!)) return undefined;
    if (!this.rewrap) {
      this.report.underPreviousKey++;
      return undefined;
    }
    this.report.rewrapped++;
    return this.keys.seal(plaintext, secret.row);
  }
}

async function sealSigningKeys(trx: Transaction<DB>, sealing: Sealing): Promise<void> {
  const rows = await trx
    .selectFrom('signing_keys')
    .select(['kid', 'private_key_pem', 'private_key_sealed'])
    .forUpdate()
    .execute();
  for (const row of rows) {
    const plaintext = row.private_key_pem === null ? null : Buffer.from(row.private_key_pem, 'utf8');
    const sealed = sealing.next({ row: signingKeyRow(row.kid), plaintext, sealed: row.private_key_sealed });
    if (sealed)
      await trx
        .updateTable('signing_keys')
        .set({ private_key_pem: null, private_key_sealed: sealed })
        .where('kid', '=', row.kid)
        .execute();
  }
}

async function sealServiceSecrets(trx: Transaction<DB>, sealing: Sealing): Promise<void> {
  const rows = await trx
    .selectFrom('service_secrets')
    .select(['purpose', 'secret', 'secret_sealed'])
    .forUpdate()
    .execute();
  for (const row of rows) {
    const sealed = sealing.next({
      row: serviceSecretRow(row.purpose),
      plaintext: row.secret,
      sealed: row.secret_sealed,
    });
    if (sealed)
      await trx
        .updateTable('service_secrets')
        .set({ secret: null, secret_sealed: sealed })
        .where('purpose', '=', row.purpose)
        .execute();
  }
}

/** Webhook signing secrets are sealed when written (never stored in plaintext): this checks and rewraps them. */
async function sealWebhookSecrets(trx: Transaction<DB>, sealing: Sealing): Promise<void> {
  const rows = await trx
    .selectFrom('webhook_secrets')
    .select(['agency_id', 'subscription_id', 'id', 'secret_sealed'])
    .orderBy('id')
    .forUpdate()
    .execute();
  for (const row of rows) {
    const sealed = sealing.next({ row: webhookSecretRow(row.id), plaintext: null, sealed: row.secret_sealed });
    if (sealed) {
      await trx
        .updateTable('webhook_secrets')
        .set({ secret_sealed: sealed })
        .where('agency_id', '=', row.agency_id)
        .where('subscription_id', '=', row.subscription_id)
        .where('id', '=', row.id)
        .execute();
    }
  }
}

/**
 * Run by every process that starts on the database: seals what is still stored in plaintext and checks that every
 * secret opens with the configured keys, so a wrong key stops the start with a message naming the key ids. With
 * `rewrap` (the admin command), also seals again under the current key whatever a previous key sealed. The rows are
 * locked (always in the same order), so processes starting at once seal each row once.
 */
export async function sealSecrets(
  db: Kysely<DB>,
  keys: KeyEncryption,
  options: { rewrap?: boolean } = {},
): Promise<SealingReport> {
  const sealing = new Sealing(keys, options.rewrap ?? false);
  await db.transaction().execute(async (trx) => {
    await sealSigningKeys(trx, sealing);
    await sealServiceSecrets(trx, sealing);
    await sealWebhookSecrets(trx, sealing);
  });
  return sealing.report;
}
