import type { AuditBuffer } from '../gateway/audit.js';
import type { MeteringBuffer } from '../gateway/core/metering.js';
import { periodic } from './periodic.js';
import type { Worker } from './worker.js';

/**
 * The buffers' interval writes, also their retry after a failed write; stopping writes what they still hold.
 * In-process only: they flush the memory of the server that filled them.
 */
export function meteringFlusher(metering: MeteringBuffer, intervalMs = 1_000): Worker {
  return periodic({
    name: 'metering-flush',
    intervalMs,
    run: () => metering.flushIfIdle(),
    drain: () => metering.close(),
  });
}

export function auditFlusher(audit: AuditBuffer, intervalMs = 1_000): Worker {
  return periodic({ name: 'audit-flush', intervalMs, run: () => audit.flush(), drain: () => audit.close() });
}
