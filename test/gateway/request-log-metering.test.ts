/** What the request log reads from metering besides status and time: the refusal's code, the version, a replay. */
import t from 'tap';
import { buildTestApp, signIn } from '../helpers/app.js';
import { testDatabase } from '../helpers/database.js';

const { db } = await testDatabase();

t.test('each call is metered with its error code, its contract version, and whether it was a replay', async (t) => {
  const own = await buildTestApp({}, t);
  const signed = await signIn(own);
  const key = `key-${Math.random().toString(36).slice(2, 14)}`;
  const create = () =>
    signed.request({
      method: 'POST',
      url: '/api/v1/ext/tasks',
      headers: { 'idempotency-key': key },
      payload: { title: 'Logged once, replayed once' },
    });
  const calls = [
    await signed.request({ method: 'GET', url: '/api/v1/ext/health', headers: { 'svc-contract-version': '1' } }),
    await signed.request({ method: 'GET', url: '/api/v1/ext/tasks/task_not_there' }),
    await create(),
    await create(),
  ];
  t.same(
    calls.map((c) => c.statusCode),
    [200, 404, 200, 200],
  );
  t.equal(calls[3].headers['idempotent-replayed'], 'true');
  await own.app.close();
  const requestIds = calls.map((c) => String(c.headers['x-request-id']));
  const metered = await db
    .selectFrom('metering_events')
    .select(['request_id', 'operation_id', 'status', 'error_code', 'contract_version', 'replayed', 'cost_units'])
    .where('request_id', 'in', requestIds)
    .execute();
  const byRequest = new Map(metered.map((m) => [m.request_id, m]));
  t.match(
    requestIds.map((id) => byRequest.get(id)),
    [
      { operation_id: 'getHealth', status: 200, error_code: null, contract_version: '1', replayed: false },
      {
        operation_id: 'getTask',
        status: 404,
        error_code: 'PLATFORM_RESOURCE_NOT_FOUND',
        contract_version: '2',
        replayed: false,
      },
      { operation_id: 'createTask', status: 200, error_code: null, contract_version: '2', replayed: false },
      {
        operation_id: 'createTask',
        status: 200,
        error_code: null,
        contract_version: '2',
        replayed: true,
        cost_units: 0,
      },
    ],
  );
});
