import { pino, type Logger, type LoggerOptions } from 'pino';
import { sqlState } from './sql-state.js';

interface DatabaseErrorFields {
  message: string;
  name: string;
  stack?: string;
  schema?: string;
  table?: string;
  column?: string;
  dataType?: string;
  constraint?: string;
}

/** What a database error may tell a log: its kind and the schema objects involved, which come from the catalog. */
const KEPT = ['code', 'severity', 'routine', 'schema', 'table', 'column', 'dataType', 'constraint'] as const;

/**
 * PostgreSQL quotes values in its messages (`invalid input syntax for type integer: "…"`), and its `detail`, `where`
 * and `internalQuery` quote rows, JSON text and statements: a request's values, PHI among them. Quoted spans are
 * kept only when they name a schema object of the error's own fields.
 */
function redactedMessage(err: DatabaseErrorFields): string {
  const named = new Set([err.schema, err.table, err.column, err.dataType, err.constraint].filter(Boolean));
  return String(err.message).replace(/"([^"]*)"/g, (quoted, inner: string) => (named.has(inner) ? quoted : '"…"'));
}

function redactedDatabaseError(err: DatabaseErrorFields & Record<string, unknown>, cause: unknown): Error {
  const safe = new Error(redactedMessage(err), cause === undefined ? undefined : { cause });
  safe.name = err.name;
  const frames = (err.stack ?? '').split('\n').filter((line) => line.startsWith('    at '));
  safe.stack = [`${err.name}: ${safe.message}`, ...frames].join('\n');
  for (const key of KEPT) if (err[key] !== undefined) Object.assign(safe, { [key]: err[key] });
  return safe;
}

/** The error with every database error of its cause chain redacted; others are kept as they are. */
function withoutDatabaseValues(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error) && !(typeof err === 'object' && err !== null && 'message' in err)) return err;
  const error = err as Error;
  const cause = depth < 8 ? withoutDatabaseValues(error.cause, depth + 1) : undefined;
  if (sqlState(error) !== undefined)
    return redactedDatabaseError(error as unknown as DatabaseErrorFields & Record<string, unknown>, cause);
  if (cause === error.cause) return error;
  const copy = Object.assign(Object.create(Object.getPrototypeOf(error) as object) as Error, error);
  return Object.defineProperties(copy, {
    message: { value: error.message, enumerable: false },
    stack: { value: error.stack, enumerable: false },
    cause: { value: cause, enumerable: false },
  });
}

/** pino's error serializer, over the error with its database errors redacted. */
export const safeErrorSerializers = {
  err: (err: unknown) => pino.stdSerializers.err(withoutDatabaseValues(err) as Error),
};

/**
 * A process's root logger options: the serializer, and a hook for an error logged as the first argument
 * (`log.error(err)`), whose message pino would otherwise copy into `msg`.
 */
export const safeLoggerOptions: Pick<LoggerOptions, 'serializers' | 'hooks'> = {
  serializers: safeErrorSerializers,
  hooks: {
    logMethod(args, method) {
      const [first, ...rest] = args as unknown[];
      if (sqlState(first) === undefined) return method.apply(this, args);
      const message = typeof rest[0] === 'string' ? rest : [(withoutDatabaseValues(first) as Error).message];
      return method.apply(this, [{ err: first }, ...message] as Parameters<typeof method>);
    },
  },
};

/** A logger that never writes a value a database error quotes under `err`; every child of it keeps that. */
export function redactingDatabaseValues(logger: Logger): Logger {
  return logger.child({}, { serializers: safeErrorSerializers });
}
