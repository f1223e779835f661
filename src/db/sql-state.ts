/**
 * The SQLSTATE of a database error: node-postgres and PGlite both put it in `code`, and their error classes differ.
 * A socket's error also has a `code` (EPIPE looks like a SQLSTATE), and a `syscall`.
 */
export function sqlState(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'syscall' in err) return undefined;
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export const SQLSTATE = {
  /** lock_timeout expired, or NOWAIT found the row locked. */
  lockNotAvailable: '55P03',
  /** A write in a read-only transaction: on a standby, or on a primary being demoted. */
  readOnlyTransaction: '25006',
} as const;

/** Class 22 (data exception) or 23 (integrity constraint violation): the row itself is refused, so retrying cannot help. */
export function isRejectedRow(err: unknown): boolean {
  const code = sqlState(err);
  return code !== undefined && (code.startsWith('22') || code.startsWith('23'));
}

/**
 * Connection refused or lost, pool exhausted past its wait, server out of resources or shutting down, no writable
 * host or a write reaching a read-only one (a failover under way), a statement written to a connection the server
 * has just closed (EPIPE): retry later.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = sqlState(err);
  if (code !== undefined) {
    return (
      code.startsWith('08') ||
      code.startsWith('53') ||
      code === '57P01' ||
      code === '57P02' ||
      code === '57P03' ||
      code === SQLSTATE.readOnlyTransaction
    );
  }
  const message = err instanceof Error ? err.message : '';
  const errno = (err as { code?: unknown } | null)?.code;
  return (
    /timeout exceeded when trying to connect|Connection terminated/.test(message) ||
    errno === 'ECONNREFUSED' ||
    errno === 'ECONNRESET' ||
    errno === 'EPIPE'
  );
}

/** statement_timeout cancelled the query. */
export const isStatementTimeout = (err: unknown): boolean => sqlState(err) === '57014';
