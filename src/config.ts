import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { decodeKeyText } from './identity/key-encryption.js';
import type { SecretsKeySettings } from './identity/key-encryption-keys.js';
import type { PressureThresholds } from './observability/pressure.js';
import { tracingExporter, type TracingExporter } from './observability/tracing-settings.js';

export interface Config {
  host: string;
  port: number;
  logLevel: string;
  databaseUrl: string | undefined;
  dataDir: string;
  bodyLimitBytes: number;
  requestTimeoutMs: number;
  handlerTimeoutMs: number;
  shutdownGraceMs: number;
  db: {
    poolMax: number;
    connectTimeoutMs: number;
    statementTimeoutMs: number;
    pooler: DatabasePooler;
    readUrls: string[];
    readMaxLagMs: number;
  };
  /** `iss` of access tokens and the base of the OAuth metadata URLs. */
  tokenIssuer: string;
  /** `aud` of access tokens. */
  tokenAudience: string;
  tokenTtlSeconds: number;
  /** How long an instance may use a cached extension policy; bounds how late disabling and revocation take effect. */
  authStateTtlMs: number;
  /** The proxies whose X-Forwarded-For is believed (addresses, CIDR ranges, proxy-addr's named ranges); false: none. */
  trustProxy: false | string[];
  secretsKey: SecretsKeySettings;
  /** The workers of src/workers/registry.ts the server runs: a deployment running one as its own process leaves it out. */
  inProcessWorkers: 'all' | string[];
  /** Prometheus metrics at /metrics: on the main port, or on their own port when `port` is set. */
  metrics: { enabled: boolean; port: number | undefined };
  /** Past these the partition answers 503 PLATFORM_SERVICE_UNAVAILABLE (src/observability/pressure.ts). */
  pressure: PressureThresholds;
  /** OpenTelemetry traces: off (undefined) unless the standard OTEL_* variables ask for an exporter. */
  tracing: TracingExporter | undefined;
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

const MAX_TOKEN_TTL_SECONDS = 86_400;

/** `transaction`: DATABASE_URL names a pooler in transaction mode (PgBouncer), so no connection keeps session state. */
export type DatabasePooler = 'none' | 'transaction';

export function databasePooler(env: Env): DatabasePooler {
  const pooler = env.DATABASE_POOLER || 'none';
  if (pooler !== 'none' && pooler !== 'transaction')
    throw new Error(`DATABASE_POOLER must be none or transaction, got "${pooler}"`);
  return pooler;
}

/** Streaming replicas for reads, comma-separated (connection strings hold no commas); only beside a primary. */
function readUrls(env: Env, databaseUrl: string | undefined): string[] {
  const urls = (env.DATABASE_READ_URL ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter(Boolean);
  if (urls.length > 0 && !databaseUrl)
    throw new Error('DATABASE_READ_URL needs DATABASE_URL: replicas serve reads of a PostgreSQL primary');
  return urls;
}

function tokenTtlSeconds(env: Env): number {
  const ttl = integer(env, 'TOKEN_TTL_SECONDS', 900, 60);
  if (ttl > MAX_TOKEN_TTL_SECONDS)
    throw new Error(`TOKEN_TTL_SECONDS must be at most ${MAX_TOKEN_TTL_SECONDS}, got "${ttl}"`);
  return ttl;
}

/** An absolute http(s) URL without query or fragment (RFC 8414 issuer), without a trailing slash. */
function issuerUrl(env: Env, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an absolute URL, got "${raw}"`);
  }
  if (!/^https?:$/.test(url.protocol) || url.search || url.hash) {
    throw new Error(`${name} must be an http(s) URL without query or fragment, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrRange(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/**
 * Only a list of proxies: `true` would believe whatever X-Forwarded-For a client sends, and Fastify trusts no peer on a
 * bare hop count, since it cannot tell a proxy from a client that sends enough hops.
 */
function trustProxy(env: Env): false | string[] {
  const raw = env.TRUST_PROXY ?? '';
  if (raw === '' || raw === 'false') return false;
  if (raw === 'true')
    throw new Error(
      "TRUST_PROXY=true would believe any X-Forwarded-For a client sends; list the proxies' addresses or CIDR ranges instead",
    );
  const entries = raw.split(',').map((entry) => entry.trim());
  if (!entries.every(isAddressOrRange)) {
    throw new Error(
      `TRUST_PROXY must be false or a comma-separated list of proxy addresses or CIDR ranges (or loopback, linklocal, uniquelocal), got "${raw}"`,
    );
  }
  return entries;
}

function secretsKey(env: Env, databaseUrl: string | undefined, dataDir: string): SecretsKeySettings {
  if (env.SECRETS_KEY && env.SECRETS_KEY_FILE) throw new Error('set SECRETS_KEY or SECRETS_KEY_FILE, not both');
  const previous = (env.SECRETS_KEY_PREVIOUS ?? '')
    .split(',')
    .filter((item) => item.trim() !== '')
    .map((item, i) => decodeKeyText(item, `SECRETS_KEY_PREVIOUS (item ${i + 1})`));
  if (env.SECRETS_KEY)
    return { current: { from: 'SECRETS_KEY', key: decodeKeyText(env.SECRETS_KEY, 'SECRETS_KEY') }, previous };
  if (env.SECRETS_KEY_FILE)
    return { current: { from: 'SECRETS_KEY_FILE', path: resolve(env.SECRETS_KEY_FILE) }, previous };
  // Beside the data directory, not in it: whoever copies or backs up the directory must not get the key with it.
  return {
    current: databaseUrl ? { from: 'none' } : { from: 'default file', path: `${dataDir}.secrets-key` },
    previous,
  };
}

/** IN_PROCESS_WORKERS: unset or `all`, `none`, or a comma-separated list of names, checked against the registry at start. */
function inProcessWorkers(env: Env): 'all' | string[] {
  const raw = (env.IN_PROCESS_WORKERS ?? '').trim();
  if (raw === '' || raw === 'all') return 'all';
  if (raw === 'none') return [];
  return raw
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

function metrics(env: Env): Config['metrics'] {
  const raw = (env.METRICS ?? 'on').trim();
  if (raw !== 'on' && raw !== 'off') throw new Error(`METRICS must be on or off, got "${raw}"`);
  const port = env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 1) : undefined;
  if (port !== undefined && port > 65_535) throw new Error(`METRICS_PORT must be a port number, got "${port}"`);
  return { enabled: raw === 'on', port };
}

function pressure(env: Env): PressureThresholds {
  const heapUsedPercent = integer(env, 'SHED_HEAP_USED_PERCENT', 90);
  if (heapUsedPercent > 100) throw new Error(`SHED_HEAP_USED_PERCENT must be at most 100, got "${heapUsedPercent}"`);
  return {
    eventLoopDelayMs: integer(env, 'SHED_EVENT_LOOP_DELAY_MS', 200),
    heapUsedPercent,
    poolWaitMs: integer(env, 'SHED_POOL_WAIT_MS', 1_000),
    sampleIntervalMs: 1_000,
    retryAfterSeconds: integer(env, 'SHED_RETRY_AFTER_SECONDS', 2, 1),
  };
}

/** Reads and validates the environment once; everything else receives a Config. */
export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000);
  const tokenIssuer = issuerUrl(env, 'TOKEN_ISSUER', `http://localhost:${port}`);
  const databaseUrl = env.DATABASE_URL || undefined;
  const dataDir = resolve(env.DATA_DIR || './data');
  return {
    host: env.HOST || '127.0.0.1',
    port,
    logLevel: env.LOG_LEVEL || 'info',
    databaseUrl,
    dataDir,
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1_048_576, 1),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1),
    handlerTimeoutMs: integer(env, 'HANDLER_TIMEOUT_MS', 10_000, 1),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 1),
    db: {
      poolMax: integer(env, 'DB_POOL_MAX', 10, 1),
      connectTimeoutMs: integer(env, 'DB_CONNECT_TIMEOUT_MS', 5_000, 1),
      statementTimeoutMs: integer(env, 'DB_STATEMENT_TIMEOUT_MS', 15_000, 1),
      pooler: databasePooler(env),
      readUrls: readUrls(env, databaseUrl),
      readMaxLagMs: integer(env, 'DB_READ_MAX_LAG_MS', 2_000, 50),
    },
    tokenIssuer,
    tokenAudience: env.TOKEN_AUDIENCE || `${tokenIssuer}/api/v1/ext`,
    tokenTtlSeconds: tokenTtlSeconds(env),
    authStateTtlMs: integer(env, 'AUTH_STATE_TTL_MS', 5_000),
    trustProxy: trustProxy(env),
    secretsKey: secretsKey(env, databaseUrl, dataDir),
    inProcessWorkers: inProcessWorkers(env),
    metrics: metrics(env),
    pressure: pressure(env),
    tracing: tracingExporter(env),
  };
}

/**
 * The server's Config. On PostgreSQL, processes share the database and accept each other's tokens, so they must
 * name one issuer: a default made of each process's own port would differ between them.
 */
export function loadServerConfig(env: Env = process.env): Config {
  if (env.DATABASE_URL && !env.TOKEN_ISSUER) {
    throw new Error(
      'TOKEN_ISSUER must be set when DATABASE_URL is: the public base URL that every server process names as issuer (e.g. https://api.agency.example)',
    );
  }
  return loadConfig(env);
}

/** What openDatabase needs of the configuration, the same for the server, workers and scripts. */
export function databaseOptions(config: Config) {
  const { databaseUrl, dataDir, db } = config;
  return { databaseUrl, dataDir, ...db };
}
