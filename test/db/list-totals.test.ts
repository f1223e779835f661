import t from 'tap';
import { sql, type Kysely } from 'kysely';
import { paging } from '../../src/generated/contract.js';
import { listPage, type ListOrder, type ListQuery } from '../../src/db/paging.js';
import { CursorSealer } from '../../src/db/cursor-sealer.js';
import { TenantStore } from '../../src/db/tenant-store.js';
import { CursorSeal } from '../../src/identity/cursor-seal.js';
import { testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';

const database = await testDatabase();
const db = database.db as unknown as Kysely<any>;
const table = `list_totals_${Math.random().toString(36).slice(2, 8)}`;
const BOUND = paging.exact_total_max;
const groups = { few: 10, at_bound: BOUND, past_bound: BOUND + 1, many: 3 * BOUND };

await sql`create table ${sql.table(table)} (id text primary key, grp text not null)`.execute(db);
for (const [grp, size] of Object.entries(groups)) {
  await sql`insert into ${sql.table(table)} select ${grp} || '_' || lpad(n::text, 5, '0'), ${grp} from generate_series(1, ${size}) as n`.execute(
    db,
  );
}
// What autovacuum's analyze keeps current in a real database: the statistics the estimates come from.
await sql`analyze ${sql.table(table)}`.execute(db);

const store = new TenantStore(
  database.db,
  { agencyId: 'unused', phiMode: 'phi' },
  { resourceType: 'test', resourceIds: [] },
);
const cursors = new CursorSealer(
  new CursorSeal(database.db, testKeyEncryption),
  { agencyId: 'agency', extensionId: 'ext', phiMode: 'phi' },
  'listThings',
  {},
);
const BY_ID: ListOrder = { columns: ['id'], direction: 'asc' };
const page = (grp: string | undefined, request: ListQuery) => {
  let query = db.selectFrom(table).select('id');
  if (grp) query = query.where('grp', '=', grp);
  return listPage(store, query, BY_ID, { ...request, ...(grp ? { grp } : {}) }, cursors);
};

t.test('a total within the bound is the exact count, at the bound too', async (t) => {
  for (const grp of ['few', 'at_bound'] as const) {
    const { meta } = await page(grp, { limit: 5 });
    t.equal(meta.total, groups[grp], grp);
    t.equal(meta.total_exact, true, grp);
  }
});

t.test('past the bound the total is an estimate, and says so', async (t) => {
  const past = await page('past_bound', { limit: 5 });
  t.equal(past.meta.total_exact, false);
  t.ok(past.meta.total > BOUND, `${past.meta.total} is more than the bound, as counting proved`);
  const all = await page(undefined, { limit: 5 });
  t.equal(all.meta.total_exact, false);
  const matches = Object.values(groups).reduce((a, b) => a + b);
  t.ok(
    Math.abs(all.meta.total - matches) <= matches * 0.1,
    `estimate ${all.meta.total} within 10% of ${matches} on analyzed statistics`,
  );
});

t.test('an estimate is never below what the page proves exists', async (t) => {
  // The planner guesses a fraction of a percent for an equality on an expression; every row matches it.
  const underestimated = db.selectFrom(table).select('id').where(sql<boolean>`(id || '') = id`);
  const { meta } = await listPage(store, underestimated, BY_ID, { limit: 50, offset: 4_000 }, cursors);
  t.equal(meta.total_exact, false);
  t.equal(meta.total, 4_051, 'the rows up to this page, and one more since has_more');
  t.equal(meta.has_more, true);
});

t.test("a cursor page carries the first page's total and whether it was exact", async (t) => {
  for (const grp of ['at_bound', 'many'] as const) {
    const first = await page(grp, { limit: 200 });
    const next = await page(grp, { limit: 200, cursor: first.meta.next_cursor! });
    t.equal(next.meta.total, first.meta.total, grp);
    t.equal(next.meta.total_exact, first.meta.total_exact, grp);
    t.equal(next.meta.offset, 200);
  }
});

t.test('a walk to the end visits exactly the matches an exact total announced', async (t) => {
  const first = await page('at_bound', { limit: 200 });
  let seen = first.rows.length;
  let cursor = first.meta.next_cursor;
  while (cursor) {
    const next = await page('at_bound', { limit: 200, cursor });
    seen += next.rows.length;
    cursor = next.meta.next_cursor;
  }
  t.equal(seen, first.meta.total);
});

t.test('an offset page and its count are one statement; past the end the count runs alone', async (t) => {
  const statements: string[] = [];
  const stop = database.observe({ statement: (query) => void statements.push(query.sql) });
  t.teardown(stop);
  const onTable = () => statements.filter((text) => text.includes(table));
  for (const grp of ['few', 'at_bound'] as const) {
    statements.length = 0;
    const { rows, meta } = await page(grp, { limit: 5 });
    t.equal(onTable().length, 1, `${grp}: one statement`);
    t.equal(meta.total, groups[grp]);
    t.same(Object.keys(rows[0]), ['id'], 'the count is not served as a column');
  }
  const first = await page('many', { limit: 5 });
  statements.length = 0;
  await page('many', { limit: 5, cursor: first.meta.next_cursor! });
  t.equal(onTable().length, 1, 'a cursor page counts nothing: it carries the total');
  statements.length = 0;
  const beyond = await page('few', { limit: 5, offset: 20 });
  t.same([beyond.rows, beyond.meta.total, beyond.meta.total_exact], [[], groups.few, true]);
  t.equal(onTable().length, 2, 'the empty page, then the count');
  statements.length = 0;
  const empty = await page('none', { limit: 5 });
  t.same([empty.meta.total, empty.meta.total_exact, onTable().length], [0, true, 1], 'an empty first page counts 0');
});
