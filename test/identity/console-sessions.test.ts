import { createHash } from 'node:crypto';
import { t } from 'tap';
import { createUser } from '../../src/admin/user.js';
import {
  endSessionsOf,
  purgeEndedSessions,
  SESSION_IDLE_MS,
  sessionPerson,
  startSession,
} from '../../src/identity/console-sessions.js';
import { findPerson } from '../../src/identity/mcp-authorization/people.js';
import { testDatabase } from '../helpers/database.js';
import { createTestIntegration } from '../helpers/identity.js';

const { db } = await testDatabase();
const { agencyId } = await createTestIntegration(db);
const user = await createUser(db, {
  agencyId,
  email: `sessions-${Date.now()}@console.example`,
  name: 'Sam',
  role: 'staff',
});
const person = (await findPerson(db, user.userId))!;
const hashOf = (value: string) => createHash('sha256').update(value).digest('base64url');

t.test('a session names its person; the table keeps only the hash of the cookie value', async (t) => {
  const value = await startSession(db, person);
  t.match(await sessionPerson(db, value), { id: user.userId, agencyId });
  const rows = await db.selectFrom('console_sessions').selectAll().where('user_id', '=', user.userId).execute();
  t.ok(rows.some((row) => row.id_hash === hashOf(value)));
  t.notOk(
    rows.some((row) => row.id_hash === value),
    'never the value itself',
  );
  t.equal(await sessionPerson(db, 'not a session'), undefined);
});

t.test('an idle session, an ended one, and every session of a person ended are refused, then purged', async (t) => {
  const [idle, ended, live] = [
    await startSession(db, person),
    await startSession(db, person),
    await startSession(db, person),
  ];
  await db
    .updateTable('console_sessions')
    .set({ last_seen_at: new Date(Date.now() - SESSION_IDLE_MS - 1000) })
    .where('id_hash', '=', hashOf(idle))
    .execute();
  await db
    .updateTable('console_sessions')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('id_hash', '=', hashOf(ended))
    .execute();
  t.equal(await sessionPerson(db, idle), undefined, 'idle for longer than the limit');
  t.equal(await sessionPerson(db, ended), undefined, 'past its end');
  t.ok(await sessionPerson(db, live), 'the live one still works');
  t.ok((await purgeEndedSessions(db)) >= 2, 'housekeeping drops the idle and the ended');
  const left = await db.selectFrom('console_sessions').select('id_hash').where('user_id', '=', user.userId).execute();
  t.notOk(left.some((row) => [hashOf(idle), hashOf(ended)].includes(row.id_hash)));
  t.ok(left.some((row) => row.id_hash === hashOf(live)));
  await endSessionsOf(db, user.userId);
  t.equal(await sessionPerson(db, live), undefined, 'a password change ends every session of the person');
});
