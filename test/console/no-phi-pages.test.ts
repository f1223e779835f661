/**
 * No console page shows PHI: an agency with the demo book of business (300 patients), an imported 835 whose claims
 * name patients, and calls in an integration's request log; every page an administrator can open is read, and none
 * holds a patient's name, member id, claim number or patient control number.
 */
import { sql } from 'kysely';
import { t } from 'tap';
import { seedDemoAgency } from '../../src/demo/seed.js';
import { consoleTestbed, httpSession } from '../helpers/console.js';
import { fixtureText, importText } from '../helpers/era-files.js';
import { bearer, issueTestToken } from '../helpers/identity.js';
import { until } from '../helpers/until.js';

t.setTimeout(240_000);
const { server, db, agency } = await consoleTestbed(t);
const { agencyId } = agency;
await seedDemoAgency(db, { agencyId, size: 'small' });
const era = await importText(db, agencyId, 'medicare.835', fixtureText('medicare-home-health-crlf.835'));
const token = await issueTestToken(server, agency.integration, 'phi');
await server.request({ url: '/api/v1/ext/patients?limit=5', headers: bearer(token) });
await until('the call is in the request log', async () =>
  Boolean(
    await db.selectFrom('metering_events').select('request_id').where('agency_id', '=', agencyId).executeTakeFirst(),
  ),
);

/** What names a patient in this agency: names, member ids, claim and control numbers (at least 4 characters). */
async function patientValues(): Promise<string[]> {
  const { rows } = await sql<{ value: string }>`
    select first_name || ' ' || last_name as value from patients where agency_id = ${agencyId}
    union select last_name from patients where agency_id = ${agencyId} and length(last_name) >= 6
    union select unnest(array[patient_last_name, member_id, patient_control_number, payer_claim_number])
      from remittance_allocations where agency_id = ${agencyId}`.execute(db);
  return rows.map((row) => row.value).filter((value) => value && value.length >= 4);
}

t.test('every page an administrator opens is free of the agency’s patients', async (t) => {
  const values = await patientValues();
  t.ok(values.length > 300, `${values.length} values that name patients`);
  const session = await httpSession(server, agency.administrator);
  const clientId = agency.integration.clientId;
  const pages = [
    '/console/',
    '/console/integrations',
    `/console/integrations/${clientId}`,
    `/console/integrations/${clientId}/requests`,
    '/console/webhooks',
    '/console/proposals?status=any',
    '/console/imports',
    `/console/imports/era/${era.eraFileId}`,
    '/console/people',
  ];
  for (const path of pages) {
    const res = await session.get(path);
    t.equal(res.statusCode, 200, path);
    const text = res.body.toLowerCase();
    t.same(
      values.filter((value) => text.includes(value.toLowerCase())),
      [],
      `${path}: no patient value`,
    );
  }
});
