import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { buildTestApp, signIn, type SignedInApi } from '../../helpers/app.js';
import { testDatabase } from '../../helpers/database.js';
import { listPage, walkList } from '../../helpers/list-walk.js';
import type {
  CollectionField,
  CollectionVisibility,
  StoredCell,
} from '../../../src/resources/working-collections/working-collection-tables.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const key = () => `key-${Math.random().toString(36).slice(2, 14)}`;
const LIST = '/api/v1/ext/working-collections';
const rowsUrl = (id: string) => `${LIST}/${id}/rows`;

const FIELDS: CollectionField[] = [
  { id: 'patient', label: 'Patient', type: 'patient_reference' },
  { id: 'amount', label: 'Claim amount', type: 'money' },
  { id: 'reason', label: 'Denial reason', type: 'choice', options: ['Coding', 'Eligibility'] },
  { id: 'appealed', label: 'Appealed', type: 'boolean' },
];

interface CollectionInput {
  id: string;
  name: string;
  visibility: CollectionVisibility;
  owner: string;
  editors?: { users?: string[]; extensions?: string[] };
  rows?: Record<string, StoredCell>[];
}

async function addUser(
  agencyId: string,
  id: string,
  role: 'reviewer' | 'marketer',
  firstName: string,
  lastName: string,
) {
  await db
    .insertInto('agency_users')
    .values({
      agency_id: agencyId,
      id,
      role,
      first_name: firstName,
      last_name: lastName,
      email: null,
      discipline: null,
      office_id: null,
    })
    .execute();
}

/** A collection as the product would write it; row i is at position i, except that the last two share a position (the id breaks the tie). */
async function addCollection(agencyId: string, input: CollectionInput) {
  const at = new Date('2026-10-01T12:00:00Z');
  await db
    .insertInto('working_collections')
    .values({
      agency_id: agencyId,
      id: input.id,
      name: input.name,
      purpose: `${input.name}, kept by hand`,
      visibility: input.visibility,
      owner_id: input.owner,
      fields: JSON.stringify(FIELDS),
      created_at: at,
      updated_at: at,
    })
    .execute();
  const editors = [
    ...(input.editors?.users ?? []).map((user_id) => ({ user_id, extension_id: null })),
    ...(input.editors?.extensions ?? []).map((extension_id) => ({ user_id: null, extension_id })),
  ];
  for (const [i, editor] of editors.entries()) {
    await db
      .insertInto('working_collection_editors')
      .values({ agency_id: agencyId, id: `${input.id}_editor_${i}`, collection_id: input.id, ...editor })
      .execute();
  }
  const rows = input.rows ?? [];
  for (const [i, values] of rows.entries()) {
    await db
      .insertInto('working_collection_rows')
      .values({
        agency_id: agencyId,
        id: `${input.id}_row_${String(i).padStart(2, '0')}`,
        collection_id: input.id,
        position: Math.max(0, Math.min(i, rows.length - 2)),
        values: JSON.stringify(values),
        updated_at: new Date(at.getTime() + i * 60_000),
      })
      .execute();
  }
}

const denialRows = Array.from({ length: 5 }, (_, i) => ({
  patient: `pat_${i}`,
  amount: `${100 + i}.50`,
  reason: i % 2 ? 'Coding' : 'Eligibility',
  appealed: i === 0,
}));

/**
 * An agency whose collections are seen by two of its integrations, `phi` and `other`: Denial follow-up and Chart audit
 * agency-wide, Unsigned orders shared with `phi`, Call list with `other` and a colleague, and Rita's personal notes.
 */
