import { sql, type Insertable, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { CommandStore } from '../db/tenant-store.js';
import type { AgencyDirectoryTables } from '../db/tables/agency-directory.js';
import type { PatientTables } from '../resources/patients/patient-tables.js';
import type { ReferralTables } from '../resources/referrals/referral-tables.js';
import type { IntakeTables } from '../resources/intakes/intake-tables.js';
import type { VisitTables } from '../resources/visits/visit-tables.js';
import type { TaskTables } from '../resources/tasks/task-tables.js';
import type { PhysicianOrderTables } from '../resources/physician-orders/physician-order-tables.js';
import type { WorkingCollectionTables } from '../resources/working-collections/working-collection-tables.js';

/** The agency-scoped tables a demo agency fills: its directory and every resource family's. */
type SeededTables = AgencyDirectoryTables &
  PatientTables &
  ReferralTables &
  IntakeTables &
  VisitTables &
  TaskTables &
  PhysicianOrderTables &
  WorkingCollectionTables;

export type SeededTable = keyof SeededTables;

/** A row before it is given its agency: the generator builds the same drafts for every agency. */
export type Draft<T extends SeededTable> = Omit<Insertable<SeededTables[T]>, 'agency_id'>;

export type Drafts = { [T in SeededTable]: Draft<T>[] };

/** Parents before children; referrals before intakes (the referral-to-intake key is checked at commit). */
const INSERT_ORDER: readonly SeededTable[] = [
  'payors',
  'referral_sources',
  'physicians',
  'hospitals',
  'agency_users',
  'documents',
  'patients',
  'episodes',
  'coverages',
  'referrals',
  'intakes',
  'referral_documents',
  'visits',
  'tasks',
  'physician_orders',
  'working_collections',
  'working_collection_editors',
  'working_collection_rows',
];

const BATCH_ROWS = 1_000;

type Cell = string | number | Date | string[] | null | undefined;

export function emptyDrafts(): Drafts {
  return Object.fromEntries(INSERT_ORDER.map((table) => [table, []])) as unknown as Drafts;
}

/**
 * Writes drafts for one agency, 1,000 rows per statement, and counts them. Each statement sends one text
 * array per column and casts it back with unnest: far fewer parameters for the server to bind and the client
 * to build than a multi-row VALUES list. A column a draft leaves out is written as NULL, not as its default.
 */
export class DraftWriter {
  readonly rows = Object.fromEntries(INSERT_ORDER.map((table) => [table, 0])) as Record<SeededTable, number>;
  private readonly columnTypes = new Map<SeededTable, Map<string, string>>();

  private readonly db: Kysely<DB>;
  private readonly agencyId: string;

  constructor(store: CommandStore) {
    // Bulk inserts of unnest arrays: far faster than the store's row objects for a large seed; each row gets its agency.
    this.db = store.unscoped('the bulk insert of a seed writes unnest arrays, each row given the agency of the store');
    this.agencyId = store.agencyId;
  }

  async write(drafts: Drafts): Promise<void> {
    for (const table of INSERT_ORDER) {
      const rows = drafts[table] as Record<string, Cell>[];
      for (let start = 0; start < rows.length; start += BATCH_ROWS)
        await this.insert(table, rows.slice(start, start + BATCH_ROWS));
      this.rows[table] += rows.length;
    }
  }

  private async insert(table: SeededTable, rows: Record<string, Cell>[]): Promise<void> {
    const types = await this.typesOf(table);
    const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
    const arrays = [rows.map(() => this.agencyId), ...columns.map((column) => rows.map((row) => asText(row[column])))];
    const names = ['agency_id', ...columns];
    const aliases = names.map((_, i) => sql.ref(`c${i}`));
    const casts = names.map((name, i) => sql`${aliases[i]}::${sql.raw(typeOf(types, table, name))}`);
    await sql`insert into ${sql.table(table)} (${sql.join(names.map((name) => sql.ref(name)))})
      select ${sql.join(casts)} from unnest(${sql.join(arrays.map((array) => sql`${array}::text[]`))}) as u(${sql.join(aliases)})`.execute(
      this.db,
    );
  }

  private async typesOf(table: SeededTable): Promise<Map<string, string>> {
    let types = this.columnTypes.get(table);
    if (!types) {
      const { rows } = await sql<{ name: string; type: string }>`
        select attname as name, format_type(atttypid, atttypmod) as type
        from pg_attribute where attrelid = ${table}::regclass and attnum > 0 and not attisdropped`.execute(this.db);
      types = new Map(rows.map((r) => [r.name, r.type]));
      this.columnTypes.set(table, types);
    }
    return types;
  }
}

function typeOf(types: Map<string, string>, table: string, column: string): string {
  const type = types.get(column);
  if (!type) throw new Error(`${table}.${column} is not a column`);
  return type;
}

function asText(value: Cell): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return `{${value.map((item) => `"${item.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
  return String(value);
}
