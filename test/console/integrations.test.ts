import { t } from 'tap';
import { insertMeteringEvents, type MeteringEvent } from '../../src/gateway/core/metering.js';
import { openHeadlessChromium, type HeadlessPage } from '../helpers/chromium.js';
import {
  accessibilityViolations,
  consoleAgency,
  httpSession,
  keyboardWalk,
  pageText,
  press,
  shot,
  signInAs,
  typeInto,
  inBrowser,
  consoleTestbed,
} from '../helpers/console.js';
import { until } from '../helpers/until.js';

t.setTimeout(300_000);
const { server, db, agency, other: elsewhere } = await consoleTestbed(t);
const { clientId } = agency.integration;
const integrationPage = `/console/integrations/${clientId}`;

const statusOf = async (id: string) =>
  await db
    .selectFrom('client_credentials as c')
    .innerJoin('extensions as e', (join) =>
      join.onRef('e.id', '=', 'c.extension_id').onRef('e.agency_id', '=', 'c.agency_id'),
    )
    .select(['e.status', 'e.tokens_revoked_before'])
    .where('c.client_id', '=', id)
    .executeTakeFirstOrThrow();
const secretCount = async (id: string) =>
  (await db.selectFrom('client_secrets').select('id').where('client_id', '=', id).execute()).length;
const integrationCount = async (agencyId: string) =>
  (await db.selectFrom('extensions').select('id').where('agency_id', '=', agencyId).execute()).length;