async function agencyWithCollections() {
  const phi = await signIn(api);
  const agencyId = phi.integration.agencyId;
  const other = await signIn(api, { integration: { agencyId } });
  await addUser(agencyId, 'usr_rita', 'reviewer', 'Rita', 'Moreno');
  await addUser(agencyId, 'usr_sam', 'marketer', 'Sam', 'Okafor');
  await addCollection(agencyId, {
    id: 'wcl_denials',
    name: 'Denial follow-up',
    visibility: 'agency',
    owner: 'usr_rita',
    rows: denialRows,
  });
  await addCollection(agencyId, { id: 'wcl_audit', name: 'Chart audit', visibility: 'agency', owner: 'usr_sam' });
  await addCollection(agencyId, {
    id: 'wcl_orders',
    name: 'Unsigned orders',
    visibility: 'editors',
    owner: 'usr_rita',
    editors: { users: ['usr_sam'], extensions: [phi.integration.extensionId] },
    rows: [{ patient: 'pat_9', amount: null }],
  });
  await addCollection(agencyId, {
    id: 'wcl_calls',
    name: 'Call list',
    visibility: 'editors',
    owner: 'usr_sam',
    editors: { users: ['usr_rita'], extensions: [other.integration.extensionId] },
  });
  await addCollection(agencyId, {
    id: 'wcl_notes',
    name: 'My notes',
    visibility: 'personal',
    owner: 'usr_rita',
    rows: [{ patient: 'pat_1' }],
  });
  return { agencyId, phi, other };
}

const { agencyId, phi, other } = await agencyWithCollections();

t.test(
  'listWorkingCollections lists the collections shared agency-wide and those naming the calling extension as an editor, by name',
  async (t) => {
    const page = await listPage(phi, LIST);
    t.same(
      page.data.map((c: { name: string }) => c.name),
      ['Chart audit', 'Denial follow-up', 'Unsigned orders'],
      'never the personal one, nor one shared with others only',
    );
    t.same(page.meta, {
      total: 3,
      total_exact: true,
      limit: 50,
      offset: 0,
      has_more: false,
      next_offset: null,
      next_cursor: null,
    });
    t.same(
      page.data[1],
      {
        id: 'wcl_denials',
        name: 'Denial follow-up',
        purpose: 'Denial follow-up, kept by hand',
        visibility: 'agency',
        owner_id: 'usr_rita',
        owner_name: 'Rita Moreno',
        owner_role: 'reviewer',
        row_count: 5,
        updated_at: '2026-10-01T12:04:00.000Z',
      },
      'updated_at is the last change of the collection or its rows',
    );
    t.match(page.data[0], {
      id: 'wcl_audit',
      owner_name: 'Sam Okafor',
      owner_role: 'marketer',
      row_count: 0,
      updated_at: '2026-10-01T12:00:00.000Z',
    });
    t.match(page.data[2], { id: 'wcl_orders', visibility: 'editors', row_count: 1 });
    const others = await listPage(other, LIST);
    t.same(
      others.data.map((c: { id: string }) => c.id),
      ['wcl_calls', 'wcl_audit', 'wcl_denials'],
      'another integration of the agency sees what is shared with it',
    );
  },
);

t.test('listWorkingCollections pages by offset and by cursor alike', async (t) => {
  const byOffset = await walkList(phi, LIST, {}, 'offset', 1);
  const byCursor = await walkList(phi, LIST, {}, 'cursor', 2);
  t.same(byOffset.ids, ['wcl_audit', 'wcl_denials', 'wcl_orders']);
  t.same(byCursor.ids, byOffset.ids);
});

t.test('listWorkingCollectionRows: rows in collection order, with meta.collection and a value per field', async (t) => {
  const first = await listPage(phi, rowsUrl('wcl_denials'), { limit: '2' });
  t.same(first.meta.collection, {
    id: 'wcl_denials',
    name: 'Denial follow-up',
    purpose: 'Denial follow-up, kept by hand',
    fields: FIELDS,
  });
  t.match(first.meta, { total: 5, limit: 2, offset: 0, has_more: true, next_offset: 2, next_cursor: String });
  t.same(first.data[0], {
    id: 'wcl_denials_row_00',
    values: { patient: 'pat_0', amount: '100.50', reason: 'Eligibility', appealed: true },
    updated_at: '2026-10-01T12:00:00.000Z',
  });
  const byOffset = await walkList(phi, rowsUrl('wcl_denials'), {}, 'offset', 2);
  const byCursor = await walkList(phi, rowsUrl('wcl_denials'), {}, 'cursor', 2);
  t.same(byOffset.ids, [
    'wcl_denials_row_00',
    'wcl_denials_row_01',
    'wcl_denials_row_02',
    'wcl_denials_row_03',
    'wcl_denials_row_04',
  ]);
  t.same(byCursor.ids, byOffset.ids, 'rows sharing a position keep the id order on both walks');
  const orders = await listPage(phi, rowsUrl('wcl_orders'));
  t.same(
    orders.data[0].values,
    { patient: 'pat_9', amount: null, reason: null, appealed: null },
    'empty cells are null',
  );
  t.notOk(orders.warnings);
});

