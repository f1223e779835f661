import { createHash } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { SQLSTATE, sqlState } from '../../db/sql-state.js';
import { reusableQuery } from '../../db/reusable-query.js';
import { lockId, lockKey } from '../../db/advisory-locks.js';
import { PlatformError } from '../../shared/platform-error.js';
import { writeCommandLedger, type CommandIdentity, type CommandLedger, type StoredResponse } from './command-ledger.js';
import type { CompletedKeys } from './completed-keys.js';
import type { PhiMode } from '../../shared/principal.js';
import { canonicalJson } from '../../shared/canonical-json.js';

/** How long a command's result is kept and replayed (openapi.json info.description: 24 hours). */
const IDEMPOTENCY_RETENTION_HOURS = 24;

/** Below the handler timeout (10 s by default), so a waiting retry answers 409 before its own request times out. */
const DEFAULT_LOCK_WAIT_MS = 5_000;

interface IdempotentResult {
  response: StoredResponse;
  replayed: boolean;
  /** When the replayed key expires, where its read said so. */
  expiresAt?: Date;
}

/**
 * sha256 (hex) over the PHI mode of the session, the method, the route path with its parameters filled in, and the
 * canonical JSON of the body (absent = null). With the mode in it, a key used in one mode conflicts in the other.
 */
