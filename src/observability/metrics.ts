import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client';
import {
  OperationCounts,
  callSamples,
  durationSamples,
  idempotencySamples,
  refusalSamples,
  type Sample,
} from './operation-counts.js';

/** Every metric of the service starts with this; process and Node metrics keep prom-client's own names. */
const METRIC_PREFIX = 'extension_api_';

/** A metric computed from the operations' counters when scraped, in the shape prom-client's registry formats. */
class CollectedMetric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly samples: () => Sample[],
  ) {}

  get() {
    return { name: this.name, help: this.help, type: this.type, values: this.samples(), aggregator: 'sum' as const };
  }

  reset(): void {}
}

/**
 * Where a worker or another part of the service registers its own metrics, by name (prefixed with METRIC_PREFIX):
 * registering a name again returns the metric already there, so every instance of a worker shares one.
 * The seam for the outbox's depth and deliveries once webhooks exist.
 */
export interface MetricsRegistrar {
  counter<L extends string>(config: CounterConfiguration<L>): Counter<L>;
  gauge<L extends string>(config: GaugeConfiguration<L>): Gauge<L>;
  histogram<L extends string>(config: HistogramConfiguration<L>): Histogram<L>;
}

/** A buffer's writes (metering, audit), reported by the buffer. */
export interface BufferObserver {
  written(events: number, seconds: number): void;
  failed(): void;
  dropped(events: number): void;
}

/** What a database handle offers to be watched (src/db/database-handle.ts's Database fits it). */
export interface ObservedDatabase {
  engine: string;
  observe(observer: {
    query?(sql: string, durationMs: number, failed: boolean): void;
    connectionWait?(waitMs: number): void;
  }): () => void;
  poolStats?(): { total: number; idle: number; waiting: number; max: number };
}

const PREPARED = /^\/\* prepared:([\w-]+?)(?:-[\w-]{12})? \*\//;
const STATEMENT_KINDS = new Set([
  'select',
  'insert',
  'update',
  'delete',
  'with',
  'begin',
  'commit',
  'rollback',
  'savepoint',
  'release',
  'set',
  'explain',
]);

/** A bounded label for a statement: a prepared statement's name, else its first keyword. Never its parameters. */
export function statementLabel(sql: string): string {
  const prepared = PREPARED.exec(sql);
  if (prepared) return prepared[1];
  const keyword = /^\s*(\w+)/.exec(sql)?.[1].toLowerCase() ?? '';
  return STATEMENT_KINDS.has(keyword) ? keyword : 'other';
}

const SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Node's and the process's own metrics are per process, not per app: collected once, whatever number of apps a process builds. */
let processRegistry: Registry | undefined;

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * The service's Prometheus metrics (prom-client): calls by operation, status class and contract version, their
 * latency, refusals by error code, idempotency outcomes, token issuance, the database pool and statements, the
 * metering and audit buffers, workers, load shedding, and Node's process metrics. docs/operations.md says what each
 * means and when to alert. No label carries a request, patient or agency: only operations, codes and the like.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly operations = new Map<string, OperationCounts>();
  private readonly pendingBuffers = new Map<string, () => number>();

  constructor() {
    // From the start: the garbage-collection histogram counts the collections it observes.
    processMetrics();
    const all = () => this.operations.values();
    for (const metric of [
      new CollectedMetric(
        `${METRIC_PREFIX}requests_total`,
        "Calls of the contract's operations by operation, status class and contract version (none: refused before the version was read).",
        'counter',
        () => callSamples(all()),
      ),
      new CollectedMetric(
        `${METRIC_PREFIX}request_duration_seconds`,
        "Time from a call's arrival until its response was handed to the socket, by operation.",
        'histogram',
        () => durationSamples(`${METRIC_PREFIX}request_duration_seconds`, all()),
      ),
      new CollectedMetric(
        `${METRIC_PREFIX}refusals_total`,
        'Calls answered with an error, by operation and error code (rate limit, quota, cost budget, shedding and the rest).',
        'counter',
        () => refusalSamples(all()),
      ),
      new CollectedMetric(
        `${METRIC_PREFIX}idempotency_total`,
        'Commands by outcome: executed, replayed from a stored response, or refused as a conflicting reuse of a key.',
        'counter',
        () => idempotencySamples(all()),
      ),
    ]) {
      this.registry.registerMetric(metric as never);
    }
    const buffers = this.pendingBuffers;
    this.registrar.gauge({
      name: `${METRIC_PREFIX}buffer_pending_events`,
      help: 'Events held in memory by a buffer (metering, audit), waiting to be written.',
      labelNames: ['buffer'],
      collect() {
        for (const [buffer, pending] of buffers) this.set({ buffer }, pending());
      },
    });
  }

  /** The counters one operation's pipeline bumps; made once per operation. */
  operation(operationId: string): OperationCounts {
    let counts = this.operations.get(operationId);
    if (!counts) this.operations.set(operationId, (counts = new OperationCounts(operationId)));
    return counts;
  }

  readonly registrar: MetricsRegistrar = {
    counter: (config) => this.named(config, () => new Counter({ ...config, registers: [this.registry] })),
    gauge: (config) => this.named(config, () => new Gauge({ ...config, registers: [this.registry] })),
    histogram: (config) => this.named(config, () => new Histogram({ ...config, registers: [this.registry] })),
  };

  private named<M>(config: { name: string }, create: () => M): M {
    if (!config.name.startsWith(METRIC_PREFIX))
      throw new Error(`metric ${config.name} must be named ${METRIC_PREFIX}…`);
    return (this.registry.getSingleMetric(config.name) as M | undefined) ?? create();
  }

  /** Depth (read when scraped) and writes of one of the gateway's buffers. */
  buffer(name: 'metering' | 'audit', pending: () => number): BufferObserver {
    const labels = { buffer: name };
    this.pendingBuffers.set(name, pending);
    const flushes = this.registrar
      .histogram({
        name: `${METRIC_PREFIX}buffer_flush_duration_seconds`,
        help: 'Time of one batch write of a buffer.',
        labelNames: ['buffer'],
        buckets: SECONDS_BUCKETS,
      })
      .labels(labels);
    const written = this.registrar
      .counter({
        name: `${METRIC_PREFIX}buffer_written_events_total`,
        help: 'Events a buffer wrote to the database.',
        labelNames: ['buffer'],
      })
      .labels(labels);
    const failures = this.registrar
      .counter({
        name: `${METRIC_PREFIX}buffer_write_failures_total`,
        help: 'Batch writes of a buffer that failed and are retried.',
        labelNames: ['buffer'],
      })
      .labels(labels);
    const dropped = this.registrar
      .counter({
        name: `${METRIC_PREFIX}buffer_dropped_events_total`,
        help: 'Events a buffer dropped (refused by the database as data, or beyond its memory bound).',
        labelNames: ['buffer'],
      })
      .labels(labels);
    return {
      written(events, seconds) {
        written.inc(events);
        flushes.observe(seconds);
      },
      failed: () => failures.inc(),
      dropped: (events) => dropped.inc(events),
    };
  }

  /** Statements by kind and their latency, waits for a connection, and the pool's connections. The function returned stops watching. */
  database(database: ObservedDatabase): () => void {
    const statements = this.registrar.histogram({
      name: `${METRIC_PREFIX}db_query_duration_seconds`,
      help: 'Time of each database statement, by prepared statement name or first keyword.',
      labelNames: ['statement'],
      buckets: SECONDS_BUCKETS,
    });
    const failures = this.registrar.counter({
      name: `${METRIC_PREFIX}db_query_failures_total`,
      help: 'Database statements that failed, by prepared statement name or first keyword.',
      labelNames: ['statement'],
    });
    const waits = this.registrar.histogram({
      name: `${METRIC_PREFIX}db_connection_wait_seconds`,
      help: 'Time a request waited for a connection of the PostgreSQL pool.',
      buckets: SECONDS_BUCKETS,
    });
    const stats = database.poolStats?.bind(database);
    if (stats) {
      this.registrar.gauge({
        name: `${METRIC_PREFIX}db_pool_connections`,
        help: 'Connections of the PostgreSQL pool by state (idle, busy), its maximum (max), and requests waiting for one (waiting).',
        labelNames: ['state'],
        collect() {
          const { total, idle, waiting, max } = stats();
          this.set({ state: 'idle' }, idle);
          this.set({ state: 'busy' }, total - idle);
          this.set({ state: 'waiting' }, waiting);
          this.set({ state: 'max' }, max);
        },
      });
    }
    return database.observe({
      query(sql, durationMs, failed) {
        const statement = statementLabel(sql);
        statements.observe({ statement }, durationMs / 1000);
        if (failed) failures.inc({ statement });
      },
      connectionWait: (waitMs) => waits.observe(waitMs / 1000),
    });
  }

  /** Tokens issued by PHI mode, and refused token requests by error code (src/identity/client-credentials.ts). */
  tokens() {
    const issued = this.registrar.counter({
      name: `${METRIC_PREFIX}tokens_issued_total`,
      help: 'Access tokens issued by the token endpoint, by PHI mode.',
      labelNames: ['phi_mode'],
    });
    const refused = this.registrar.counter({
      name: `${METRIC_PREFIX}token_failures_total`,
      help: 'Token requests refused, by error code (bad credentials, failure limits, PHI mode denied, invalid requests).',
      labelNames: ['code'],
    });
    return {
      issued: (phiMode: string) => issued.inc({ phi_mode: phiMode }),
      refused: (code: string) => refused.inc({ code }),
    };
  }

  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;

  /** The exposition text: this app's metrics, then the process's. */
  async text(): Promise<string> {
    return `${await this.registry.metrics()}\n${await processMetrics().metrics()}`;
  }
}
