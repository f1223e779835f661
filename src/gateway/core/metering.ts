import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../db/schema.js';
import { isRejectedRow } from '../../db/sql-state.js';
import { IntegrationMap } from '../../shared/integration-map.js';
import type { BufferObserver } from '../../observability/metrics.js';

/** One call through the gateway, as billed and reported. */
export interface MeteringEvent {
  agencyId: string;
  extensionId: string;
  operationId: string;
  status: number;
  costUnits: number;
  /** From the request's arrival until its response was handed to the socket; stored rounded to whole milliseconds. */
  durationMs: number;
  requestId: string;
  /** When the gateway took the call (a warm call's limits are charged at the same instant); epoch milliseconds, not a Date, since one is made for every call. */
  occurredAtMs: number;
  /** The code the call was refused with; absent when it was answered. */
  errorCode?: string;
  /** The contract version it was served in (absent: not known, stored as null). */
  contractVersion?: string;
  /** An idempotent replay of a command's stored answer. */
  replayed?: boolean;
}

/** Fits pino and Fastify's logger. */
interface MeteringLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

interface MeteringBufferOptions {
  /** Events per insert (default 500); reaching it also starts a write. */
  maxBatch?: number;
  /** Events held while the database is failing (default 50 000); beyond it the oldest are dropped. */
  maxPending?: number;
  /** Told of each write, failure and drop (the metrics). */
  observer?: BufferObserver;
}

type Columns = { [K in keyof MeteringEvent]-?: MeteringEvent[K][] };

const emptyColumns = (): Columns => ({
  agencyId: [],
  extensionId: [],
  operationId: [],
  status: [],
  costUnits: [],
  durationMs: [],
  requestId: [],
  occurredAtMs: [],
  errorCode: [],
  contractVersion: [],
  replayed: [],
});

/**
 * Calls in columns, one array per field: a buffered call is a slot in each, not an object. Event objects (each with
 * two boxed numbers) held between flushes cost a tenth of a warm health call's throughput, measured.
 */
class MeteringCalls {
  private columns = emptyColumns();

  static of(events: MeteringEvent[]): MeteringCalls {
    const calls = new MeteringCalls();
    for (const event of events) calls.push(event);
    return calls;
  }

  get length(): number {
    return this.columns.requestId.length;
  }

  push(event: MeteringEvent): void {
    const c = this.columns;
    c.agencyId.push(event.agencyId);
    c.extensionId.push(event.extensionId);
    c.operationId.push(event.operationId);
    c.status.push(event.status);
    c.costUnits.push(event.costUnits);
    c.durationMs.push(event.durationMs);
    c.requestId.push(event.requestId);
    c.occurredAtMs.push(event.occurredAtMs);
    c.errorCode.push(event.errorCode);
    c.contractVersion.push(event.contractVersion);
    c.replayed.push(event.replayed);
  }

  /** One call as an event, for a log line. */
  at(index: number): MeteringEvent {
    return Object.fromEntries(
      Object.entries(this.columns).map(([field, column]) => [field, column[index]]),
    ) as unknown as MeteringEvent;
  }

  /** Removes the `count` oldest calls and returns them. */
  takeOldest(count: number): MeteringCalls {
    const taken = new MeteringCalls();
    taken.columns = this.eachColumn((column) => column.splice(0, count));
    return taken;
  }

  /** Puts older calls back in front of these. */
  prepend(older: MeteringCalls): void {
    this.columns = older.eachColumn((column, field) => column.concat(this.columns[field]));
  }

  private eachColumn(change: (column: unknown[], field: keyof Columns) => unknown[]): Columns {
    const entries = Object.entries(this.columns).map(([field, column]) => [
      field,
      change(column, field as keyof Columns),
    ]);
    return Object.fromEntries(entries) as Columns;
  }

  /** The INSERT of these calls (see insertMeteringEvents). */
  insert(): RawBuilder<unknown> {
    return sql`
      insert into metering_segments (agency_id, extension_id, base_at, last_at, operation_ids, statuses, cost_units, durations_ms, request_ids, offsets_ms,
        error_codes, contract_versions, replayed)
      values ${sql.join(this.byIntegration().map((indices) => this.segmentOf(indices)))}`;
  }

