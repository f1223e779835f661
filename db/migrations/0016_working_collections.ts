import { sql, type Kysely } from 'kysely';

/**
 * Working collections: the agency's shared worksheets (a denial follow-up list, a chart audit list), owned by a user of
 * the agency, with field definitions (jsonb: an array of { id, label, type, options? }) and rows whose values are keyed
 * by field id. Extensions read them (`listWorkingCollections`, `listWorkingCollectionRows`); the product writes them. Keyed (agency_id, id) like every
 * agency table, and every reference carries agency_id, so nothing can point into another agency.
 * The value lists are frozen copies as of this migration: widening one takes a new migration.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table working_collections (
      agency_id text not null references agencies (id),
      id text not null,
      name text not null check (name <> ''),
      purpose text,
      visibility text not null check (visibility in ('agency', 'editors', 'personal')),
      owner_id text not null,
      fields jsonb not null check (jsonb_typeof(fields) = 'array'),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint working_collections_pk primary key (agency_id, id),
      constraint working_collections_owner_id_fk foreign key (agency_id, owner_id) references agency_users (agency_id, id)
    )`.execute(db);
  // One row per editor a collection is shared with: a user of the agency or an extension (integration) of it.
  await sql`
    create table working_collection_editors (
      agency_id text not null,
      id text not null,
      collection_id text not null,
      user_id text,
      extension_id text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint working_collection_editors_pk primary key (agency_id, id),
      constraint working_collection_editors_collection_id_fk foreign key (agency_id, collection_id)
        references working_collections (agency_id, id) on delete cascade,
      constraint working_collection_editors_user_id_fk foreign key (agency_id, user_id) references agency_users (agency_id, id),
      constraint working_collection_editors_extension_id_fk foreign key (agency_id, extension_id) references extensions (agency_id, id),
      constraint working_collection_editors_one_editor check (num_nonnulls(user_id, extension_id) = 1)
    )`.execute(db);
  await sql`create unique index working_collection_editors_user_idx on working_collection_editors (agency_id, collection_id, user_id) where user_id is not null`.execute(
    db,
  );
  // Also serves the list of collections shared with one extension.
  await sql`create unique index working_collection_editors_extension_idx on working_collection_editors (agency_id, extension_id, collection_id) where extension_id is not null`.execute(
    db,
  );
  await sql`
    create table working_collection_rows (
      agency_id text not null,
      id text not null,
      collection_id text not null,
      position integer not null check (position >= 0),
      "values" jsonb not null check (jsonb_typeof("values") = 'object'),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint working_collection_rows_pk primary key (agency_id, id),
      constraint working_collection_rows_collection_id_fk foreign key (agency_id, collection_id)
        references working_collections (agency_id, id) on delete cascade
    )`.execute(db);
  // The rows list's order and keyset.
  await sql`create index working_collection_rows_order_idx on working_collection_rows (agency_id, collection_id, position, id)`.execute(
    db,
  );
  await sql`create index working_collections_name_idx on working_collections (agency_id, name, id)`.execute(db);
}
