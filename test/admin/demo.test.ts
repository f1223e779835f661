import t from 'tap';
import { DEMO_AGENCY, demoCommands, describeDemo, ensureDemo } from '../../src/admin/demo.js';
import { createAgency } from '../../src/admin/agency.js';
import { loadConfig } from '../../src/config.js';
import { CONTRACT_SCOPES } from '../../src/identity/grants.js';
import { buildTestApp } from '../helpers/app.js';
import { testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';

const api = await buildTestApp();
const { db } = await testDatabase();

t.test('an empty database gets the demo agency and an integration granted everything, once', async (t) => {
  const demo = await ensureDemo(db, 'http://localhost:3000');
  if (!demo) return t.fail('no demo on an empty database');
  t.equal(await ensureDemo(db, 'http://localhost:3000'), undefined, 'not again once an agency exists');
  const zips = await db
    .selectFrom('agency_service_zips')
    .select(['zip_code', 'office_id'])
    .where('agency_id', '=', 'demo')
    .orderBy('zip_code')
    .execute();
  t.same(
    zips.map((z) => z.zip_code),
    [...DEMO_AGENCY.serviceZips].sort(),
  );
  const offices = await db.selectFrom('offices').select(['id', 'name']).where('agency_id', '=', 'demo').execute();
  t.ok(offices.some((o) => o.name === `${DEMO_AGENCY.name} Main Office`));
  t.ok(offices.length > 1, 'branch offices built over the service ZIPs');
  t.ok(
    zips.every((z) => offices.some((o) => o.id === z.office_id)),
    'every ZIP routed to an office of the agency',
  );
  t.same(demo.seed.rows.patients, 300, 'seeded with the small book of business');

  const payload = JSON.parse(/-d '(.*)'$/.exec(demo.curl)![1]);
  t.match(
    demo.curl,
    /^curl -s http:\/\/localhost:3000\/api\/v1\/oauth\/token -H 'content-type: application\/json' -d '/,
  );
  t.same(payload, {
    grant_type: 'client_credentials',
    client_id: demo.clientId,
    client_secret: demo.clientSecret,
    agency_id: 'demo',
    phi_mode: 'no_phi',
  });
  const res = await api.request({
    method: 'POST',
    url: '/api/v1/oauth/token',
    payload: { ...payload, phi_mode: 'phi' },
  });
  t.equal(res.statusCode, 200, 'both PHI modes');
  t.equal(res.json().scope, CONTRACT_SCOPES.join(' '), 'every scope');
  const extension = await db
    .selectFrom('extensions')
    .selectAll()
    .where('agency_id', '=', 'demo')
    .where('name', '=', 'Demo integration')
    .executeTakeFirstOrThrow();
  t.ok(extension.capabilities.includes('referrals.create'), 'commands too');
  t.match(describeDemo(demo), demo.clientSecret);
  t.match(describeDemo(demo), `Agency console: http://localhost:3000/console/`);
  t.match(describeDemo(demo), `email admin@harborview.example, initial password ${demo.administrator.initialPassword}`);
  const administrator = await db
    .selectFrom('users')
    .select(['role', 'password_change_required'])
    .where('id', '=', demo.administrator.userId)
    .executeTakeFirstOrThrow();
  t.same(administrator, { role: 'administrator', password_change_required: true }, 'a console administrator');
  const editors = await db
    .selectFrom('working_collection_editors')
    .select('collection_id')
    .where('agency_id', '=', 'demo')
    .where('extension_id', '=', extension.id)
    .execute();
  t.equal(editors.length, 1, 'a working collection is shared with the demo integration as an editor');
});

t.test(
  "the demo is the demo seed's: the agency, its integration and its seed each leave its audit record",
  async (t) => {
    const audit = await db
      .selectFrom('audit_events')
      .select(['operation_id', 'extension_id', 'details'])
      .where('agency_id', '=', DEMO_AGENCY.id)
      .where('operation_id', 'in', ['createAgency', 'createIntegration', 'seedDemoAgency'])
      .orderBy('occurred_at')
      .execute();
    t.match(
      audit.map((row) => row.operation_id),
      ['createAgency', 'createIntegration', 'seedDemoAgency'],
    );
    t.ok(
      audit.every(
        (row) => row.extension_id === 'platform' && (row.details as { actor?: string }).actor === 'demo-seed',
      ),
    );
  },
);

t.test('demo seed fills an agency made with agency create, over its own service ZIPs', async (t) => {
  await createAgency(db, {
    id: 'seeded-by-cli',
    name: 'Cli Agency',
    serviceZips: ['43004', '43016', '43017', '43026'],
  });
  const run = (options: Record<string, string>) =>
    demoCommands.seed.run({ db, config: loadConfig({}), options, keyEncryption: () => testKeyEncryption });
  const out = await run({ agency: 'seeded-by-cli', size: 'small' });
  t.match(out.json, { agency_id: 'seeded-by-cli', size: 'small', rows: { patients: 300 } });
  t.match(out.text, /patients:\s+300/);
  const zips = await db
    .selectFrom('agency_service_zips')
    .select('zip_code')
    .where('agency_id', '=', 'seeded-by-cli')
    .orderBy('zip_code')
    .execute();
  t.same(
    zips.map((z) => z.zip_code),
    ['43004', '43016', '43017', '43026'],
    'the agency keeps its service area',
  );
  const outOfArea = await db
    .selectFrom('patients')
    .select('id')
    .where('agency_id', '=', 'seeded-by-cli')
    .where(
      'zip_code',
      'not in',
      zips.map((z) => z.zip_code),
    )
    .execute();
  t.equal(outOfArea.length, 0, 'every chart lives in the service area');

  await t.rejects(run({ agency: 'seeded-by-cli' }), /already has patients/);
  await t.rejects(run({ agency: 'seeded-by-cli', size: 'huge' }), /--size must be one of small, large/);
  await t.rejects(run({}), /--agency is required/);
});