async function token(id: string, secret: string, agencyId: string): Promise<Response> {
  return fetch(`${server.base}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: id,
      client_secret: secret,
      agency_id: agencyId,
      phi_mode: 'no_phi',
    }),
  });
}

/** Every change a form offers, as a post with the page's own form token (so only the role can refuse it). */
const CHANGES = ['rotate-secret', 'revoke-tokens', 'disable', 'enable'];

for (const role of ['staff', 'manager'] as const) {
  t.test(
    `a ${role} reads the list and the log; the forms are absent and posting them is 403, changing nothing`,
    async (t) => {
      const session = await httpSession(server, agency[role]);
      const list = await session.get('/console/integrations');
      t.equal(list.statusCode, 200);
      t.match(list.body, 'Census spreadsheet');
      t.match(
        list.body,
        /<td>MCP surface for people<\/td><td>none<\/td><td>active<\/td><td>people sign in<\/td>/,
        'the MCP surface has no client id, no page',
      );
      t.notMatch(list.body, 'Create an integration');
      const detail = await session.get(integrationPage);
      t.equal(detail.statusCode, 200);
      t.notMatch(detail.body, /<form method="post" action="\/console\/integrations/, 'no form that changes anything');
      t.equal((await session.get(`${integrationPage}/requests`)).statusCode, 200);
      t.equal((await session.get('/console/integrations/new')).statusCode, 403);
      const before = {
        status: await statusOf(clientId),
        secrets: await secretCount(clientId),
        integrations: await integrationCount(agency.agencyId),
      };
      for (const change of CHANGES) {
        const res = await session.post(`${integrationPage}/${change}`, {}, integrationPage);
        t.equal(res.statusCode, 403, change);
      }
      const created = await session.post('/console/integrations', { name: 'Not mine to make', phi_modes: 'no_phi' });
      t.equal(created.statusCode, 403);
      const after = {
        status: await statusOf(clientId),
        secrets: await secretCount(clientId),
        integrations: await integrationCount(agency.agencyId),
      };
      t.same(after, before, 'nothing changed, nothing created');
    },
  );
}

t.test('a change without the form token is 403 and changes nothing', async (t) => {
  const session = await httpSession(server, agency.administrator);
  const res = await server.app.inject({
    method: 'POST',
    url: `${integrationPage}/disable`,
    headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: '',
  });
  t.equal(res.statusCode, 403);
  t.equal((await statusOf(clientId)).status, 'active');
});

t.test('a person of another agency does not see the integration and gets 404 for its pages and changes', async (t) => {
  const session = await httpSession(server, elsewhere.administrator);
  const list = await session.get('/console/integrations');
  t.equal(list.statusCode, 200);
  t.notMatch(list.body, clientId);
  for (const path of [integrationPage, `${integrationPage}/requests`])
    t.equal((await session.get(path)).statusCode, 404, path);
  const before = { status: await statusOf(clientId), secrets: await secretCount(clientId) };
  for (const change of CHANGES)
    t.equal((await session.post(`${integrationPage}/${change}`, {})).statusCode, 404, change);
  t.same({ status: await statusOf(clientId), secrets: await secretCount(clientId) }, before, 'nothing changed');
});

t.test('a create the CLI would refuse is shown again with why, and nothing is created', async (t) => {
  const session = await httpSession(server, agency.administrator);
  const before = await integrationCount(agency.agencyId);
  const res = await session.post(
    '/console/integrations',
    { name: 'No PHI mode', scopes: 'external:patients:read', rate_limit: '10', daily_quota: '100' },
    '/console/integrations/new',
  );
  t.equal(res.statusCode, 400);
  t.match(res.body, 'Choose at least one PHI mode.');
  t.match(res.body, 'value="No PHI mode"', 'the form keeps what was sent');
  const zero = await session.post(
    '/console/integrations',
    { name: 'Zero', scopes: 'external:patients:read', phi_modes: 'no_phi', rate_limit: '0', daily_quota: '100' },
    '/console/integrations/new',
  );
  t.equal(zero.statusCode, 400);
  t.match(zero.body, 'Requests per minute must be a whole number of at least 1.');
  t.equal(await integrationCount(agency.agencyId), before);
});

t.test('the request log pages by time, 50 calls a page, newest first', async (t) => {
  const own = await consoleAgency(db);
  const extension = await db
    .selectFrom('client_credentials')
    .select('extension_id')
    .where('client_id', '=', own.integration.clientId)
    .executeTakeFirstOrThrow();
  const now = Date.now();
  const events: MeteringEvent[] = Array.from({ length: 55 }, (_, i) => ({
    agencyId: own.agencyId,
    extensionId: extension.extension_id,
    operationId: 'listPatients',
    status: 200,
    costUnits: 1,
    durationMs: 5,
    requestId: `req-page-${String(i).padStart(2, '0')}`,
    // Two calls share each millisecond: the keyset tells them apart by their place in the segment.
    occurredAtMs: now - 60_000 + Math.floor(i / 2),
    contractVersion: '2',
    replayed: false,
  }));
  await insertMeteringEvents(events).execute(db);
  const session = await httpSession(server, own.staff);
  const path = `/console/integrations/${own.integration.clientId}/requests`;
  const first = await session.get(path);
  const ids = (body: string) => [...body.matchAll(/req-page-(\d\d)/g)].map((m) => Number(m[1]));
  t.same(
    ids(first.body),
    Array.from({ length: 50 }, (_, i) => 54 - i),
  );
  const older = /href="([^"]+\?before=[^"]+)">Older requests/.exec(first.body)?.[1];
  t.ok(older, 'a link to older calls');
  const second = await session.get(older!.replaceAll('&amp;', '&'));
  t.same(ids(second.body), [4, 3, 2, 1, 0]);
  t.notMatch(second.body, 'Older requests');
  t.equal((await session.get(`${path}?before=not-a-place`)).statusCode, 400);
});

t.test('the request log finds older calls past its first look at the last hour, and none past 30 days', async (t) => {
  const own = await consoleAgency(db);
  const { extension_id } = await db
    .selectFrom('client_credentials')
    .select('extension_id')
    .where('client_id', '=', own.integration.clientId)
    .executeTakeFirstOrThrow();
  const now = Date.now();
  const [minute, hour, day] = [60_000, 3_600_000, 86_400_000];
  const call = (name: string, occurredAtMs: number): MeteringEvent => ({
    agencyId: own.agencyId,
    extensionId: extension_id,
    operationId: 'listPatients',
    status: 200,
    costUnits: 1,
    durationMs: 5,
    requestId: `req-look-${name}`,
    occurredAtMs,
  });
  const name = (letter: string, i: number) => `${letter}${String(i).padStart(2, '0')}`;
  // Each insert is a segment of its own: recent calls, one segment across the hour's edge, older ones, too old ones.
  for (const segment of [
    Array.from({ length: 30 }, (_, i) => call(name('a', i), now - 10 * minute + i)),
    [call('s00', now - 2 * hour), call('s01', now - 30 * minute)],
    Array.from({ length: 30 }, (_, i) => call(name('b', i), now - 3 * day + i)),
    Array.from({ length: 5 }, (_, i) => call(name('x', i), now - 40 * day + i)),
  ])
    await insertMeteringEvents(segment).execute(db);
  const session = await httpSession(server, own.staff);
  const names = (body: string) => [...body.matchAll(/req-look-([a-z]\d\d)/g)].map((m) => m[1]);
  const newestFirst = (letter: string, from: number, to: number) =>
    Array.from({ length: from - to + 1 }, (_, i) => name(letter, from - i));
  const first = await session.get(`/console/integrations/${own.integration.clientId}/requests`);
  t.same(names(first.body), [...newestFirst('a', 29, 0), 's01', 's00', ...newestFirst('b', 29, 12)]);
  const older = /href="([^"]+\?before=[^"]+)">Older requests/.exec(first.body)?.[1];
  const second = await session.get(older!.replaceAll('&amp;', '&'));
  t.same(names(second.body), newestFirst('b', 11, 0), 'the rest, and nothing older than 30 days');
  t.notMatch(second.body, 'Older requests');
});

async function secretOn(page: HeadlessPage) {
  return {
    clientId: await page.evaluate<string>(`document.getElementById('client-id').textContent`),
    secret: await page.evaluate<string>(`document.getElementById('client-secret').textContent`),
  };
}

t.test(
  'in a browser, an administrator creates an integration, calls the partition with it, and sees the calls',
  inBrowser,
  async (t) => {
    const page = await openHeadlessChromium(t);
    await signInAs(page, server.base, agency.administrator);
    await page.navigate(`${server.base}/console/integrations`);
    t.match(await pageText(page), /Census spreadsheet/);
    t.same(await accessibilityViolations(page), [], 'list: no serious or critical axe violation');
    await shot(page, 'integrations-list');

    await page.navigate(`${server.base}/console/integrations/new`);
    t.same(await accessibilityViolations(page), [], 'create form: no serious or critical axe violation');
    const walk = await keyboardWalk(page);
    t.same(walk.reached, walk.inPageOrder, 'Tab reaches every field, in page order');
    await shot(page, 'integrations-create');
    await typeInto(page, 'Name', 'Scheduling sync');
    await press(page, 'Create the integration');
    t.match(await pageText(page), /shown only this once/);
    const created = await secretOn(page);
    t.match(created.secret, /\S{20,}/);
    t.same(await accessibilityViolations(page), [], 'secret page: no serious or critical axe violation');
    await shot(page, 'integrations-secret');

    const issued = await token(created.clientId, created.secret, agency.agencyId);
    t.equal(issued.status, 200);
    const { access_token: accessToken } = (await issued.json()) as { access_token: string };
    const call = (path: string) =>
      fetch(`${server.base}/api/v1/ext${path}`, { headers: { authorization: `Bearer ${accessToken}` } });
    const answered = await call('/patients?limit=5');
    t.equal(answered.status, 200);
    const refused = await call('/patients/PT-not-a-handle');
    t.equal(refused.status, 404);
    const refusedBody = (await refused.json()) as { error: { code: string } | string; code?: string };
    const refusedCode = typeof refusedBody.error === 'string' ? refusedBody.code! : refusedBody.error.code;
    const requestIds = [answered, refused].map((res) => res.headers.get('x-request-id')!);

    const detail = `${server.base}/console/integrations/${created.clientId}`;
    await until('both calls are in the request log', async () => {
      await page.navigate(`${detail}/requests`);
      const text = await pageText(page);
      return requestIds.every((id) => text.includes(id));
    });
    const log = await pageText(page);
    t.match(log, new RegExp(`${requestIds[1]}[\\s\\S]*${requestIds[0]}`), 'newest first');
    t.match(log, refusedCode);
    t.same(await accessibilityViolations(page), [], 'request log: no serious or critical axe violation');
    await shot(page, 'integrations-log');

    await page.navigate(detail);
    const text = await pageText(page);
    t.match(text, new RegExp(`${refusedCode}\\s+1\\b`), 'the refusal grouped under its code');
    t.match(text, /Do not retry as is/, "the contract's next step for it");
    t.match(text, /Requests per day, last 14 days/);
    t.same(await accessibilityViolations(page), [], 'integration page: no serious or critical axe violation');
    await shot(page, 'integrations-detail');

    await press(page, 'Rotate the secret');
    const rotated = await secretOn(page);
    t.equal(rotated.clientId, created.clientId);
    t.not(rotated.secret, created.secret);
    t.equal((await token(created.clientId, rotated.secret, agency.agencyId)).status, 200, 'the new secret works');
    t.equal(
      (await token(created.clientId, created.secret, agency.agencyId)).status,
      200,
      'the old one, for the overlap',
    );

    await page.navigate(detail);
    await press(page, 'Disable the integration');
    t.match(await pageText(page), /The integration is disabled/);
    t.equal((await statusOf(created.clientId)).status, 'disabled');
    t.not((await token(created.clientId, rotated.secret, agency.agencyId)).status, 200, 'a disabled one gets no token');
    await shot(page, 'integrations-disabled');
    await press(page, 'Enable the integration');
    t.match(await pageText(page), /The integration is enabled/);
    t.equal((await statusOf(created.clientId)).status, 'active');
    await press(page, 'Revoke its tokens');
    t.match(await pageText(page), /Every token issued to the integration until now is revoked/);
    t.ok((await statusOf(created.clientId)).tokens_revoked_before);

    const audit = await db
      .selectFrom('audit_events')
      .select(['operation_id', 'details'])
      .where('agency_id', '=', agency.agencyId)
      .where('operation_id', 'in', [
        'createIntegration',
        'rotateClientSecret',
        'disableIntegration',
        'enableIntegration',
        'revokeIntegrationTokens',
      ])
      .execute();
    const actor = { details: { actor: `user:${agency.administrator.userId}` } };
    t.match(audit.map((a) => a.operation_id).sort(), [
      'createIntegration',
      'disableIntegration',
      'enableIntegration',
      'revokeIntegrationTokens',
      'rotateClientSecret',
    ]);
    t.match(
      audit,
      audit.map(() => actor),
      'every change is on the audit trail with the person',
    );
  },
);

t.test('the secret is the answer of the post only: no-store, no redirect, not in a URL', async (t) => {
  const session = await httpSession(server, agency.administrator);
  const res = await session.post(
    '/console/integrations',
    { name: 'Over HTTP', scopes: 'external:patients:read', phi_modes: 'no_phi', rate_limit: '10', daily_quota: '100' },
    '/console/integrations/new',
  );
  t.equal(res.statusCode, 200);
  t.equal(res.headers['cache-control'], 'no-store');
  t.notOk(res.headers.location);
  const created = await db
    .selectFrom('extensions')
    .select(['contract_version', 'rate_limit_per_minute', 'daily_quota', 'scopes'])
    .where('agency_id', '=', agency.agencyId)
    .where('name', '=', 'Over HTTP')
    .executeTakeFirstOrThrow();
  t.same(
    created,
    { contract_version: '2', rate_limit_per_minute: 10, daily_quota: 100, scopes: ['external:patients:read'] },
    'a version left out is the current one',
  );
  const secret = /id="client-secret">([^<]+)</.exec(res.body)?.[1];
  t.ok(secret);
  t.notMatch(res.body, new RegExp(`href="[^"]*${secret}`), 'no link carries it');
});
