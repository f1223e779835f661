import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../db/schema.js';
import { isRejectedRow } from '../db/sql-state.js';
import type { AuditOutcome } from '../db/tables/command-ledger.js';
import { PlatformError } from '../shared/platform-error.js';
import type { PhiMode } from '../shared/principal.js';
import type { BufferObserver } from '../observability/metrics.js';
import { isStorableText, storableText } from '../domain/storable-text.js';

export interface AuditEvent {
  agencyId: string;
  extensionId: string;
  operationId: string;
  resourceType: string | null;
  resourceIds: string[];
  outcome: AuditOutcome;
  status: number;
  requestId: string;
  phiMode: PhiMode;
  sourceSystem?: string | null;
  externalReferenceId?: string | null;
  details?: Record<string, unknown> | null;
  /** Default: when the record is written (the transaction's start time in a command's ledger, push time for AuditBuffer). */
  occurredAt?: Date;
}

interface AuditLog {
  error(obj: unknown, msg?: string): void;
}

/**
 * JSON.stringify's replacer that writes every string and member name in a form jsonb always stores: an audit record
 * must not be refused for what a request carried (a NUL or a lone surrogate in a query's free text, say).
 */
function storable(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  if (Object.keys(value).every(isStorableText)) return value;
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [storableText(name), item]));
}

/**
 * The INSERT of the events, with one JSON parameter whatever the batch size: PHI reads are audited one row per call,
 * and a multi-row VALUES built per batch costs the event loop several times what the database spends on it.
 * Its text depends on nothing but the parameter, so a command's ledger statement can embed it and stay prepared.
 */
export function insertAuditEvents(events: AuditEvent[]): RawBuilder<unknown> {
  const rows = JSON.stringify(
    events.map((e) => [
      e.agencyId,
      e.extensionId,
      e.operationId,
      e.resourceType,
      e.resourceIds,
      e.outcome,
      e.status,
      e.requestId,
      e.phiMode,
      e.sourceSystem ?? null,
      e.externalReferenceId ?? null,
      e.occurredAt ?? null,
      e.details ?? null,
    ]),
    storable,
  );
  return sql`
    insert into audit_events (agency_id, extension_id, operation_id, resource_type, resource_ids, outcome, status, request_id, phi_mode,
      source_system, external_reference_id, occurred_at, details)
    select r->>0, r->>1, r->>2, r->>3, array(select jsonb_array_elements_text(r->4)), r->>5, (r->>6)::int, r->>7, r->>8,
      r->>9, r->>10, coalesce((r->>11)::timestamptz, now()), nullif(r->12, 'null'::jsonb)
    from jsonb_array_elements(${rows}::jsonb) as r`;
}

interface AuditBufferOptions {
  /** Events per INSERT; reaching this many pending events starts a flush at once. */
  maxBatch?: number;
  /** Memory bound: beyond it push() refuses, so a read is not served unaudited while the database is unreachable. */
  maxPending?: number;
  /** Told of each write, failure and drop (the metrics). */
  observer?: BufferObserver;
}

/**
 * Audit of reads, written in batches off the request path: by size, by interval (its flush worker,
 * src/workers/flushers.ts) and at close. A batch that fails for a transient reason stays queued
 * and is retried at the next flush; a row the database refuses as data (SQLSTATE class 22 or 23) is logged and dropped,
 * so one bad event cannot block the trail.
 */
export class AuditBuffer {
  readonly #db: Kysely<DB>;
  readonly #log: AuditLog;
  readonly #maxBatch: number;
  readonly #maxPending: number;
  readonly #observer: BufferObserver | undefined;
  #pending: AuditEvent[] = [];
  #flushes: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(db: Kysely<DB>, log: AuditLog, options: AuditBufferOptions = {}) {
    this.#db = db;
    this.#log = log;
    this.#maxBatch = options.maxBatch ?? 200;
    this.#maxPending = options.maxPending ?? 10_000;
    this.#observer = options.observer;
  }

  get pending(): number {
    return this.#pending.length;
  }

  /** Queues an event; throws PLATFORM_AUDIT_WRITE_FAILED when closed or full, so call it before the response is sent. */
  push(event: AuditEvent): void {
    if (this.#closed)
      throw new PlatformError(
        'PLATFORM_AUDIT_WRITE_FAILED',
        'The audit trail is closed: the service is shutting down.',
      );
    if (this.#pending.length >= this.#maxPending) {
      throw new PlatformError(
        'PLATFORM_AUDIT_WRITE_FAILED',
        'The audit trail cannot keep up, so the request was refused rather than served unaudited.',
      );
    }
    this.#pending.push({ ...event, occurredAt: event.occurredAt ?? new Date() });
    // Full batches only: draining down to the last event would turn a steady load into a stream of small inserts.
    if (this.#pending.length === this.#maxBatch) void this.#queue(this.#maxBatch);
  }

  /** Resolves when every event pushed before the call is written or, after a logged failure, still queued for retry. */
  flush(): Promise<void> {
    return this.#queue(1);
  }

  /** One drain at a time, in order; each drains again, so it also covers events pushed during an earlier one. */
  #queue(minBatch: number): Promise<void> {
    this.#flushes = this.#flushes.then(() => this.#drain(minBatch));
    return this.#flushes;
  }

  /** Refuses new events and writes what is queued; events that still cannot be written are logged as lost. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
    if (this.#pending.length === 0) return;
    this.#log.error({ lost: this.#pending.length }, 'audit events lost at shutdown: the database did not accept them');
    this.#pending = [];
  }

  async #drain(minBatch: number): Promise<void> {
    while (this.#pending.length >= minBatch) {
      const settled = await this.#settle(this.#pending.slice(0, this.#maxBatch));
      this.#pending.splice(0, settled);
      if (settled === 0) return;
    }
  }

  /** Writes the batch; returns how many events from its front are done with (written or dropped). */
  async #settle(batch: AuditEvent[]): Promise<number> {
    const start = performance.now();
    try {
      await insertAuditEvents(batch).execute(this.#db);
      this.#observer?.written(batch.length, (performance.now() - start) / 1000);
      return batch.length;
    } catch (err) {
      if (!isRejectedRow(err)) {
        this.#observer?.failed();
        this.#log.error(
          { err, pending: this.#pending.length },
          'audit flush failed; the events stay queued for the next flush',
        );
        return 0;
      }
      if (batch.length > 1) return this.#settleOneByOne(batch);
      const [event] = batch;
      this.#observer?.dropped(1);
      this.#log.error(
        { err, requestId: event.requestId, operationId: event.operationId },
        'audit event refused by the database; dropped',
      );
      return 1;
    }
  }

  async #settleOneByOne(batch: AuditEvent[]): Promise<number> {
    let settled = 0;
    for (const event of batch) {
      const done = await this.#settle([event]);
      if (done === 0) break;
      settled += done;
    }
    return settled;
  }
}
