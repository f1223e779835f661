import t from 'tap';
import { buildTestApp, signIn, type SignedInApi } from '../../helpers/app.js';
import { testDatabase } from '../../helpers/database.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const key = () => `key-${Math.random().toString(36).slice(2, 14)}`;

async function addPatient(agencyId: string, id: string) {
  await db
    .insertInto('patients')
    .values({
      agency_id: agencyId,
      id,
      first_name: 'Ada',
      last_name: 'Lovelace',
      middle_name: null,
      suffix: null,
      mrn: null,
      dob: '1940-02-03',
      gender: 'female',
      primary_phone: null,
      alt_phone: null,
      preferred_phone: null,
      address_line_1: null,
      address_line_2: null,
      city: null,
      state: null,
      zip_code: '02110',
      latitude: null,
      longitude: null,
      office_id: null,
      service_line: 'hospice',
      status: 'active',
      primary_physician_id: null,
      match_last_name: 'lovelace',
      match_first_name: 'ada',
      match_phone: null,
    })
    .execute();
}

const create = (signed: SignedInApi, payload: object) =>
  signed.request({ method: 'POST', url: '/api/v1/ext/tasks', headers: { 'idempotency-key': key() }, payload });
const patch = (signed: SignedInApi, id: string, payload: object, headers: Record<string, string> = {}) =>
  signed.request({
    method: 'PATCH',
    url: `/api/v1/ext/tasks/${id}`,
    headers: { 'idempotency-key': key(), ...headers },
    payload,
  });

t.test('create, read and complete a task', async (t) => {
  const signed = await signIn(api);
  const created = await create(signed, {
    title: 'Chase unsigned POC',
    description: 'Dr. Patel, 45 days out',
    priority: 'urgent',
    due_date: '2026-12-01',
    assignee_id: 'reviewer',
  });
  t.equal(created.statusCode, 200);
  const task = created.json().data;
  t.match(task, {
    title: 'Chase unsigned POC',
    status: 'open',
    priority: 'urgent',
    due_date: '2026-12-01',
    assignee_id: 'reviewer',
    version: 1,
    related_resource: null,
    created_by: signed.integration.extensionId,
    completed_at: null,
  });
  t.equal(created.headers.etag, '"1"');
  const read = await signed.request({ method: 'GET', url: `/api/v1/ext/tasks/${task.id}` });
  t.same(read.json().data, task);

  t.equal((await patch(signed, task.id, { status: 'in_progress', version: 1 })).json().data.version, 2);
  const done = await patch(signed, task.id, { status: 'done' }, { 'if-match': '"2"' });
  t.match(done.json().data, { status: 'done', version: 3, completed_at: String });
  t.equal(done.headers.etag, '"3"');
});

t.test('defaults: priority normal, open', async (t) => {
  const signed = await signIn(api);
  t.match((await create(signed, { title: 'Minimal' })).json().data, {
    priority: 'normal',
    status: 'open',
    description: null,
    due_date: null,
    assignee_id: null,
  });
});

t.test('a stale version gets 409 CONCURRENT_MODIFICATION, retryable, naming the current version', async (t) => {
  const signed = await signIn(api);
  const { id } = (await create(signed, { title: 'Race' })).json().data;
  await patch(signed, id, { priority: 'high' });
  const stale = await patch(signed, id, { priority: 'low', version: 1 });
  t.equal(stale.statusCode, 409);
  t.match(stale.json().error, {
    code: 'PLATFORM_CONCURRENT_MODIFICATION',
    retryable: true,
    details: { current_version: 2 },
  });
  const staleHeader = await patch(signed, id, { priority: 'low' }, { 'if-match': 'W/"1"' });
  t.equal(staleHeader.statusCode, 409);
  const disagree = await patch(signed, id, { priority: 'low', version: 2 }, { 'if-match': '"3"' });
  t.equal(disagree.statusCode, 400);
});

