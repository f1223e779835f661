import type { ColumnType } from 'kysely';

/**
 * Column types shared by the agency-scoped tables (db/migrations/0005_clinical.ts). Every row is keyed (agency_id, id).
 * `date` columns are 'YYYY-MM-DD' strings and `numeric` columns exact decimal strings (src/db/type-parsers.ts).
 * jsonb columns are written as JSON text (JSON.stringify): node-postgres would send a JS array as a
 * PostgreSQL array literal, which is not JSON.
 */

export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface TenantRow {
  agency_id: string;
  id: string;
  created_at: DefaultedTimestamp;
  updated_at: DefaultedTimestamp;
}

export type ServiceLine = 'home_health' | 'hospice' | 'private_duty';
export type Gender = 'female' | 'male' | 'unknown';
export type Discipline = 'SN' | 'PT' | 'OT' | 'ST' | 'MSW' | 'HHA';
/** X12 element 1069: 18 self, 01 spouse, 19 child, 20 employee, 53 life partner, G8 other, 21 unknown. */
export type RelationshipToInsured = '18' | '01' | '19' | '20' | '53' | 'G8' | '21';

export interface PersonName {
  first_name: string;
  middle_name: string | null;
  last_name: string;
  suffix: string | null;
}
