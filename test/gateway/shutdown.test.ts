import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { buildSignedInApp } from '../helpers/app.js';
import { lockTable, testDatabase } from '../helpers/database.js';

// A lock held by a second connection keeps the handler running while the app closes; PGlite has one connection.
t.test(
  'closing waits for a running handler before the audit trail closes under it',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs a second PostgreSQL connection' },
  async (t) => {
    const { db } = await testDatabase();
    const signed = await buildSignedInApp();
    const release = await lockTable(t, 'patients');

    const pending = signed.request({ method: 'GET', url: '/api/v1/ext/patients' });
    await sleep(200);
    const closed = signed.app.close();
    await sleep(200);
    await release();

    const res = await pending;
    await closed;
    t.equal(res.statusCode, 200, 'served: the PHI read was audited before the trail closed');
    const audited = await db
      .selectFrom('audit_events')
      .select('operation_id')
      .where('request_id', '=', String(res.headers['x-request-id']))
      .execute();
    t.same(audited, [{ operation_id: 'listPatients' }], 'its audit record was flushed at close');
  },
);

t.test('closing hands back the leased units no call spent: the day counter equals the calls admitted', async (t) => {
  const { db } = await testDatabase();
  const signed = await buildSignedInApp();
  const statuses = [];
  for (let i = 0; i < 25; i++)
    statuses.push((await signed.request({ method: 'GET', url: '/api/v1/ext/health' })).statusCode);
  t.same(new Set(statuses), new Set([200]));
  await signed.app.close();
  const { agencyId, extensionId } = signed.integration;
  const days = await db
    .selectFrom('usage_windows')
    .select('used')
    .where('agency_id', '=', agencyId)
    .where('extension_id', '=', extensionId)
    .where('kind', '=', 'day')
    .execute();
  t.same(days, [{ used: 25 }]);
});
