import { t } from 'tap';
import { createUser } from '../../src/admin/user.js';
import { openHeadlessChromium } from '../helpers/chromium.js';
import {
  accessibilityViolations,
  keyboardWalk,
  consoleAgency,
  formBody,
  formToken,
  httpSession,
  pageText,
  press,
  shot,
  signInAs,
  startConsoleServer,
  typeInto,
  inBrowser,
} from '../helpers/console.js';

t.setTimeout(240_000);
const server = await startConsoleServer(t);
const { db } = server;
const agency = await consoleAgency(db);

t.test('a page of the console without a session sends the browser to the sign-in form', async (t) => {
  const res = await server.app.inject({ url: '/console/' });
  t.equal(res.statusCode, 303);
  t.equal(res.headers.location, '/console/sign-in');
  const form = await server.app.inject({ url: '/console/sign-in' });
  t.equal(form.statusCode, 200);
  t.match(form.headers['content-security-policy'], /default-src 'none'; style-src 'self'/);
  t.equal(form.headers['x-frame-options'], 'DENY');
  t.notMatch(form.body, /<script|style=/, 'no script and no inline style on the page');
  t.match(form.body, /<form method="post" action="\/console\/sign-in"/, 'a plain HTML form that posts');
});

t.test('signing in sets an HTTP-only, same-site strict session cookie on the console path only', async (t) => {
  const form = await server.app.inject({ url: '/console/sign-in' });
  const res = await server.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: {
      cookie: form.cookies.map((c) => `${c.name}=${c.value}`).join('; '),
      'content-type': 'application/x-www-form-urlencoded',
    },
    payload: formBody({ _csrf: formToken(form.body), email: agency.staff.email, password: agency.staff.password }),
  });
  t.equal(res.statusCode, 303);
  const session = res.cookies.find((c) => c.name === 'console_session');
  t.match(session, { path: '/console', httpOnly: true, sameSite: 'Strict' });
  t.notOk(session?.secure, 'Secure only where the service is https (this test server is http on loopback)');
});

t.test('a form without its token, or with another person’s, changes nothing: 403', async (t) => {
  const staff = await httpSession(server, agency.staff);
  const other = await httpSession(server, agency.manager);
  const noToken = await server.app.inject({
    method: 'POST',
    url: '/console/sign-out',
    headers: { cookie: staff.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: '',
  });
  t.equal(noToken.statusCode, 403);
  t.match(noToken.body, /This form has expired or did not come from the console/);
  const othersToken = formToken((await other.get('/console/')).body);
  const crossed = await server.app.inject({
    method: 'POST',
    url: '/console/sign-out',
    headers: { cookie: staff.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: formBody({ _csrf: othersToken }),
  });
  t.equal(crossed.statusCode, 403, "a token made for another person's page is refused");
  t.equal((await staff.get('/console/')).statusCode, 200, 'the session is still signed in');
  const signedOut = await staff.post('/console/sign-out', {});
  t.equal(signedOut.statusCode, 303);
  t.equal((await staff.get('/console/')).statusCode, 303, 'signed out: the old cookie opens nothing');
});

t.test(
  'the sign-in limits of the MCP surface: an account past five failures is refused from that address',
  async (t) => {
    const person = agency.manager;
    const form = await server.app.inject({ url: '/console/sign-in' });
    const attempt = () =>
      server.app.inject({
        method: 'POST',
        url: '/console/sign-in',
        remoteAddress: '203.0.113.9',
        headers: {
          cookie: form.cookies.map((c) => `${c.name}=${c.value}`).join('; '),
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: formBody({ _csrf: formToken(form.body), email: person.email, password: 'not the password at all' }),
      });
    for (let i = 0; i < 5; i++) t.equal((await attempt()).statusCode, 401);
    const refused = await attempt();
    t.equal(refused.statusCode, 429);
    t.match(refused.body, /Too many attempts: try again in \d+ minutes?/);
    t.ok(refused.headers['retry-after']);
  },
);

t.test('a disabled person is signed out at the next page', async (t) => {
  const session = await httpSession(server, agency.staff);
  t.equal((await session.get('/console/')).statusCode, 200);
  await db.updateTable('users').set({ status: 'disabled' }).where('id', '=', agency.staff.userId).execute();
  t.teardown(() => db.updateTable('users').set({ status: 'active' }).where('id', '=', agency.staff.userId).execute());
  t.equal((await session.get('/console/')).statusCode, 303);
});

t.test(
  'in a browser: the first sign-in asks for a password, then the overview; keyboard and axe clean',
  inBrowser,
  async (t) => {
    const page = await openHeadlessChromium(t);
    const user = await createUser(db, {
      agencyId: agency.agencyId,
      email: `first-${Date.now()}@console.example`,
      name: 'Fay First',
      role: 'manager',
    });
    await page.navigate(`${server.base}/console/`);
    t.equal(await page.evaluate('location.pathname'), '/console/sign-in');
    t.same(await accessibilityViolations(page), [], 'sign-in: no serious or critical axe violation');
    await shot(page, 'sign-in');
    await typeInto(page, 'Email', user.email);
    await typeInto(page, 'Password', user.initialPassword);
    await press(page, 'Sign in');
    t.match(await pageText(page), /Choose your own password/);
    t.same(await accessibilityViolations(page), [], 'password change: no serious or critical axe violation');
    await shot(page, 'password-change');
    await typeInto(page, 'Password you were given', user.initialPassword);
    await typeInto(page, 'New password (at least 12 characters)', 'my own long password');
    await typeInto(page, 'New password again', 'my own long password');
    await press(page, 'Save and sign in');
    t.equal(await page.evaluate('location.pathname'), '/console/');
    t.match(await pageText(page), /Fay First/);
    t.match(await pageText(page), /You decide the proposals of assistants/);
    t.same(await accessibilityViolations(page), [], 'overview: no serious or critical axe violation');
    await shot(page, 'overview');
    const walk = await keyboardWalk(page);
    t.same(walk.reached, walk.inPageOrder, 'Tab reaches everything, in page order');
    const audit = await db
      .selectFrom('audit_events')
      .select(['operation_id', 'details'])
      .where('agency_id', '=', agency.agencyId)
      .where('operation_id', '=', 'changeOwnPassword')
      .execute();
    t.match(audit, [{ details: { actor: `user:${user.userId}` } }], 'the change is on the audit trail with the person');
    await signInAs(page, server.base, { email: user.email, password: user.initialPassword } as never);
    t.match(await pageText(page), /The email or password is not right/, 'the password handed over stopped working');
  },
);