  private byIntegration(): number[][] {
    const groups = new IntegrationMap<number[]>();
    const { agencyId, extensionId } = this.columns;
    for (let i = 0; i < this.length; i++) {
      const group = groups.get(agencyId[i], extensionId[i]);
      if (group) group.push(i);
      else groups.set(agencyId[i], extensionId[i], [i]);
    }
    return [...groups.values()];
  }

  /**
   * One loop that builds each column's text. It runs once per flush, so V8 leaves it unoptimized: a map and a join
   * per column made building a batch a third dearer.
   */
  private segmentOf(indices: number[]) {
    const c = this.columns;
    let base = Infinity;
    let last = -Infinity;
    for (const i of indices) {
      base = Math.min(base, c.occurredAtMs[i]);
      last = Math.max(last, c.occurredAtMs[i]);
    }
    let operationIds = '',
      statuses = '',
      costUnits = '',
      durations = '',
      requestIds = '',
      offsets = '',
      errorCodes = '',
      versions = '',
      replayed = '';
    for (let n = 0; n < indices.length; n++) {
      const i = indices[n];
      const comma = n === 0 ? '' : ',';
      operationIds += comma + c.operationId[i];
      statuses += comma + c.status[i];
      costUnits += comma + c.costUnits[i];
      durations += comma + Math.round(c.durationMs[i]);
      requestIds += comma + c.requestId[i];
      offsets += comma + (c.occurredAtMs[i] - base);
      errorCodes += comma + (c.errorCode[i] ?? NONE);
      versions += comma + (c.contractVersion[i] ?? NONE);
      replayed += comma + (c.replayed[i] ? 't' : 'f');
    }
    const first = indices[0];
    return sql`(${c.agencyId[first]}, ${c.extensionId[first]}, ${new Date(base)}, ${new Date(last)},
      ${delimited(operationIds, 'text')}, ${delimited(statuses, 'int')}, ${delimited(costUnits, 'int')},
      ${delimited(durations, 'int')}, ${delimited(requestIds, 'text')}, ${delimited(offsets, 'int')},
      ${delimited(errorCodes, 'text', NONE)}, ${delimited(versions, 'text', NONE)}, ${delimited(replayed, 'boolean')})`;
  }
}

/**
 * The INSERT of the events, one segment row per integration: the database stores a flush's calls as array elements,
 * not as rows. Each array travels as one comma-separated text that the database splits (string_to_array), the
 * cheapest form for both sides: pg would escape an array literal element by element in JavaScript, and
 * JSON costs the database twice as much to take apart. Operation ids, request ids and numbers hold no comma; a
 * value that did would split in two, and the segment's one-entry-per-call check would refuse it (error codes and
 * contract versions hold no comma either).
 * The casts make the database refuse a malformed number. For one integration the text is always the same, so a
 * command's ledger statement can embed it and stay prepared.
 */
export function insertMeteringEvents(events: MeteringEvent[]): RawBuilder<unknown> {
  return MeteringCalls.of(events).insert();
}

/**
 * An absent error code or version, as an element the database reads as null. Not the empty string: a segment of one
 * call would send '', which the database splits into no element at all.
 */
const NONE = '-';

function delimited(text: string, type: 'text' | 'int' | 'boolean', nullAs?: typeof NONE) {
  if (nullAs) return sql`string_to_array(${text}, ',', ${sql.lit(nullAs)})::${sql.raw(type)}[]`;
  return sql`string_to_array(${text}, ',')::${sql.raw(type)}[]`;
}

/**
 * Metering for every call that is not a command: pushed without waiting, written in batches
 * by size, by interval (its flush worker, src/workers/flushers.ts) and at close. A failed write is retried at the next interval.
 */