t.test(
  'contract version 1 serves rows as cells, and collections without the owner name and role it did not have',
  async (t) => {
    const v1 = { 'svc-contract-version': '1' };
    const rows = (
      await phi.request({ method: 'GET', url: rowsUrl('wcl_denials'), query: { limit: '1' }, headers: v1 })
    ).json();
    t.same(rows.data[0].cells, { patient: 'pat_0', amount: '100.50', reason: 'Eligibility', appealed: true });
    t.notOk('values' in rows.data[0]);
    const list = (await phi.request({ method: 'GET', url: LIST, headers: v1 })).json();
    t.match(list.data[0], { id: 'wcl_audit', owner_id: 'usr_sam' });
    t.notOk('owner_name' in list.data[0] || 'owner_role' in list.data[0]);
  },
);

t.test('a stored value that no longer fits its field is served as null, and a warning names it', async (t) => {
  await addCollection(agencyId, {
    id: 'wcl_retyped',
    name: 'Retyped',
    visibility: 'agency',
    owner: 'usr_rita',
    rows: [{ patient: 'pat_2', amount: 125, reason: 'Timely filing' }, {}],
  });
  const page = await listPage(phi, rowsUrl('wcl_retyped'));
  t.same(page.data[0].values, { patient: 'pat_2', amount: null, reason: null, appealed: null });
  t.equal(page.warnings.length, 2);
  t.match(page.warnings[0], /Row wcl_retyped_row_00: the stored value of field amount does not fit/);
});

t.test('a cursor continues only the collection it was issued for', async (t) => {
  await addCollection(agencyId, {
    id: 'wcl_twin',
    name: 'Twin',
    visibility: 'agency',
    owner: 'usr_rita',
    rows: denialRows,
  });
  const { meta } = await listPage(phi, rowsUrl('wcl_denials'), { limit: '2' });
  const elsewhere = await phi.request({ method: 'GET', url: rowsUrl('wcl_twin'), query: { cursor: meta.next_cursor } });
  t.equal(elsewhere.statusCode, 400);
  t.match(elsewhere.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'cursor' } });
});

