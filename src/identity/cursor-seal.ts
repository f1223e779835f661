import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { KeyEncryption } from './key-encryption.js';
import { serviceSecret } from './secrets-at-rest.js';
import { gcmOpen, gcmSeal, joined, split } from './aes-gcm.js';

const PURPOSE = 'list-cursor';

/**
 * Seals list cursors (AES-256-GCM, one key shared by every instance through the database): a cursor holds
 * the last row's order values (names, dates, real ids), which a no_phi session must not read, and which
 * no caller may forge. Each cursor is sealed under a binding (the cipher's additional authenticated data,
 * see CursorSealer): opened under any other, it fails like a forged one.
 */
export class CursorSeal {
  private key: Promise<KeyObject> | undefined;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly keyEncryption: KeyEncryption,
  ) {}

  async seal(value: unknown, binding: Uint8Array): Promise<string> {
    return joined(gcmSeal(await this.secret(), JSON.stringify(value), binding)).toString('base64url');
  }

  /** The sealed value, or undefined for anything this service did not seal under this binding. */
  async open(cursor: string, binding: Uint8Array): Promise<unknown> {
    const text = gcmOpen(await this.secret(), split(Buffer.from(cursor, 'base64url')), binding);
    return text === undefined ? undefined : JSON.parse(text.toString('utf8'));
  }

  /**
   * Loads the key (the first use creates it) on the service's own connection: a command that seals inside its
   * transaction calls this first, since on PGlite a query on the outer handle waits for that transaction forever.
   */
  async ready(): Promise<void> {
    await this.secret();
  }

  private secret(): Promise<KeyObject> {
    this.key ??= this.loadOrCreate().catch((err) => {
      this.key = undefined;
      throw err;
    });
    return this.key;
  }

  private async loadOrCreate(): Promise<KeyObject> {
    return createSecretKey(await serviceSecret(this.db, this.keyEncryption, PURPOSE));
  }
}
