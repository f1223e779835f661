import t from 'tap';
import { CursorSeal } from '../../src/identity/cursor-seal.js';
import { CursorSealer, type CursorHolder } from '../../src/db/cursor-sealer.js';
import { testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';

const seal = new CursorSeal((await testDatabase()).db, testKeyEncryption);
const holder: CursorHolder = { agencyId: 'agency_a', extensionId: 'ext_a', phiMode: 'phi' };
const sealer = (h = holder, operationId = 'listThings', path: Record<string, string> = { id: 'x1' }) =>
  new CursorSealer(seal, h, operationId, path);
const value = ['a,b', ['Smith', 7], 50, 120];

t.test('a cursor opens under the binding it was sealed with, whatever the order of its filters', async (t) => {
  const cursor = await sealer().seal(value, { status: 'active', office_id: 'o1', updated_since: undefined });
  t.same(await sealer().open(cursor, { office_id: 'o1', status: 'active' }), value);
});

t.test('under any other binding it does not open, exactly like a forged cursor', async (t) => {
  const selection = { status: 'active' };
  const cursor = await sealer().seal(value, selection);
  const others: [string, CursorSealer, Record<string, unknown>][] = [
    ['another agency', sealer({ ...holder, agencyId: 'agency_b' }), selection],
    ['another extension', sealer({ ...holder, extensionId: 'ext_b' }), selection],
    ['another PHI mode', sealer({ ...holder, phiMode: 'no_phi' }), selection],
    ['another operation', sealer(holder, 'listOtherThings'), selection],
    ['another path', sealer(holder, 'listThings', { id: 'x2' }), selection],
    ['other filters', sealer(), { status: 'discharged' }],
    ['fewer filters', sealer(), {}],
    ['more filters', sealer(), { ...selection, office_id: 'o1' }],
  ];
  for (const [why, other, otherSelection] of others) t.equal(await other.open(cursor, otherSelection), undefined, why);
  const forged = cursor.slice(0, 20) + (cursor[20] === 'A' ? 'B' : 'A') + cursor.slice(21);
  t.equal(await sealer().open(forged, selection), undefined, 'forged');
});

t.test('nothing of the binding is stored in the cursor', async (t) => {
  const small = await sealer().seal(value, {});
  const large = await sealer({ ...holder, agencyId: 'a'.repeat(200) }, 'listThings', {}).seal(value, {
    filter: 'f'.repeat(300),
  });
  t.equal(large.length, small.length);
});