export function requestFingerprint(method: string, path: string, body: unknown, phiMode: PhiMode): string {
  return createHash('sha256')
    .update(`${phiMode} ${method} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
}

const keyStillRunning = (id: CommandIdentity) =>
  new PlatformError(
    'PLATFORM_CONCURRENT_MODIFICATION',
    'A request with this idempotency key is still running; retry shortly to get its response.',
    { idempotencyKey: id.key },
  );

interface StoredRow {
  fingerprint: string;
  response_status: number;
  response_headers: Record<string, string>;
  response_body: string;
  expires_at?: Date;
}

/** A key's stored response answers only the request it was stored for. */
function checkFingerprint(fingerprint: string, id: CommandIdentity): void {
  if (fingerprint !== id.fingerprint) {
    throw new PlatformError(
      'PLATFORM_IDEMPOTENCY_CONFLICT',
      'This idempotency key was already used with a different request (method, route, body or PHI mode).',
      { idempotencyKey: id.key },
    );
  }
}

function replayOf(row: StoredRow, id: CommandIdentity): StoredResponse {
  checkFingerprint(row.fingerprint, id);
  return { status: row.response_status, headers: row.response_headers, body: row.response_body };
}

/** A live key's stored response: once stored, it never changes until the key expires. */
const completedKey = reusableQuery('idempotency-completed', ['agencyId', 'extensionId', 'key'], (db, p) =>
  db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'response_status', 'response_headers', 'response_body', 'expires_at'])
    .where('agency_id', '=', p.agencyId)
    .where('extension_id', '=', p.extensionId)
    .where('key', '=', p.key)
    .where('expires_at', '>', sql<Date>`now()`),
);

const completedFor = (db: Kysely<DB>, id: CommandIdentity) =>
  completedKey(db, { agencyId: id.agencyId, extensionId: id.extensionId, key: id.key });

/**
 * A transaction-level advisory lock per key serializes twins: the first runs, the others wait for it to end, then
 * read what it stored (nothing if it failed). Lock and read are one call of a SQL function
 * (db/migrations/0009_idempotency_key_hold.ts), whose read sees a twin that committed during the wait or just before.
 * The wait sets lock_timeout for the rest of the transaction (transaction-local: the pooled connection gets its
 * setting back at the end).
 */
const holdKeyQuery = reusableQuery(
  'idempotency-hold',
  ['lockWait', 'lockKey', 'agencyId', 'extensionId', 'key'],
  (db, p) =>
    db
      .selectFrom(
        sql<StoredRow>`idempotency_key_hold(${p.lockWait}, ${lockId(p.lockKey)}, ${p.agencyId}, ${p.extensionId}, ${p.key})`.as(
          'k',
        ),
      )
      .select(['fingerprint', 'response_status', 'response_headers', 'response_body']),
);

async function holdKey(trx: Transaction<DB>, id: CommandIdentity, lockWaitMs: number): Promise<StoredRow | undefined> {
  const { agencyId, extensionId, key } = id;
  const params = {
    lockWait: `${lockWaitMs}ms`,
    lockKey: lockKey('idempotency-key', agencyId, extensionId, key),
    agencyId,
    extensionId,
    key,
  };
  const [stored] = await holdKeyQuery(trx, params).catch((err: unknown) => {
    throw sqlState(err) === SQLSTATE.lockNotAvailable ? keyStillRunning(id) : err;
  });
  return stored;
}

/** Thrown inside the transaction to roll it back: a twin committed the key first, and its response is the answer. */
class KeyTakenMeanwhile extends Error {}

/**
 * Runs a command at most once per (agency, extension, key) within the retention.
 * In one transaction: lock the key, run `execute(trx)` (which writes the command's own rows through trx and returns
 * its ledger: audit record, metering event and the response to store), write the ledger with the key, commit.
 * A retry with the same fingerprint gets the stored response (replayed: true) without running anything;
 * another fingerprint gets PLATFORM_IDEMPOTENCY_CONFLICT.
 * `lockWaitMs` bounds every lock wait of the command, the wait of a retry for its still-running first included;
 * beyond it: PLATFORM_CONCURRENT_MODIFICATION (retryable).
 * When execute throws or `signal` aborts before commit, everything rolls back, the key included, so it can be retried;
 * an abort rejects with `signal.reason`.
 * Inside execute, use only `trx`: on PGlite a query on the outer handle would wait for this transaction forever.
 */
export async function runIdempotent(
  db: Kysely<DB>,
  id: CommandIdentity,
  execute: (trx: Transaction<DB>) => Promise<CommandLedger>,
  signal?: AbortSignal,
  lockWaitMs = DEFAULT_LOCK_WAIT_MS,
): Promise<IdempotentResult> {
  signal?.throwIfAborted();
  // Retries of a finished command, the common case of a retry storm, replay in one round trip.
  const [completed] = await completedFor(db, id);
  if (completed) return { response: replayOf(completed, id), replayed: true, expiresAt: completed.expires_at };
  try {
    return await db.transaction().execute(async (trx) => {
      const stored = await holdKey(trx, id, lockWaitMs);
      if (stored) return { response: replayOf(stored, id), replayed: true };
      const ledger = await execute(trx);
      if (!(await writeCommandLedger(trx, id, ledger, IDEMPOTENCY_RETENTION_HOURS))) throw new KeyTakenMeanwhile();
      signal?.throwIfAborted();
      return { response: ledger.response, replayed: false };
    });
  } catch (err) {
    if (err instanceof KeyTakenMeanwhile) {
      const [taken] = await completedFor(db, id);
      if (taken) return { response: replayOf(taken, id), replayed: true };
      throw keyStillRunning(id);
    }
    if (err instanceof PlatformError || sqlState(err) !== SQLSTATE.lockNotAvailable) throw err;
    throw new PlatformError(
      'PLATFORM_CONCURRENT_MODIFICATION',
      'A resource this command needs is locked by a concurrent request; retry shortly.',
    );
  }
}

/**
 * runIdempotent, with the completed keys this process remembers: a retry of a completed command replays from memory
 * (or is refused as a conflict), and a replay read from the database is remembered until shortly before its key expires.
 */
export async function runRemembered(
  completedKeys: CompletedKeys,
  db: Kysely<DB>,
  id: CommandIdentity,
  execute: (trx: Transaction<DB>) => Promise<CommandLedger>,
  signal?: AbortSignal,
): Promise<IdempotentResult> {
  const remembered = completedKeys.get(id);
  if (remembered) {
    checkFingerprint(remembered.fingerprint, id);
    return { response: remembered.response, replayed: true };
  }
  const result = await runIdempotent(db, id, execute, signal);
  if (result.expiresAt)
    completedKeys.remember(id, { fingerprint: id.fingerprint, response: result.response }, result.expiresAt);
  return result;
}

interface PurgeOptions {
  /** Keys that expired at or before this instant go; default: the database's clock, the one expiry is computed with. */
  now?: Date;
  /** Rows per DELETE statement, so a large backlog never holds locks or WAL for long. */
  batchSize?: number;
}

async function purgeBatch(db: Kysely<DB>, cutoff: Date | RawBuilder<Date>, batchSize: number): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    // Repeated outside the subquery: a key re-claimed meanwhile is re-checked on its new version and kept.
    .where('expires_at', '<=', cutoff)
    .where((eb) =>
      eb(
        eb.refTuple('agency_id', 'extension_id', 'key'),
        'in',
        eb
          .selectFrom('idempotency_keys')
          .select(['agency_id', 'extension_id', 'key'])
          .where('expires_at', '<=', cutoff)
          .limit(batchSize)
          .$asTuple('agency_id', 'extension_id', 'key'),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes expired idempotency keys (retention: IDEMPOTENCY_RETENTION_HOURS); returns how many. Run it periodically. */
export async function purgeExpiredIdempotencyKeys(db: Kysely<DB>, options: PurgeOptions = {}): Promise<number> {
  const { now, batchSize = 1_000 } = options;
  const cutoff = now ?? sql<Date>`now()`;
  let purged = 0;
  for (;;) {
    const deleted = await purgeBatch(db, cutoff, batchSize);
    purged += deleted;
    if (deleted < batchSize) return purged;
  }
}
