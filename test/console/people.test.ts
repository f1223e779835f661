import { sql } from 'kysely';
import { t } from 'tap';
import { openHeadlessChromium } from '../helpers/chromium.js';
import {
  accessibilityViolations,
  keyboardWalk,
  httpSession,
  pageText,
  press,
  shot,
  signInAs,
  typeInto,
  inBrowser,
  consoleTestbed,
} from '../helpers/console.js';

t.setTimeout(240_000);
const { server, db, agency, other: elsewhere } = await consoleTestbed(t);

const userRow = (email: string) =>
  db.selectFrom('users').select(['id', 'role', 'status']).where('email', '=', email).executeTakeFirst();

t.test('only administrators change people: others get 403 and nothing changes', async (t) => {
  for (const who of [agency.manager, agency.staff]) {
    const session = await httpSession(server, who);
    const page = await session.get('/console/people');
    t.equal(page.statusCode, 200, `${who.role} reads the page`);
    t.match(page.body, agency.administrator.email, 'and sees the people');
    t.notMatch(page.body, /Add a person|Change role/, 'without the forms');
    const email = `never-${who.role}@console.example`;
    const add = await session.post('/console/people', { name: 'Never', email, role: 'staff' });
    t.equal(add.statusCode, 403);
    t.equal(await userRow(email), undefined, 'nobody added');
    const disable = await session.post(`/console/people/${agency.administrator.userId}/status`, { status: 'disabled' });
    t.equal(disable.statusCode, 403);
    t.match(await userRow(agency.administrator.email), { status: 'active' });
  }
});

t.test('an administrator of another agency neither sees nor changes these people', async (t) => {
  const session = await httpSession(server, elsewhere.administrator);
  t.notMatch((await session.get('/console/people')).body, agency.staff.email);
  const res = await session.post(`/console/people/${agency.staff.userId}/status`, { status: 'disabled' });
  t.equal(res.statusCode, 404);
  t.match(res.body, /There is no such person in this agency/);
  t.match(await userRow(agency.staff.email), { status: 'active' });
  const role = await session.post(`/console/people/${agency.staff.userId}/role`, { role: 'administrator' });
  t.equal(role.statusCode, 404);
  t.match(await userRow(agency.staff.email), { role: 'staff' });
});

t.test('a post without the form token changes nothing', async (t) => {
  const session = await httpSession(server, agency.administrator);
  const res = await server.app.inject({
    method: 'POST',
    url: `/console/people/${agency.staff.userId}/status`,
    headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'status=disabled',
  });
  t.equal(res.statusCode, 403);
  t.match(await userRow(agency.staff.email), { status: 'active' });
});

t.test(
  "a page says what a change did only for a listed word: any other ?done= shows nothing, not even an object's own keys",
  async (t) => {
    const session = await httpSession(server, agency.manager);
    t.match((await session.get('/console/people?done=role')).body, /class="notice done"[^>]*>The role is changed/);
    for (const word of ['constructor', 'toString', '__proto__', 'The+role+is+changed', '']) {
      const page = await session.get(`/console/people?done=${word}`);
      t.equal(page.statusCode, 200, word);
      t.notMatch(page.body, /class="notice/, `no notice for "${word}"`);
    }
  },
);

t.test('administrators cannot lock themselves out', async (t) => {
  const session = await httpSession(server, agency.administrator);
  const res = await session.post(`/console/people/${agency.administrator.userId}/status`, { status: 'disabled' });
  t.equal(res.statusCode, 400);
  t.match(await userRow(agency.administrator.email), { status: 'active' });
});

t.test(
  'in a browser: an administrator adds a person, changes a role, disables and enables; audited with the person',
  inBrowser,
  async (t) => {
    const page = await openHeadlessChromium(t);
    await signInAs(page, server.base, agency.administrator);
    await page.navigate(`${server.base}/console/people`);
    t.same(await accessibilityViolations(page), [], 'people: no serious or critical axe violation');
    const walk = await keyboardWalk(page);
    t.same(walk.reached, walk.inPageOrder, 'Tab reaches everything, in page order');
    await shot(page, 'people');
    const email = `nia-${Date.now()}@console.example`;
    await typeInto(page, 'Name', 'Nia Reviewer');
    await typeInto(page, 'Email', email);
    await page.evaluate(`document.getElementById('role').value = 'manager'`);
    await press(page, 'Add the person');
    const shown = await pageText(page);
    t.match(shown, /Nia Reviewer is added as manager/);
    const initialPassword = await page.evaluate<string>(`document.querySelector('.secret').textContent`);
    t.match(initialPassword, /^\S{12,}$/, 'the initial password, shown once');
    t.same(await accessibilityViolations(page), [], 'person added: no serious or critical axe violation');
    await shot(page, 'person-added');
    const added = await userRow(email);
    t.match(added, { role: 'manager', status: 'active' });

    await page.navigate(`${server.base}/console/people`);
    await page.evaluate(`document.getElementById('role-${added!.id}').value = 'staff'`);
    await press(page, 'Change role', `document.getElementById('role-${added!.id}').form`);
    t.match(await pageText(page), /The role is changed/);
    t.match(await userRow(email), { role: 'staff' });
    await press(page, 'Disable Nia Reviewer');
    t.match(await pageText(page), /The person is disabled/);
    t.match(await userRow(email), { status: 'disabled' });
    await press(page, 'Enable Nia Reviewer');
    t.match(await userRow(email), { status: 'active' });

    const audit = await db
      .selectFrom('audit_events')
      .select(['operation_id', 'details', 'resource_ids'])
      .where('agency_id', '=', agency.agencyId)
      .where('operation_id', 'in', ['createUser', 'changeUserRole', 'disableUser', 'enableUser'])
      .where(sql<boolean>`resource_ids @> array[${added!.id}]::text[]`)
      .orderBy('occurred_at')
      .execute();
    t.same(
      audit.map((row) => [row.operation_id, (row.details as { actor?: string }).actor]),
      ['createUser', 'changeUserRole', 'disableUser', 'enableUser'].map((op) => [
        op,
        `user:${agency.administrator.userId}`,
      ]),
      'every change on the audit trail with the administrator as actor',
    );
  },
);