export class MeteringBuffer {
  private pendingCalls = new MeteringCalls();
  private dropped = 0;
  private failing = false;
  private running: Promise<void> | undefined;
  private followUp: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly maxBatch: number;
  private readonly maxPending: number;
  private readonly observer: BufferObserver | undefined;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly log: MeteringLog,
    options: MeteringBufferOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 500;
    this.maxPending = options.maxPending ?? 50_000;
    this.observer = options.observer;
  }

  /** Events waiting to be written. */
  get pending(): number {
    return this.pendingCalls.length;
  }

  push(event: MeteringEvent): void {
    if (this.closing) {
      this.log.error(
        { requestId: event.requestId, operationId: event.operationId },
        'metering event after close: not recorded',
      );
      return;
    }
    this.pendingCalls.push(event);
    this.dropOldestBeyondCap();
    // While writes fail only the timer retries, so a burst of calls does not hammer a struggling database.
    // What arrives while a batch is written waits for the next full batch or the timer: draining down to the last
    // event would turn a steady load into a stream of small inserts, each with its own statement and commit.
    if (this.pendingCalls.length >= this.maxBatch && !this.failing && !this.running) void this.run(0);
  }

  /** Resolves once every event pushed before the call is written, or kept for retry after a logged failure. Never rejects. */
  flush(): Promise<void> {
    if (!this.running) return this.run(this.pendingCalls.length);
    // The running write may already be past its last batch; one follow-up covers whatever came after.
    this.followUp ??= this.running.then(() => {
      this.followUp = undefined;
      return this.flush();
    });
    return this.followUp;
  }

  /** The interval's write: skipped while a write is under way, since what arrives during one waits (see push). */
  flushIfIdle(): Promise<void> {
    return this.running || this.pendingCalls.length === 0 ? Promise.resolve() : this.flush();
  }

  /** Writes the `owed` oldest events, then full batches while there are any. */
  private run(owed: number): Promise<void> {
    this.running = this.drain(owed).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Writes what is pending; what still fails is logged as lost. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    await this.flush();
    this.reportDrops();
    if (this.pendingCalls.length > 0) {
      this.log.error({ lost: this.pendingCalls.length }, 'metering events not written at shutdown');
      this.pendingCalls = new MeteringCalls();
    }
  }

  // A flush owes what was pending at its call, not what arrives during its writes (see push): under load,
  // chasing those would write a stream of small inserts until a write happened to find none.
  private async drain(owed: number): Promise<void> {
    this.reportDrops();
    while (this.pendingCalls.length > 0 && (owed > 0 || this.pendingCalls.length >= this.maxBatch)) {
      const batch = this.pendingCalls.takeOldest(this.maxBatch);
      owed -= batch.length;
      const unwritten = await this.write(batch);
      this.failing = unwritten.length > 0;
      if (this.failing) {
        this.pendingCalls.prepend(unwritten);
        this.dropOldestBeyondCap();
        return;
      }
    }
  }

  /** Returns the calls left unwritten by a failure worth retrying. */
  private async write(batch: MeteringCalls): Promise<MeteringCalls> {
    const start = performance.now();
    try {
      await batch.insert().execute(this.db);
      this.observer?.written(batch.length, (performance.now() - start) / 1000);
      return new MeteringCalls();
    } catch (err) {
      if (!isRejectedRow(err)) {
        this.observer?.failed();
        this.log.warn(
          { err, pending: this.pendingCalls.length + batch.length },
          'metering write failed; retrying later',
        );
        return batch;
      }
      if (batch.length > 1) return this.writeOneByOne(batch);
      this.observer?.dropped(1);
      this.log.error({ err, event: batch.at(0) }, 'metering event refused by the database: dropped');
      return new MeteringCalls();
    }
  }

  // One malformed event must neither sink nor hold back the rest of its batch.
  private async writeOneByOne(batch: MeteringCalls): Promise<MeteringCalls> {
    while (batch.length > 0) {
      const one = batch.takeOldest(1);
      if ((await this.write(one)).length > 0) {
        batch.prepend(one);
        return batch;
      }
    }
    return batch;
  }

  private dropOldestBeyondCap(): void {
    const excess = this.pendingCalls.length - this.maxPending;
    if (excess <= 0) return;
    this.pendingCalls.takeOldest(excess);
    this.dropped += excess;
    this.observer?.dropped(excess);
  }

  // Counted and reported once per write attempt rather than per event, so an outage does not flood the log.
  private reportDrops(): void {
    if (this.dropped === 0) return;
    this.log.error({ dropped: this.dropped }, 'metering buffer full: dropped the oldest events');
    this.dropped = 0;
  }
}
