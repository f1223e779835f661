import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';
import { reusableQuery } from './reusable-query.js';

// Both run on every read and every command while replicas are configured: built once, prepared per connection.
const writePosition = reusableQuery('write-position', ['agencyId', 'extensionId'], (db, p) =>
  db
    .selectFrom('write_positions')
    .select('lsn')
    .where('agency_id', '=', p.agencyId)
    .where('extension_id', '=', p.extensionId),
);
const recordPosition = reusableQuery('record-write-position', ['agencyId', 'extensionId'], (db, p) =>
  db
    .insertInto('write_positions')
    .values({ agency_id: p.agencyId, extension_id: p.extensionId, lsn: sql<string>`pg_current_wal_insert_lsn()` })
    .onConflict((oc) =>
      oc
        .columns(['agency_id', 'extension_id'])
        .doUpdateSet({ lsn: sql<string>`greatest(write_positions.lsn, excluded.lsn)` }),
    ),
);

/** A WAL position (`16/B374D848`) as a number, to compare positions read from different servers. */
export function walPosition(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

interface Sample {
  /** When the statement that read the position was sent (ms, monotonic clock). */
  sentAt: number;
  position: bigint;
}

/** An open replica: its handle and how to close it. */
export interface ReplicaHandle {
  db: Kysely<DB>;
  close(): Promise<void>;
}

interface Replica {
  database: ReplicaHandle;
  /** What the replica had replayed when last asked; undefined while it does not answer. */
  replayed: Sample | undefined;
}

export interface ReadReplicaOptions {
  /** A replica serves reads only while it has replayed what the primary had written this long ago. */
  maxLagMs: number;
  /** How often the primary's position and each replica's replay are read. */
  pollMs: number;
  logger: { error(obj: unknown, msg?: string): void };
}

/**
 * Routes reads to streaming replicas that are within the lag bound and have replayed the reading integration's own
 * last command, and everything else to the primary. The bound is judged from positions, not clocks: a replica is
 * within it when it has replayed the primary's position read at least `maxLagMs` after that bound began.
 */
export class ReadReplicas {
  private readonly samples: Sample[] = [];
  private readonly replicas: Replica[];
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private next = 0;

  constructor(
    private readonly primary: Kysely<DB>,
    replicas: readonly ReplicaHandle[],
    private readonly options: ReadReplicaOptions,
  ) {
    this.replicas = replicas.map((database) => ({ database, replayed: undefined }));
  }

  /** Polls until close(); the first poll is awaited, so reads can use replicas from the start. */
  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(
      () => void (this.polling ??= this.poll().finally(() => (this.polling = undefined))),
      this.options.pollMs,
    );
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
    await Promise.all(this.replicas.map((r) => r.database.close()));
  }

  /** The handle a read of this integration runs on. */
  async readerFor(agencyId: string, extensionId: string): Promise<Kysely<DB>> {
    const bound = this.positionAtLagBound();
    const fresh =
      bound === undefined ? [] : this.replicas.filter((r) => r.replayed !== undefined && r.replayed.position >= bound);
    if (fresh.length === 0) return this.primary;
    const [own] = await writePosition(this.primary, { agencyId, extensionId });
    const needed = own ? walPosition(own.lsn) : 0n;
    const ready = fresh.filter((r) => r.replayed!.position >= needed);
    if (ready.length === 0) return this.primary;
    return ready[this.next++ % ready.length].database.db;
  }

  /**
   * After a command committed: where the primary inserts WAL now, which is past that command's commit record. Not
   * pg_current_wal_lsn(), the position written out so far: under synchronous_commit = off a commit returns before its
   * record is written, and a replica that had replayed that far could still lack the command.
   */
  async recordWrite(agencyId: string, extensionId: string): Promise<void> {
    await recordPosition(this.primary, { agencyId, extensionId });
  }

  /** The oldest primary position read since the lag bound began: at least where the primary was at that instant. */
  private positionAtLagBound(): bigint | undefined {
    const since = performance.now() - this.options.maxLagMs;
    return this.samples.find((s) => s.sentAt >= since)?.position;
  }

  private async poll(): Promise<void> {
    const sentAt = performance.now();
    try {
      const { rows } = await sql<{ lsn: string }>`select pg_current_wal_insert_lsn()::text as lsn`.execute(
        this.primary,
      );
      this.samples.push({ sentAt, position: walPosition(rows[0].lsn) });
    } catch (err) {
      this.options.logger.error({ err }, 'reading the primary WAL position failed');
    }
    const keepSince = sentAt - this.options.maxLagMs - 10 * this.options.pollMs;
    while (this.samples.length > 1 && this.samples[0].sentAt < keepSince) this.samples.shift();
    await Promise.all(this.replicas.map((replica) => this.pollReplica(replica)));
  }

  private async pollReplica(replica: Replica): Promise<void> {
    const sentAt = performance.now();
    try {
      const { rows } = await sql<{ lsn: string | null }>`select pg_last_wal_replay_lsn()::text as lsn`.execute(
        replica.database.db,
      );
      const lsn = rows[0].lsn;
      replica.replayed = lsn ? { sentAt, position: walPosition(lsn) } : undefined;
    } catch (err) {
      if (replica.replayed)
        this.options.logger.error({ err }, 'a read replica stopped answering; its reads go to the primary');
      replica.replayed = undefined;
    }
  }
}
