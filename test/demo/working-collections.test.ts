import t from 'tap';
import { buildTestApp, signIn } from '../helpers/app.js';
import { seededAgency } from '../helpers/clinical.js';
import { testDatabase } from '../helpers/database.js';
import { listPage, walkList } from '../helpers/list-walk.js';

const { db } = await testDatabase();
const api = await buildTestApp();
// Its phi integration exists before the seed, so the demo shares a collection with it as an editor.
const { agencyId, phi } = await seededAgency(api);
const LIST = '/api/v1/ext/working-collections';

t.test(
  'the demo agency shares collections agency-wide and with its integration, and keeps others from it',
  async (t) => {
    const listed = (await listPage(phi, LIST)).data;
    const agencyWide = listed.filter((c: { visibility: string }) => c.visibility === 'agency');
    t.ok(agencyWide.length >= 2, 'at least two agency-wide');
    t.match(
      listed.filter((c: { visibility: string }) => c.visibility === 'editors'),
      [{ name: 'Unsigned orders to chase' }],
      'one shared with this integration',
    );
    const later = await signIn(api, { integration: { agencyId } });
    t.same(
      (await listPage(later, LIST)).data.map((c: { id: string }) => c.id),
      agencyWide.map((c: { id: string }) => c.id),
      'an integration created after the seed is no editor',
    );

    const hidden = await db
      .selectFrom('working_collections')
      .select(['id', 'visibility'])
      .where('agency_id', '=', agencyId)
      .where(
        'id',
        'not in',
        listed.map((c: { id: string }) => c.id),
      )
      .orderBy('visibility')
      .execute();
    t.same(
      hidden.map((c) => c.visibility),
      ['editors', 'personal'],
      'one shared with someone else only, one personal',
    );
    for (const { id } of hidden) {
      const refused = await phi.request({ method: 'GET', url: `${LIST}/${id}/rows` });
      t.match(refused.json().error, {
        code: 'PLATFORM_ACCESS_DENIED',
        details: { owner_name: /^\S+ \S+/, owner_role: /^(reviewer|marketer|clinician)$/ },
      });
    }
  },
);

t.test("demo rows fit their fields and refer to the agency's patients", async (t) => {
  const listed = (await listPage(phi, LIST)).data;
  for (const collection of listed) {
    const first = await listPage(phi, `${LIST}/${collection.id}/rows`, { limit: '200' });
    t.notOk(first.warnings, `${collection.name}: every value fits its field`);
    t.equal(first.meta.total, collection.row_count);
    t.ok(first.meta.collection.fields.some((f: { type: string }) => f.type === 'patient_reference'));
    const { ids } = await walkList(phi, `${LIST}/${collection.id}/rows`, {}, 'cursor', 200);
    t.equal(ids.length, collection.row_count, `${collection.name}: a cursor walk reads every row`);
    const patient = await phi.request({ method: 'GET', url: `/api/v1/ext/patients/${first.data[0].values.patient}` });
    t.equal(patient.statusCode, 200, `${collection.name}: a patient reference is a patient id`);
  }
  const orders = listed.find((c: { name: string }) => c.name === 'Unsigned orders to chase');
  const { meta, data } = await listPage(phi, `${LIST}/${orders.id}/rows`, { limit: '5' });
  t.match(
    meta.collection.fields,
    [{ id: 'patient' }, { id: 'order', type: 'order_reference' }],
    'an order reference field',
  );
  for (const { values } of data) {
    const order = await phi.request({ method: 'GET', url: `/api/v1/ext/physician-orders/${values.order}` });
    t.match(
      order.json().data,
      { patient_id: values.patient, signature_status: 'awaiting_signature' },
      'each row is about an unsigned order of its patient',
    );
  }
});
