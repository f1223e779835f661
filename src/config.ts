import { resolve } from 'node:path';

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
  db: { poolMax: number; connectTimeoutMs: number; statementTimeoutMs: number };
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

/** Reads and validates the environment once; everything else receives a Config. */
export function loadConfig(env: Env = process.env): Config {
  return {
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 3000),
    logLevel: env.LOG_LEVEL || 'info',
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.DATA_DIR || './data'),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1_048_576, 1),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1),
    handlerTimeoutMs: integer(env, 'HANDLER_TIMEOUT_MS', 10_000, 1),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 1),
    db: {
      poolMax: integer(env, 'DB_POOL_MAX', 10, 1),
      connectTimeoutMs: integer(env, 'DB_CONNECT_TIMEOUT_MS', 5_000, 1),
      statementTimeoutMs: integer(env, 'DB_STATEMENT_TIMEOUT_MS', 15_000, 1),
    },
  };
}
