import {
  sql,
  type AliasedExpression,
  type Compilable,
  type DeleteQueryBuilder,
  type DeleteResult,
  type Expression,
  type Insertable,
  type InsertQueryBuilder,
  type InsertResult,
  type Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryCreator,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  type SelectQueryBuilder,
  type SqlBool,
  type Transaction,
  type UpdateQueryBuilder,
  type UpdateResult,
} from 'kysely';
import type { DB } from './schema.js';
import type { PhiMode, Principal } from '../shared/principal.js';
import { asPrepared, reusableQuery } from './reusable-query.js';
import type { AuditTrail } from '../shared/audit-trail.js';
import { TenantPseudonyms } from './pseudonyms.js';
import type { TraceContext } from '../observability/call-trace.js';

/** Whose data a store reads, and in which PHI mode: a Principal is one. */
type Tenant = Pick<Principal, 'agencyId' | 'phiMode'>;

/** Tables whose rows belong to one agency (keyed by agency_id). */
type TenantTable = { [T in keyof DB]: DB[T] extends { agency_id: unknown } ? T : never }[keyof DB];

/** A row of a tenant table as a repository writes it: the store adds the agency. */
export type TenantInsert<T extends TenantTable> = Omit<Insertable<DB[T]>, 'agency_id'>;

/** The store's handle, for reusableTenantQuery below: a module-private door, not a property callers could reach. */
let handleOf: (store: TenantStore) => Kysely<DB>;

/** The name a table is referred to by in a query: the table's own, or its alias after `as`. */
const nameIn = (from: string): string => from.split(' as ').at(-1)!;

/**
 * The tables whose rows are resources an audit record names, and what names them: every read through the store
 * names the rows it returned, and with 'reads and writes' every insert the rows it wrote and every update or delete the rows
 * it returned. Allocations are named when read only: an import writes thousands, and names their file and payments.
 */
const AUDITED: Partial<Record<TenantTable, 'reads' | 'reads and writes'>> = {
  patients: 'reads and writes',
  referrals: 'reads and writes',
  intakes: 'reads and writes',
  visits: 'reads and writes',
  physician_orders: 'reads and writes',
  tasks: 'reads and writes',
  working_collections: 'reads and writes',
  working_collection_rows: 'reads and writes',
  query_tokens: 'reads and writes',
  era_files: 'reads and writes',
  remittances: 'reads and writes',
  remittance_allocations: 'reads',
  hhvbp_imports: 'reads and writes',
  proposals: 'reads and writes',
};

const auditedReads = (from: string): boolean => AUDITED[from.split(' as ')[0] as TenantTable] !== undefined;
const auditedWrites = (table: TenantTable): boolean => AUDITED[table] === 'reads and writes';

const idsOf = (rows: readonly unknown[]): string[] =>
  rows.flatMap((row) => (typeof (row as { id?: unknown }).id === 'string' ? [(row as { id: string }).id] : []));

/** Calls `returned` with a query's result, once it ran: how the store learns what a read disclosed or a write wrote. */
class OnReturn implements KyselyPlugin {
  constructor(private readonly returned: (result: QueryResult<UnknownRow>) => void) {}

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    return node;
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.returned(result);
    return result;
  }
}

/**
 * What a request reads through, bound by the gateway to the caller's agency and PHI mode: repositories take the store,
 * never an agency id, and the store puts on the call's audit trail the ids its reads return.
 * Every query it builds is scoped to the agency; its handle on the whole database is private, reachable only
 * through `unscoped`, which names why a caller needs every agency's rows.
 */
export class TenantStore {
  readonly agencyId: string;
  readonly phiMode: PhiMode;
  readonly #db: Kysely<DB>;
  /** Names on the audit record the rows an audited read (or write) returned. */
  protected readonly auditReturned = new OnReturn(({ rows }) => this.record(idsOf(rows)));
  private boundPseudonyms: TenantPseudonyms | undefined;

  constructor(
    db: Kysely<DB>,
    tenant: Tenant,
    readonly audit: AuditTrail,
  ) {
    this.#db = db;
    this.agencyId = tenant.agencyId;
    this.phiMode = tenant.phiMode;
  }

  /**
   * The agency's rows of a table (or `table as alias`), and no other agency's (the column qualified, so that joins
   * stay unambiguous). Correlated subqueries go through it too: they then refer to the outer query's tables by `sql.ref`.
   * A read of an audited table names on the call's audit record the id of every row it returns.
   */
  selectFrom<T extends TenantTable>(table: T): SelectQueryBuilder<DB, T, object>;
  selectFrom<T extends TenantTable, A extends string>(
    table: `${T} as ${A}`,
  ): SelectQueryBuilder<DB & { [K in A]: DB[T] }, A, object>;
  selectFrom(table: string): SelectQueryBuilder<DB, TenantTable, object> {
    const rows = this.lookupFrom(table as TenantTable);
    return auditedReads(table) ? rows.withPlugin(this.auditReturned) : rows;
  }

