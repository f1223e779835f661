import { BoundedMap } from '../../identity/bounded-map.js';
import type { CommandIdentity, StoredResponse } from './command-ledger.js';

/** Keys remembered at once; past it the longest-held is forgotten (and read from the database if replayed again). */
const MAX_REMEMBERED_KEYS = 1_000;
/** A larger stored response is not remembered: the memory stays under MAX_REMEMBERED_KEYS times this. */
const MAX_REMEMBERED_BODY_CHARS = 32_768;
/** A key is forgotten this long before it expires: this process's clock and the database's may differ. */
const EXPIRY_MARGIN_MS = 60_000;

/** A completed key as the database holds it: the request's fingerprint and the response stored with it. */
export interface CompletedKey {
  fingerprint: string;
  response: StoredResponse;
}

interface Remembered extends CompletedKey {
  forgetAtMs: number;
}

/**
 * Completed keys this process has replayed, so that a client retrying a command replays from memory rather than with
 * a read per retry. Right on every process without any invalidation: a key's stored response never changes while
 * the key lives (the command ledger takes over only an expired key, and the purge deletes only expired keys), and a
 * remembered key is forgotten before it expires.
 */
export class CompletedKeys {
  private readonly keys: BoundedMap<Remembered>;

  constructor(capacity = MAX_REMEMBERED_KEYS) {
    this.keys = new BoundedMap(capacity);
  }

  get(id: CommandIdentity, nowMs = Date.now()): CompletedKey | undefined {
    const key = keyOf(id);
    const remembered = this.keys.get(key);
    if (!remembered || remembered.forgetAtMs > nowMs) return remembered;
    this.keys.delete(key);
    return undefined;
  }

  remember(id: CommandIdentity, completed: CompletedKey, expiresAt: Date): void {
    if (completed.response.body.length > MAX_REMEMBERED_BODY_CHARS) return;
    this.keys.set(keyOf(id), { ...completed, forgetAtMs: expiresAt.getTime() - EXPIRY_MARGIN_MS });
  }
}

// Neither ids nor an HTTP header value hold a NUL character.
const keyOf = (id: CommandIdentity) => `${id.agencyId}\u0000${id.extensionId}\u0000${id.key}`;
