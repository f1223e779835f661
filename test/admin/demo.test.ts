import t from 'tap';
import { DEMO_AGENCY, describeDemo, ensureDemo } from '../../src/admin/demo.js';
import { CONTRACT_SCOPES } from '../../src/identity/grants.js';
import { buildTestApp } from '../helpers/app.js';
import { testDatabase } from '../helpers/database.js';

const api = await buildTestApp();
const { db } = await testDatabase();

t.test('an empty database gets the demo agency and an integration granted everything, once', async (t) => {
  const demo = await ensureDemo(db, 'http://localhost:3000');
  if (!demo) return t.fail('no demo on an empty database');
  t.equal(await ensureDemo(db, 'http://localhost:3000'), undefined, 'not again once an agency exists');
  const zips = await db.selectFrom('agency_service_zips').select(['zip_code', 'office_id']).where('agency_id', '=', 'demo').orderBy('zip_code').execute();
  t.same(zips.map((z) => z.zip_code), [...DEMO_AGENCY.serviceZips].sort());
  const office = await db.selectFrom('offices').selectAll().where('agency_id', '=', 'demo').executeTakeFirstOrThrow();
  t.equal(office.name, `${DEMO_AGENCY.name} Main Office`);
  t.ok(zips.every((z) => z.office_id === office.id), 'every ZIP routed to the main office');

  const payload = JSON.parse(/-d '(.*)'$/.exec(demo.curl)![1]);
  t.match(demo.curl, /^curl -s http:\/\/localhost:3000\/api\/v1\/oauth\/token -H 'content-type: application\/json' -d '/);
  t.same(payload, { grant_type: 'client_credentials', client_id: demo.clientId, client_secret: demo.clientSecret, agency_id: 'demo', phi_mode: 'no_phi' });
  const res = await api.request({ method: 'POST', url: '/api/v1/oauth/token', payload: { ...payload, phi_mode: 'phi' } });
  t.equal(res.statusCode, 200, 'both PHI modes');
  t.equal(res.json().scope, CONTRACT_SCOPES.join(' '), 'every scope');
  const extension = await db.selectFrom('extensions').selectAll().where('agency_id', '=', 'demo').executeTakeFirstOrThrow();
  t.ok(extension.capabilities.includes('referrals.create'), 'commands too');
  t.match(describeDemo(demo), demo.clientSecret);
});