t.test('a refused collection names who can share it: its owner, by display name and role', async (t) => {
  const personal = await phi.request({ method: 'GET', url: rowsUrl('wcl_notes') });
  t.equal(personal.statusCode, 403);
  t.match(personal.json().error, {
    code: 'PLATFORM_ACCESS_DENIED',
    category: 'authorization',
    message:
      /personal to its owner\. Only its owner, Rita Moreno \(reviewer\), can share it: ask them through a task \(POST \/api\/v1\/ext\/tasks with assignee_id usr_rita/,
    details: {
      resource_type: 'working_collection',
      id: 'wcl_notes',
      reason: 'personal',
      owner_id: 'usr_rita',
      owner_name: 'Rita Moreno',
      owner_role: 'reviewer',
    },
  });
  t.notMatch(personal.body, /My notes|pat_1/, 'nothing of the collection itself');
  const othersOnly = await phi.request({ method: 'GET', url: rowsUrl('wcl_calls') });
  t.equal(othersOnly.statusCode, 403);
  t.match(othersOnly.json().error, {
    message: /shared with other editors, not with this extension.*Sam Okafor \(marketer\)/,
    details: { reason: 'not_an_editor', owner_name: 'Sam Okafor', owner_role: 'marketer' },
  });
  const notMine = await other.request({ method: 'GET', url: rowsUrl('wcl_orders') });
  t.match(
    notMine.json().error,
    { code: 'PLATFORM_ACCESS_DENIED', details: { reason: 'not_an_editor', owner_name: 'Rita Moreno' } },
    'a user editor does not make the collection readable to other extensions',
  );
  t.equal((await other.request({ method: 'GET', url: rowsUrl('wcl_calls') })).statusCode, 200);
});

t.test("another agency's collection answers exactly like an unknown id, and names no owner", async (t) => {
  const stranger = await signIn(api);
  const strangerAgency = stranger.integration.agencyId;
  await addUser(strangerAgency, 'usr_zed', 'reviewer', 'Zed', 'Quill');
  await addCollection(strangerAgency, {
    id: 'wcl_foreign',
    name: 'Foreign worksheet',
    visibility: 'agency',
    owner: 'usr_zed',
    rows: denialRows,
  });
  await addCollection(strangerAgency, {
    id: 'wcl_foreign_personal',
    name: 'Foreign notes',
    visibility: 'personal',
    owner: 'usr_zed',
  });
  const unknown = await phi.request({ method: 'GET', url: rowsUrl('wcl_nothing') });
  t.equal(unknown.statusCode, 404);
  t.match(unknown.json().error, {
    code: 'PLATFORM_RESOURCE_NOT_FOUND',
    message: /Only a collection's owner can share it/,
    details: { resource_type: 'working_collection', id: 'wcl_nothing', who_can_share: 'owner' },
  });
  const shape = (body: string, id: string) =>
    JSON.parse(body.replaceAll(id, '<id>'), (k, v) => (k === 'correlationId' ? '' : v));
  for (const id of ['wcl_foreign', 'wcl_foreign_personal']) {
    const foreign = await phi.request({ method: 'GET', url: rowsUrl(id), query: { limit: '2' } });
    t.equal(foreign.statusCode, 404, id);
    t.same(shape(foreign.body, id), shape(unknown.body, 'wcl_nothing'), `${id}: the same answer as an unknown id`);
    t.notMatch(foreign.body, /Zed|Quill|usr_zed|Foreign/);
  }
  t.notOk(
    (await listPage(phi, LIST)).data.some((c: { id: string }) => c.id.startsWith('wcl_foreign')),
    'nor listed',
  );
  const own = await listPage(stranger, rowsUrl('wcl_foreign'));
  t.equal(own.meta.total, 5, 'its own agency reads it');
  const denials = await stranger.request({ method: 'GET', url: rowsUrl('wcl_denials') });
  t.equal(denials.statusCode, 404, "and the first agency's collections are unknown to it");
});

t.test('no_phi sessions are refused on both routes', async (t) => {
  const noPhi = await signIn(api, { phiMode: 'no_phi', integration: { agencyId } });
  for (const url of [LIST, rowsUrl('wcl_denials'), rowsUrl('wcl_nothing')]) {
    const res = await noPhi.request({ method: 'GET', url });
    t.equal(res.statusCode, 403, url);
    t.match(res.json().error, { code: 'PLATFORM_PHI_MODE_DENIED', details: { phi_mode: 'no_phi' } });
  }
});

t.test('collections are read-only: a write method is 405 with Allow, pointing at a task for the owner', async (t) => {
  for (const url of [LIST, rowsUrl('wcl_denials')]) {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await phi.request({
        method,
        url,
        headers: { 'idempotency-key': key() },
        payload: { name: 'Mine now' },
      });
      t.equal(res.statusCode, 405, `${method} ${url}`);
      t.equal(res.headers.allow, 'GET');
      t.match(res.json(), {
        code: 'PLATFORM_INVALID_REQUEST',
        user_message: `${method} is not allowed on this path; use GET. Working collections are read-only from extensions.`,
        user_next_step:
          /create a task related to the collection \(POST \/api\/v1\/ext\/tasks with related_resource .*assigned to the collection's owner/,
      });
    }
  }
  const other405 = await phi.request({
    method: 'DELETE',
    url: '/api/v1/ext/tasks/task_1',
    headers: { 'idempotency-key': key() },
  });
  t.notOk(other405.json().user_next_step, 'other paths say only what they allow');
});

const createTask = (session: SignedInApi, payload: object) =>
  session.request({ method: 'POST', url: '/api/v1/ext/tasks', headers: { 'idempotency-key': key() }, payload });

t.test("a task about a collection or one of its rows asks the collection's owner for the change", async (t) => {
  const about = { type: 'working_collection', id: 'wcl_denials' };
  const collectionTask = await createTask(phi, { title: 'Add the March denials', related_resource: about });
  t.equal(collectionTask.statusCode, 200);
  t.match(collectionTask.json().data, { assignee_id: 'usr_rita', related_resource: about, status: 'open' });

  const row = { type: 'working_collection_row', id: 'wcl_denials_row_03', collection_id: 'wcl_denials' };
  const rowTask = (await createTask(phi, { title: 'Amount is wrong', related_resource: row })).json().data;
  t.match(rowTask, { assignee_id: 'usr_rita', related_resource: row });
  t.same(
    (await phi.request({ method: 'GET', url: `/api/v1/ext/tasks/${rowTask.id}` })).json().data.related_resource,
    row,
    'read back as sent',
  );

  const named = await createTask(phi, { title: 'For Sam', assignee_id: 'usr_sam', related_resource: about });
  t.equal(named.json().data.assignee_id, 'usr_sam', 'an assignee the task names is kept');
  const share = await createTask(phi, {
    title: 'Please share your notes',
    related_resource: { type: 'working_collection', id: 'wcl_notes' },
  });
  t.match(
    share.json().data,
    { assignee_id: 'usr_rita' },
    'a collection this extension cannot read can still be asked for',
  );

  const noPhi = await signIn(api, { phiMode: 'no_phi', integration: { agencyId } });
  const fromNoPhi = await createTask(noPhi, { title: 'x', related_resource: row });
  t.same(
    fromNoPhi.json().data.related_resource,
    row,
    'collection and row ids are no PHI: a no_phi session names them as they are',
  );
});

t.test('a task refuses a collection reference that does not hold', async (t) => {
  const stranger = await signIn(api);
  await addUser(stranger.integration.agencyId, 'usr_zed', 'reviewer', 'Zed', 'Quill');
  await addCollection(stranger.integration.agencyId, {
    id: 'wcl_elsewhere',
    name: 'Elsewhere',
    visibility: 'agency',
    owner: 'usr_zed',
    rows: [{}],
  });
  const refusals: [object, string][] = [
    [{ type: 'working_collection', id: 'wcl_nothing' }, 'related_resource.id'],
    [{ type: 'working_collection', id: 'wcl_elsewhere' }, 'related_resource.id'],
    [{ type: 'working_collection', id: 'wcl_denials', collection_id: 'wcl_denials' }, 'related_resource.collection_id'],
    [{ type: 'working_collection_row', id: 'wcl_denials_row_01' }, 'related_resource.collection_id'],
    [{ type: 'working_collection_row', id: 'wcl_denials_row_01', collection_id: 'wcl_orders' }, 'related_resource.id'],
    [
      { type: 'working_collection_row', id: 'wcl_elsewhere_row_00', collection_id: 'wcl_elsewhere' },
      'related_resource.id',
    ],
  ];
  for (const [related, field] of refusals) {
    const res = await createTask(phi, { title: 'x', related_resource: related });
    t.equal(res.statusCode, 400, JSON.stringify(related));
    t.match(res.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field } });
  }
  const tasks = await db
    .selectFrom('tasks')
    .select('id')
    .where('agency_id', '=', agencyId)
    .where('title', '=', 'x')
    .where('created_by', '=', phi.integration.extensionId)
    .execute();
  t.equal(tasks.length, 0, 'nothing was stored');
});

t.test('the audit record of a rows page names the collection, its rows and the patients they refer to', async (t) => {
  const res = await phi.request({ method: 'GET', url: rowsUrl('wcl_denials'), query: { limit: '2' } });
  const requestId = String(res.headers['x-request-id']);
  const audited = () =>
    db
      .selectFrom('audit_events')
      .selectAll()
      .where('agency_id', '=', agencyId)
      .where('request_id', '=', requestId)
      .executeTakeFirst();
  const deadline = Date.now() + 3_000;
  let row = await audited();
  while (!row && Date.now() < deadline) {
    await sleep(20);
    row = await audited();
  }
  t.match(row, { operation_id: 'listWorkingCollectionRows', resource_type: 'working_collection', phi_mode: 'phi' });
  t.same(row?.resource_ids, ['wcl_denials', 'wcl_denials_row_00', 'wcl_denials_row_01', 'pat_0', 'pat_1']);
});
