import t from 'tap';
import { sql } from 'kysely';
import { CommandStore, TenantStore, type EventOutbox } from '../../src/db/tenant-store.js';
import { findTask, insertTask } from '../../src/resources/tasks/task-repository.js';
import { CursorSealer } from '../../src/db/cursor-sealer.js';
import { listPage } from '../../src/db/paging.js';
import { CursorSeal } from '../../src/identity/cursor-seal.js';
import { testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';

const database = await testDatabase();
const { db } = database;
const suffix = Math.random().toString(36).slice(2, 8);
const [agencyA, agencyB] = [`tsa_${suffix}`, `tsb_${suffix}`];
await db
  .insertInto('agencies')
  .values([
    { id: agencyA, name: 'A' },
    { id: agencyB, name: 'B' },
  ])
  .execute();

const trail = () => ({ resourceType: 'task', resourceIds: [] as string[] });
const tenant = (agencyId: string) => ({ agencyId, phiMode: 'phi' as const });
const task = (id: string) => ({
  id,
  title: id,
  description: null,
  status: 'open' as const,
  priority: 'normal' as const,
  due_date: null,
  assignee_id: null,
  related_type: null,
  related_id: null,
  related_collection_id: null,
  created_by: 'ext',
  completed_at: null,
});

// A table of this test's own stands in for the outbox that webhooks bring.
const outboxTable = `test_outbox_${suffix}`;
await sql`create table ${sql.table(outboxTable)} (agency_id text not null, type text not null, data jsonb not null)`.execute(
  db,
);
const outbox: EventOutbox = async (trx, agencyId, events) => {
  for (const event of events)
    await sql`insert into ${sql.table(outboxTable)} values (${agencyId}, ${event.type}, ${JSON.stringify(event.data)})`.execute(
      trx,
    );
};
const outboxRows = async () =>
  (await sql<{ agency_id: string; type: string }>`select agency_id, type from ${sql.table(outboxTable)}`.execute(db))
    .rows;

await db
  .transaction()
  .execute((trx) => insertTask(new CommandStore(trx, tenant(agencyA), trail(), undefined), task('task_shared_id')));

t.test('a store reads its agency only: the same id in another agency is not found', async (t) => {
  t.ok(await findTask(new TenantStore(db, tenant(agencyA), trail()), 'task_shared_id'));
  t.equal(await findTask(new TenantStore(db, tenant(agencyB), trail()), 'task_shared_id'), undefined);
});

t.test(
  'a write takes its agency from the store, and what the repositories touch is on the audit trail once',
  async (t) => {
    const audit = trail();
    const row = await db.transaction().execute(async (trx) => {
      const store = new CommandStore(trx, tenant(agencyB), audit, undefined);
      const inserted = await insertTask(store, task('task_b_1'));
      await findTask(store, inserted.id);
      return inserted;
    });
    t.equal(row.agency_id, agencyB);
    t.same(audit.resourceIds, ['task_b_1']);
    const missing = trail();
    await findTask(new TenantStore(db, tenant(agencyA), missing), 'task_b_1');
    t.same(missing.resourceIds, [], 'a read that found nothing names nothing');
  },
);

t.test('an event is written in the command transaction: it commits with the change or not at all', async (t) => {
  await db
    .transaction()
    .execute((trx) =>
      new CommandStore(trx, tenant(agencyA), trail(), outbox).emit({ type: 'task.created', data: { id: 'task_1' } }),
    );
  const refused = db.transaction().execute(async (trx) => {
    await new CommandStore(trx, tenant(agencyA), trail(), outbox).emit({
      type: 'task.updated',
      data: { id: 'task_1' },
    });
    throw new Error('the command failed after emitting');
  });
  await t.rejects(refused, /failed after emitting/);
  t.same(await outboxRows(), [{ agency_id: agencyA, type: 'task.created' }]);
});

t.test('without an outbox, emitting refuses instead of dropping the event', async (t) => {
  await t.rejects(
    db
      .transaction()
      .execute((trx) =>
        new CommandStore(trx, tenant(agencyA), trail(), undefined).emit({ type: 'task.created', data: {} }),
      ),
    /No event outbox/,
  );
});

t.test('a read store cannot be handed to a write (checked by tsc)', async (t) => {
  const read = new TenantStore(db, tenant(agencyA), trail());
  // @ts-expect-error a write needs a CommandStore, whose db is the command's transaction
  const write = () => insertTask(read, task('never'));
  t.type(write, 'function');
});

t.test("updates and deletes reach the store's agency only; a joined table is scoped by ofAgency", async (t) => {
  await db
    .transaction()
    .execute((trx) => insertTask(new CommandStore(trx, tenant(agencyB), trail(), undefined), task('task_shared_id')));
  await db.transaction().execute(async (trx) => {
    const store = new CommandStore(trx, tenant(agencyB), trail(), undefined);
    await store.updateTable('tasks').set({ title: 'changed by B' }).where('id', '=', 'task_shared_id').execute();
    await store.deleteFrom('tasks').where('id', '=', 'task_b_1').execute();
  });
  const titles = await db
    .selectFrom('tasks')
    .select(['agency_id', 'title'])
    .where('id', '=', 'task_shared_id')
    .orderBy('agency_id')
    .execute();
  t.same(titles, [
    { agency_id: agencyA, title: 'task_shared_id' },
    { agency_id: agencyB, title: 'changed by B' },
  ]);
  t.equal((await db.selectFrom('tasks').select('id').where('id', '=', 'task_b_1').execute()).length, 0);
  const joined = await new TenantStore(db, tenant(agencyA), trail())
    .selectFrom('tasks')
    .innerJoin('tasks as other', (join) =>
      join.on(new TenantStore(db, tenant(agencyA), trail()).ofAgency('other')).onRef('other.id', '=', 'tasks.id'),
    )
    .select(['tasks.agency_id', 'other.agency_id as joined_agency'])
    .where('tasks.id', '=', 'task_shared_id')
    .execute();
  t.same(
    joined,
    [{ agency_id: agencyA, joined_agency: agencyA }],
    "the other agency's row of the same id is not joined",
  );
});

t.test('the audit record follows from what reads return: lookups and reads of other tables name nothing', async (t) => {
  const audit = trail();
  const store = new TenantStore(db, tenant(agencyA), audit);
  await store.lookupFrom('tasks').select('id').execute();
  await store.selectFrom('offices').selectAll().execute();
  t.same(audit.resourceIds, []);
  await store.selectFrom('tasks').select(['id', 'title']).where('id', '=', 'task_shared_id').execute();
  await store.selectFrom('tasks').select('title').execute();
  t.same(audit.resourceIds, ['task_shared_id'], 'a row returned without its id names nothing');
});

t.test('the raw handle is reached only through unscoped, which says why', async (t) => {
  const store = new TenantStore(db, tenant(agencyA), trail());
  t.notOk('db' in store, 'no db property');
  t.equal(store.unscoped('this test checks the escape returns the handle'), db);
  t.throws(() => store.unscoped(' '), /say why/);
});

t.test(
  'a list page names on the audit record the rows it serves, not the row that shows a next page exists',
  async (t) => {
    await db
      .transaction()
      .execute((trx) => insertTask(new CommandStore(trx, tenant(agencyA), trail(), undefined), task('task_a_page_2')));
    const audit = trail();
    const store = new TenantStore(db, tenant(agencyA), audit);
    const cursors = new CursorSealer(
      new CursorSeal(db, testKeyEncryption),
      { agencyId: agencyA, extensionId: 'ext', phiMode: 'phi' },
      'listTasks',
      {},
    );
    const page = await listPage(
      store,
      store.selectFrom('tasks').select('id'),
      { columns: ['id'], direction: 'asc' },
      { limit: 1 },
      cursors,
    );
    t.equal(page.meta.has_more, true);
    t.same(
      audit.resourceIds,
      page.rows.map((row) => row.id),
    );
  },
);
