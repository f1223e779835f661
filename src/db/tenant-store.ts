import { sql, type Compilable, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { DB } from './schema.js';
import type { PhiMode, Principal } from '../shared/principal.js';
import { reusableQuery } from './reusable-query.js';
import type { AuditTrail } from '../shared/audit-trail.js';
import { TenantPseudonyms } from './pseudonyms.js';
import type { TraceContext } from '../observability/call-trace.js';

/** Whose data a store reads, and in which PHI mode: a Principal is one. */
type Tenant = Pick<Principal, 'agencyId' | 'phiMode'>;

/** Tables whose rows belong to one agency (keyed by agency_id). */
type TenantTable = { [T in keyof DB]: DB[T] extends { agency_id: unknown } ? T : never }[keyof DB];

/**
 * What a request reads through, bound by the gateway to the caller's agency and PHI mode: repositories take the store,
 * never an agency id, and record on the call's audit trail the ids they read.
 */
export class TenantStore {
  readonly agencyId: string;
  readonly phiMode: PhiMode;
  private boundPseudonyms: TenantPseudonyms | undefined;

  constructor(
    readonly db: Kysely<DB>,
    tenant: Tenant,
    readonly audit: AuditTrail,
  ) {
    this.agencyId = tenant.agencyId;
    this.phiMode = tenant.phiMode;
  }

  /** The agency's rows of a table, and no other agency's (the column qualified, so that joins stay unambiguous). */
  selectFrom<T extends TenantTable>(table: T): SelectQueryBuilder<DB, T, object> {
    const rows = this.db.selectFrom(table) as unknown as SelectQueryBuilder<DB, TenantTable, object>;
    return rows.where(sql.ref(`${table}.agency_id`), '=', this.agencyId) as never;
  }

  /** Surrogate handles of this agency, on this store's connection. */
  get pseudonyms(): TenantPseudonyms {
    return (this.boundPseudonyms ??= new TenantPseudonyms(this.db, this.agencyId));
  }

  /** Puts what the call said about itself beyond resource ids on its audit record (a governed query run's query and input). */
  auditDetails(details: Record<string, unknown>): void {
    this.audit.details = details;
  }

  /** Puts the ids of resources a repository read or wrote on the call's audit record, each once. */
  audited(ids: readonly string[]): void {
    const recorded = this.audit.resourceIds;
    if (recorded.length === 0) this.audit.resourceIds = [...ids];
    else for (const id of ids) if (!recorded.includes(id)) recorded.push(id);
  }
}

/**
 * A reusableQuery (src/db/reusable-query.ts) over one agency's rows: `build` gets a store bound to a placeholder
 * agency, and each run binds the caller's.
 */
export function reusableTenantQuery<P extends string, Row>(name: string, names: readonly P[], build: (store: TenantStore, params: Record<P, string>) => Compilable<Row>) {
  const query = reusableQuery(name, ['agencyId', ...names], (db, params) =>
    build(new TenantStore(db, { agencyId: params.agencyId, phiMode: 'phi' }, { resourceType: null, resourceIds: [] }), params),
  );
  return (store: TenantStore, values: Record<P, string | null>): Promise<Row[]> => query(store.db, { ...values, agencyId: store.agencyId });
}

/** A change's event, for the outbox that webhooks deliver from. */
interface PlatformEvent {
  type: string;
  data: Record<string, unknown>;
}

/**
 * Writes a command's events in its transaction, so that an event exists exactly when its change committed; with the
 * trace of the call that emitted it, when that call was traced, for its deliveries to continue.
 */
export type EventOutbox = (trx: Transaction<DB>, agencyId: string, event: PlatformEvent, emittedBy?: TraceContext) => Promise<void>;

/**
 * A command's store: its `db` is the transaction that also holds the command's audit, metering and idempotency
 * records, typed so that a write outside it does not compile.
 */
export class CommandStore extends TenantStore {
  declare readonly db: Transaction<DB>;

  constructor(
    db: Transaction<DB>,
    tenant: Tenant,
    audit: AuditTrail,
    private readonly outbox: EventOutbox | undefined,
    /** The trace of the call running the command (read only when an event is emitted); undefined with tracing off or outside a call. */
    private readonly trace?: { traceContext(): TraceContext },
  ) {
    super(db, tenant, audit);
  }

  /** Records an event of this command's change, committed with it or not at all. */
  emit(event: PlatformEvent): Promise<void> {
    if (!this.outbox) throw new Error(`No event outbox is configured: ${event.type} cannot be recorded.`);
    return this.outbox(this.db, this.agencyId, event, this.trace?.traceContext());
  }
}