  /**
   * As selectFrom, for rows read to check or match, never served: whether referenced ids exist, which charts an ERA
   * claim names. The audit record does not name them (it names what the call then wrote or returned).
   */
  lookupFrom<T extends TenantTable>(table: T): SelectQueryBuilder<DB, T, object>;
  lookupFrom<T extends TenantTable, A extends string>(
    table: `${T} as ${A}`,
  ): SelectQueryBuilder<DB & { [K in A]: DB[T] }, A, object>;
  lookupFrom(table: string): SelectQueryBuilder<DB, TenantTable, object> {
    const rows = this.#db.selectFrom(table as TenantTable) as unknown as SelectQueryBuilder<DB, TenantTable, object>;
    return rows.where(this.ofAgency(nameIn(table)));
  }

  /**
   * The condition that a joined table's row (by name or alias) is this agency's: the tenant join, for every table
   * after the first (`join.on(store.ofAgency('episodes')).onRef(...)`).
   */
  ofAgency(table: string): Expression<SqlBool> {
    return sql<SqlBool>`${sql.ref(`${table}.agency_id`)} = ${this.agencyId}`;
  }

  /** Rows of a derived table (a subquery built from this store's own selects, aliased with `.as`). */
  selectFromRows<A extends string, Row>(
    rows: AliasedExpression<Row, A>,
  ): SelectQueryBuilder<DB & { [K in A]: Row }, A, object> {
    return this.#db.selectFrom(rows as never) as never;
  }