t.test('forbidden transitions and final states are 400', async (t) => {
  const signed = await signIn(api);
  const { id } = (await create(signed, { title: 'Flow' })).json().data;
  const skip = await patch(signed, id, { status: 'done' });
  t.equal(skip.statusCode, 400);
  t.match(skip.json().error, {
    code: 'PLATFORM_INVALID_INPUT',
    details: { field: 'status', from: 'open', to: 'done' },
  });
  await patch(signed, id, { status: 'cancelled' });
  const reopen = await patch(signed, id, { status: 'open' });
  t.equal(reopen.statusCode, 400);
  t.match(reopen.json().error.message, /final/);
});

t.test('unknown fields, empty patches and bad values are refused by the contract', async (t) => {
  const signed = await signIn(api);
  const { id } = (await create(signed, { title: 'Strict' })).json().data;
  t.equal((await patch(signed, id, { colour: 'red' })).statusCode, 400);
  t.equal((await patch(signed, id, {})).statusCode, 400);
  t.equal((await patch(signed, id, { status: 'finished' })).statusCode, 400);
  t.equal((await create(signed, { title: '' })).statusCode, 400);
});

t.test('assignees and related resources must exist in the agency', async (t) => {
  const signed = await signIn(api);
  const assignee = await create(signed, { title: 'x', assignee_id: 'usr_nobody' });
  t.match(assignee.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'assignee_id' } });
  const missing = await create(signed, { title: 'x', related_resource: { type: 'patient', id: 'pat_missing' } });
  t.match(missing.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'related_resource.id' } });
  const unsupported = await create(signed, { title: 'x', related_resource: { type: 'remittance', id: 'rem_1' } });
  t.match(unsupported.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'related_resource.type' } });

  await addPatient(signed.integration.agencyId, 'pat_ada');
  const linked = await create(signed, { title: 'Call Ada', related_resource: { type: 'patient', id: 'pat_ada' } });
  t.same(linked.json().data.related_resource, { type: 'patient', id: 'pat_ada' });
});

t.test('in a no_phi session patients are referred to by surrogate handles both ways', async (t) => {
  const phi = await signIn(api);
  await addPatient(phi.integration.agencyId, 'pat_grace');
  const noPhi = await signIn(api, { phiMode: 'no_phi', integration: { agencyId: phi.integration.agencyId } });
  const raw = await create(noPhi, { title: 'x', related_resource: { type: 'patient', id: 'pat_grace' } });
  t.equal(raw.json().error.code, 'PLATFORM_PSEUDONYM_UNRESOLVED', 'real ids are not accepted in no_phi');

  const { id } = (
    await create(phi, { title: 'Visit Grace', related_resource: { type: 'patient', id: 'pat_grace' } })
  ).json().data;
  const seen = (await noPhi.request({ method: 'GET', url: `/api/v1/ext/tasks/${id}` })).json().data.related_resource;
  t.match(seen, { type: 'patient', id: /^PT-/ });
  const viaHandle = await create(noPhi, { title: 'Follow up', related_resource: seen });
  t.same(viaHandle.json().data.related_resource, seen);
  const stored = await phi.request({ method: 'GET', url: `/api/v1/ext/tasks/${viaHandle.json().data.id}` });
  t.same(
    stored.json().data.related_resource,
    { type: 'patient', id: 'pat_grace' },
    'the handle resolved to the real chart',
  );
});

t.test('another agency gets 404 for a task id, exactly as for an unknown id', async (t) => {
  const owner = await signIn(api);
  const other = await signIn(api);
  const { id } = (await create(owner, { title: 'Private' })).json().data;
  const foreign = await other.request({ method: 'GET', url: `/api/v1/ext/tasks/${id}` });
  const unknown = await other.request({ method: 'GET', url: '/api/v1/ext/tasks/task_doesnotexist' });
  t.equal(foreign.statusCode, 404);
  t.equal(foreign.json().error.code, 'PLATFORM_RESOURCE_NOT_FOUND');
  t.same(
    { ...foreign.json().error, message: '', details: {}, correlationId: '' },
    { ...unknown.json().error, message: '', details: {}, correlationId: '' },
  );
  t.equal((await patch(other, id, { title: 'Mine now' })).statusCode, 404);
});
