import t from 'tap';
import { TenantPseudonyms } from '../../src/db/pseudonyms.js';
import { testDatabase } from '../helpers/database.js';

const database = await testDatabase();
const suffix = Math.random().toString(36).slice(2, 8);
const agencyA = `pa_${suffix}`;
const agencyB = `pb_${suffix}`;
await database.db
  .insertInto('agencies')
  .values([
    { id: agencyA, name: 'A' },
    { id: agencyB, name: 'B' },
  ])
  .execute();
const inAgency = {
  [agencyA]: new TenantPseudonyms(database.db, agencyA),
  [agencyB]: new TenantPseudonyms(database.db, agencyB),
};

t.test('handles are random, prefixed and stable per resource', async (t) => {
  const first = await inAgency[agencyA].handlesFor('physician_order', ['ord_1', 'ord_2', 'ord_1']);
  t.equal(first.size, 2);
  t.match(first.get('ord_1'), /^OR-[0-9A-HJKMNP-TV-Z]{12}$/);
  t.not(first.get('ord_1'), first.get('ord_2'));
  const again = await inAgency[agencyA].handlesFor('physician_order', ['ord_2', 'ord_1', 'ord_3']);
  t.equal(again.get('ord_1'), first.get('ord_1'));
  t.equal(again.get('ord_2'), first.get('ord_2'));
  t.notOk(first.get('ord_1')!.includes('ord_1'), 'not derived from the real id');
});

t.test(
  'the same resource gets a different handle in another agency, and handles resolve only where issued',
  async (t) => {
    const inA = await inAgency[agencyA].handleFor('patient', 'pat_1');
    const inB = await inAgency[agencyB].handleFor('patient', 'pat_1');
    t.not(inA, inB);
    t.equal(await inAgency[agencyA].resolve('patient', inA), 'pat_1');
    await t.rejects(inAgency[agencyB].resolve('patient', inA), { code: 'PLATFORM_PSEUDONYM_UNRESOLVED' });
    await t.rejects(
      inAgency[agencyA].resolve('physician', inA),
      { code: 'PLATFORM_PSEUDONYM_UNRESOLVED' },
      'kind must match',
    );
    await t.rejects(inAgency[agencyA].resolve('patient', 'PT-NOPE'), { code: 'PLATFORM_PSEUDONYM_UNRESOLVED' });
  },
);

t.test('concurrent first requests for one resource agree on one handle', async (t) => {
  const results = await Promise.all(Array.from({ length: 8 }, () => inAgency[agencyA].handleFor('claim', 'clm_race')));
  t.equal(new Set(results).size, 1);
});