  /** A select of expressions only (each built from this store's selects): `selectNoFrom(jsonObjectFrom(chart).as('chart'))`. */
  readonly selectNoFrom: QueryCreator<DB>['selectNoFrom'] = ((selection: never) =>
    this.#db.selectNoFrom(selection)) as never;

  /** Runs `query` (a read built from this store) in a transaction of its own under a statement timeout. */
  readWithin<Row>(timeoutMs: number, query: Compilable<Row>): Promise<Row[]> {
    return this.#db.transaction().execute(async (trx) => {
      await sql`set local statement_timeout = ${sql.lit(timeoutMs)}`.execute(trx);
      return (await trx.executeQuery(query.compile())).rows;
    });
  }

  /**
   * The one escape from the agency: the handle on every agency's rows. `why` says what cross-agency work needs it, so
   * that each use is found (`grep -rn "unscoped("`) and justified where it stands.
   */
  unscoped(why: string): Kysely<DB> {
    if (why.trim() === '') throw new Error("unscoped(why): say why this needs every agency's rows");
    return this.#db;
  }

  static {
    handleOf = (store) => store.#db;
  }

  /** Surrogate handles of this agency, on this store's connection. */
  get pseudonyms(): TenantPseudonyms {
    return (this.boundPseudonyms ??= new TenantPseudonyms(this.#db, this.agencyId));
  }

  /** Puts what the call said about itself beyond resource ids on its audit record (a governed query run's query and input). */
  auditDetails(details: Record<string, unknown>): void {
    this.audit.details = details;
  }

  /**
   * Names on the audit record resources the call disclosed by reference rather than as rows it read or wrote: the
   * patients a working collection's rows name, the existing chart a referral links to.
   */
  auditReferences(ids: readonly string[]): void {
    this.record(ids);
  }

  /** Takes off the audit record rows a read returned but the call does not serve (the row that shows a next page exists). */
  notServed(rows: readonly unknown[]): void {
    const withdrawn = new Set(idsOf(rows));
    if (withdrawn.size > 0) this.audit.resourceIds = this.audit.resourceIds.filter((id) => !withdrawn.has(id));
  }

  /** Puts ids on the call's audit record, each once, in the order first named. */
  protected record(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const recorded = this.audit.resourceIds;
    if (recorded.length === 0) this.audit.resourceIds = [...ids];
    else for (const id of ids) if (!recorded.includes(id)) recorded.push(id);
  }
}

/**
 * A reusableQuery (src/db/reusable-query.ts) over one agency's rows: `build` gets a store bound to a placeholder
 * agency, and each run binds the caller's.
 */
export function reusableTenantQuery<P extends string, Row>(
  name: string,
  names: readonly P[],
  build: (store: TenantStore, params: Record<P, string>) => Compilable<Row>,
  /** For a read that serves resources: the id each row names on the audit record (a prepared text runs outside selectFrom's auditing). */
  audits?: (row: Row) => string | undefined,
) {
  const query = reusableQuery(name, ['agencyId', ...names], (db, params) =>
    build(
      new TenantStore(db, { agencyId: params.agencyId, phiMode: 'phi' }, { resourceType: null, resourceIds: [] }),
      params,
    ),
  );
  return async (store: TenantStore, values: Record<P, string | null>): Promise<Row[]> => {
    const rows = await query(handleOf(store), { ...values, agencyId: store.agencyId });
    if (audits) store.auditReferences(rows.flatMap((row) => audits(row) ?? []));
    return rows;
  };
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
export type EventOutbox = (
  trx: Transaction<DB>,
  agencyId: string,
  events: readonly PlatformEvent[],
  emittedBy?: TraceContext,
) => Promise<void>;

/**
 * A command's store: it writes, scoped to the agency as its reads are, in the transaction that also holds the
 * command's audit, metering and idempotency records; only a command's store writes, so a write outside one does not compile.
 */
export class CommandStore extends TenantStore {
  readonly #trx: Transaction<DB>;
  /** What names each audited insert's rows, for insertTogether, which runs inserts as one statement. */
  readonly #inserted = new WeakMap<object, (result?: QueryResult<UnknownRow>) => void>();

  constructor(
    trx: Transaction<DB>,
    tenant: Tenant,
    audit: AuditTrail,
    private readonly outbox: EventOutbox | undefined,
    /** The trace of the call running the command (read only when an event is emitted); undefined with tracing off or outside a call. */
    private readonly trace?: { traceContext(): TraceContext },
  ) {
    super(trx, tenant, audit);
    this.#trx = trx;
  }

  /**
   * Inserts rows of this agency: `values` takes them without agency_id, which the store adds. Once the insert ran, an
   * audited table's rows are named on the audit record (by the ids inserted, returned or not).
   */
  insertInto<T extends TenantTable>(table: T) {
    const into = this.#trx.insertInto(table);
    return {
      values: (rows: TenantInsert<T> | readonly TenantInsert<T>[]): InsertQueryBuilder<DB, T, InsertResult> => {
        const all: readonly TenantInsert<T>[] = Array.isArray(rows) ? rows : [rows as TenantInsert<T>];
        const insert = into.values(all.map((row) => ({ ...row, agency_id: this.agencyId })) as never);
        if (!auditedWrites(table)) return insert;
        // The rows it returned when it returns some, none when a conflict skipped them all, else all it was given.
        const name = (result?: QueryResult<UnknownRow>) => {
          if (result?.rows.length) this.record(idsOf(result.rows));
          else if (result?.numAffectedRows !== 0n) this.record(idsOf(all));
        };
        const named = insert.withPlugin(new OnReturn(name));
        this.#inserted.set(named, name);
        return named;
      },
    };
  }

  /** Updates this agency's rows of a table, and no other agency's; an audited table's rows it returns are named. */
  updateTable<T extends TenantTable>(table: T): UpdateQueryBuilder<DB, T, T, UpdateResult> {
    const rows = (
      this.#trx.updateTable(table) as unknown as UpdateQueryBuilder<DB, TenantTable, TenantTable, UpdateResult>
    ).where(this.ofAgency(table));
    return (auditedWrites(table) ? rows.withPlugin(this.auditReturned) : rows) as never;
  }

  /** Deletes this agency's rows of a table, and no other agency's; an audited table's rows it returns are named. */
  deleteFrom<T extends TenantTable>(table: T): DeleteQueryBuilder<DB, T, DeleteResult> {
    const rows = (this.#trx.deleteFrom(table) as unknown as DeleteQueryBuilder<DB, TenantTable, DeleteResult>).where(
      this.ofAgency(table),
    );
    return (auditedWrites(table) ? rows.withPlugin(this.auditReturned) : rows) as never;
  }

  /**
   * Several inserts (each from `insertInto`) as one statement, in one round trip: each is a data-modifying WITH
   * clause, all run, and foreign keys are checked at the end of the statement. `name` prepares it (asPrepared).
   */
  async insertTogether(name: string, inserts: readonly Compilable<unknown>[]): Promise<void> {
    const statement = inserts.reduce<QueryCreator<DB>>(
      (chain, insert, i) => chain.with(`write_${i}`, () => insert as never) as never,
      this.#trx,
    );
    await this.#trx.executeQuery(asPrepared(name, statement.selectNoFrom(sql.lit(1).as('written')).compile()));
    // The statement ran as one, outside each insert's own execution: their audited rows are named here, in order.
    for (const insert of inserts) this.#inserted.get(insert)?.();
  }

  /** Locks the agency's row until the command ends, so that commands which take the lock run one after another. */
  async lockAgency(): Promise<void> {
    await this.#trx
      .selectFrom('agencies')
      .select('id')
      .where('id', '=', this.agencyId)
      .forUpdate()
      .executeTakeFirstOrThrow();
  }

  /** Records events of this command's change, committed with it or not at all; several in one round trip. */
  emit(...events: PlatformEvent[]): Promise<void> {
    if (!this.outbox) throw new Error(`No event outbox is configured: ${events[0]?.type} cannot be recorded.`);
    return this.outbox(this.#trx, this.agencyId, events, this.trace?.traceContext());
  }
}
