import t from 'tap';
import { randomUUID } from 'node:crypto';
import { buildTestApp, signIn, type Response, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';
import { queryTokenHash } from '../../../src/identity/query-tokens.js';

const { db } = await testDatabase();
// Policies read on every request: the integration-wide revocation below is seen at once rather than within AUTH_STATE_TTL_MS.
const api = await buildTestApp({ authStateTtlMs: 0 });
const { agencyId, phi, noPhi } = await seededAgency(api);
const other = await signIn(api, { phiMode: 'phi' });
const sameAgencyOtherExtension = await signIn(api, { phiMode: 'phi', integration: { agencyId } });

const TOKENS = '/api/v1/ext/query-tokens';
const today = new Date().toISOString().slice(0, 10);
const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
const key = () => `qt-${randomUUID()}`;

function create(session: SignedInApi, body: Record<string, unknown>, idempotencyKey = key()): Promise<Response> {
  return session.request({
    method: 'POST',
    url: TOKENS,
    headers: { 'idempotency-key': idempotencyKey },
    payload: body,
  });
}

async function created(session: SignedInApi, body: Record<string, unknown>) {
  const res = await create(session, body);
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
  return res.json().data as { id: string; token: string; parameters: Record<string, unknown> };
}

/** runQuery with a query token instead of the session's access token. */
function runWith(secret: string, queryId: string, body: Record<string, unknown> = {}): Promise<Response> {
  return api.request({
    method: 'POST',
    url: `/api/v1/ext/queries/${queryId}/run`,
    headers: { authorization: `Bearer ${secret}` },
    payload: body,
  });
}

t.test(
  'create: the secret once (qt_ + 32 bytes), only its hash stored, parameters validated with defaults, 90 days, no_phi',
  async (t) => {
    const res = await create(noPhi, {
      name: 'Morning visits',
      query_id: 'visits_missed_or_late',
      parameters: { from: monthAgo, to: today },
    });
    t.equal(res.statusCode, 200);
    const data = res.json().data;
    t.match(data.token, /^qt_[A-Za-z0-9_-]{43}$/);
    t.match(data, {
      id: /^qtk_/,
      name: 'Morning visits',
      status: 'active',
      query_id: 'visits_missed_or_late',
      phi_mode: 'no_phi',
      revoked_at: null,
      last_used_at: null,
    });
    t.same(data.parameters, { from: monthAgo, to: today, grace_minutes: 15 });
    t.equal(data.token_hint, data.token.slice(-4));
    const days = (Date.parse(data.expires_at) - Date.parse(data.created_at)) / 86_400_000;
    t.equal(Math.round(days), 90);
    const row = await db.selectFrom('query_tokens').selectAll().where('id', '=', data.id).executeTakeFirstOrThrow();
    t.equal(row.token_hash, queryTokenHash(data.token));
    t.notOk(JSON.stringify(row).includes(data.token), 'the secret is not stored in its row');
    const listed = (await noPhi.request({ method: 'GET', url: TOKENS })).json().data;
    t.notOk(JSON.stringify(listed).includes(data.token), 'never listed');
  },
);

t.test('create refusals', async (t) => {
  const unknown = await create(phi, { name: 'x', query_id: 'nope' });
  t.equal(unknown.json().error.code, 'PLATFORM_QUERY_NOT_FOUND');
  const params = await create(phi, { name: 'x', query_id: 'visits_missed_or_late', parameters: { from: 'yesterday' } });
  t.equal(params.statusCode, 400);
  t.equal(params.json().code, 'PLATFORM_INVALID_INPUT');
  const tooLong = await create(phi, {
    name: 'x',
    query_id: 'active_census',
    expires_at: new Date(Date.now() + 400 * 86_400_000).toISOString(),
  });
  t.match(tooLong.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'expires_at' } });
  const past = await create(phi, {
    name: 'x',
    query_id: 'active_census',
    expires_at: new Date(Date.now() - 1000).toISOString(),
  });
  t.equal(past.statusCode, 400);
  const escalation = await create(noPhi, { name: 'x', query_id: 'active_census', phi_mode: 'phi' });
  t.equal(escalation.statusCode, 403);
  t.equal(escalation.json().error.code, 'PLATFORM_PHI_MODE_DENIED', 'a no_phi session cannot mint a phi token');
  const narrow = await signIn(api, {
    integration: { agencyId, capabilities: ['oauth.token', 'queries.run', 'query_tokens.manage', 'patients.read'] },
  });
  const notAllowed = await create(narrow, { name: 'x', query_id: 'orders_awaiting_signature' });
  t.match(notAllowed.json().error, {
    code: 'PLATFORM_QUERY_NOT_ALLOWED',
    details: { capability: 'physician_orders.read' },
  });
  t.equal((await create(narrow, { name: 'x', query_id: 'active_census' })).statusCode, 200);
  const unknownField = await create(phi, { name: 'x', query_id: 'active_census', query_ids: ['active_census'] });
  t.equal(unknownField.statusCode, 400);
});

t.test(
  'a token runs its own query with its own parameters, read-only, in its PHI mode, metered and audited under its extension',
  async (t) => {
    const token = await created(phi, {
      name: 'Orders',
      query_id: 'orders_awaiting_signature',
      parameters: { aging_bucket: '31_plus_days' },
      phi_mode: 'no_phi',
    });
    const res = await runWith(token.token, 'orders_awaiting_signature', {
      limit: 5,
      natural_language_input: 'old orders',
    });
    t.equal(res.statusCode, 200);
    const { data } = res.json();
    t.ok(data.rows.length > 0);
    t.ok(
      data.rows.every(
        (r: { aging_bucket: string; order_id: string }) =>
          r.aging_bucket === '31_plus_days' && r.order_id.startsWith('OR-'),
      ),
      'its parameters, reduced for no_phi',
    );
    const next = await runWith(token.token, 'orders_awaiting_signature', { limit: 500, cursor: data.nextCursor });
    t.equal(next.statusCode, 200, 'limit and cursor vary');
    t.equal(
      (await runWith(token.token, 'orders_awaiting_signature', { parameters: { aging_bucket: '31_plus_days' } }))
        .statusCode,
      200,
      'the same parameters may be sent',
    );
    const otherParams = await runWith(token.token, 'orders_awaiting_signature', {
      parameters: { aging_bucket: 'not_sent' },
    });
    t.equal(otherParams.statusCode, 403);
    t.equal(otherParams.json().error.code, 'PLATFORM_QUERY_NOT_ALLOWED');
    // A token made before its query gained a defaulted parameter: the same parameters sent back still match (under
    // another extension of the agency, so that this extension's audit and metering counts below stay its own).
    const range = { from: monthAgo, to: today };
    const older = await created(sameAgencyOtherExtension, {
      name: 'Visits',
      query_id: 'visits_missed_or_late',
      parameters: range,
      phi_mode: 'no_phi',
    });
    await db
      .updateTable('query_tokens')
      .set({ parameters: JSON.stringify(range) })
      .where('id', '=', older.id)
      .execute();
    t.equal(
      (await runWith(older.token, 'visits_missed_or_late', { parameters: range })).statusCode,
      200,
      'compared after both are filled with the declared defaults',
    );
    const otherQuery = await runWith(token.token, 'active_census');
    t.equal(otherQuery.statusCode, 403);
    t.match(otherQuery.json().error, {
      code: 'PLATFORM_QUERY_NOT_ALLOWED',
      details: { token_query_id: 'orders_awaiting_signature' },
    });

    for (const [method, url] of [
      ['GET', '/api/v1/ext/health'],
      ['GET', '/api/v1/ext/patients'],
      ['GET', TOKENS],
      ['GET', `${TOKENS}/${token.id}/templates/excel/power-query`],
    ] as const) {
      const elsewhere = await api.request({ method, url, headers: { authorization: `Bearer ${token.token}` } });
      t.equal(elsewhere.statusCode, 401, url);
      t.equal(elsewhere.json().code, 'PLATFORM_INVALID_CREDENTIAL');
    }
    const write = await api.request({
      method: 'DELETE',
      url: `${TOKENS}/${token.id}`,
      headers: { authorization: `Bearer ${token.token}`, 'idempotency-key': key() },
    });
    t.equal(write.statusCode, 401, 'a token cannot revoke itself or anything else');

    const extensionId = phi.integration.extensionId;
    let audited: { details: Record<string, unknown> | null; phi_mode: string }[] = [];
    for (
      const deadline = Date.now() + 5_000;
      Date.now() < deadline && audited.length < 3;
      await new Promise((r) => setTimeout(r, 50))
    ) {
      audited = await db
        .selectFrom('audit_events')
        .select(['details', 'phi_mode'])
        .where('extension_id', '=', extensionId)
        .where('operation_id', '=', 'runQuery')
        .where('status', '=', 200)
        .execute();
    }
    t.equal(audited.length, 3);
    t.match(
      audited.find((a) => a.details?.natural_language_input === 'old orders'),
      {
        phi_mode: 'no_phi',
        details: {
          query_id: 'orders_awaiting_signature',
          query_token_id: token.id,
          parameters: { aging_bucket: '31_plus_days' },
        },
      },
    );
    const metered = await db
      .selectFrom('metering_events')
      .select(['cost_units'])
      .where('extension_id', '=', extensionId)
      .where('operation_id', '=', 'runQuery')
      .execute();
    t.ok(metered.length >= 3 && metered.every((m) => m.cost_units === 5 || m.cost_units === 0));
    const listed = (await phi.request({ method: 'GET', url: TOKENS }))
      .json()
      .data.find((q: { id: string }) => q.id === token.id);
    t.type(listed.last_used_at, 'string', 'last use recorded');
  },
);

t.test("revocation and expiry stop a token at once; unknown secrets and other agencies' ids are refused", async (t) => {
  const token = await created(phi, { name: 'Census', query_id: 'active_census' });
  t.equal((await runWith(token.token, 'active_census')).statusCode, 200);
  const revoked = await phi.request({
    method: 'DELETE',
    url: `${TOKENS}/${token.id}`,
    headers: { 'idempotency-key': key() },
  });
  t.equal(revoked.statusCode, 200);
  t.match(revoked.json().data, { status: 'revoked', revoked_at: String });
  const after = await runWith(token.token, 'active_census');
  t.equal(after.statusCode, 401);
  t.equal(after.json().code, 'PLATFORM_TOKEN_REVOKED');
  const again = await phi.request({
    method: 'DELETE',
    url: `${TOKENS}/${token.id}`,
    headers: { 'idempotency-key': key() },
  });
  t.equal(again.json().data.revoked_at, revoked.json().data.revoked_at, 'revoking twice keeps the first revocation');

  const expiring = await created(phi, { name: 'Soon', query_id: 'active_census' });
  await db
    .updateTable('query_tokens')
    .set({ created_at: new Date(Date.now() - 2000), expires_at: new Date(Date.now() - 1000) })
    .where('id', '=', expiring.id)
    .execute();
  const expired = await runWith(expiring.token, 'active_census');
  t.equal(expired.statusCode, 401);
  t.equal(expired.json().code, 'PLATFORM_TOKEN_EXPIRED');
  t.equal((await runWith(`qt_${'A'.repeat(43)}`, 'active_census')).json().code, 'PLATFORM_INVALID_CREDENTIAL');

  for (const session of [other, sameAgencyOtherExtension]) {
    const foreign = await session.request({
      method: 'DELETE',
      url: `${TOKENS}/${token.id}`,
      headers: { 'idempotency-key': key() },
    });
    t.equal(foreign.statusCode, 404);
    t.equal(
      (await session.request({ method: 'GET', url: `${TOKENS}/${expiring.id}/templates/excel/office-script` }))
        .statusCode,
      404,
    );
    t.notOk(
      (await session.request({ method: 'GET', url: TOKENS }))
        .json()
        .data.some((q: { id: string }) => q.id === token.id),
    );
  }
  const otherToken = await created(other, { name: 'Theirs', query_id: 'active_census' });
  const theirs = (await runWith(otherToken.token, 'active_census')).json().data;
  t.same(theirs.rows, [], "another agency's token reads its own agency, which is empty");

  const disabledBefore = await created(phi, { name: 'Before revoke-tokens', query_id: 'active_census' });
  await db
    .updateTable('extensions')
    .set({ tokens_revoked_before: new Date(Date.now() + 1000) })
    .where('agency_id', '=', agencyId)
    .where('id', '=', phi.integration.extensionId)
    .execute();
  t.equal(
    (
      await api.request({
        method: 'POST',
        url: '/api/v1/ext/queries/active_census/run',
        headers: { authorization: `Bearer ${disabledBefore.token}` },
        payload: {},
      })
    ).statusCode,
    401,
    "revoking the integration's tokens revokes its query tokens created before",
  );
  await db
    .updateTable('extensions')
    .set({ tokens_revoked_before: null })
    .where('agency_id', '=', agencyId)
    .where('id', '=', phi.integration.extensionId)
    .execute();
});

t.test('the list: newest first, by status, paged by offset and cursor, the secret never shown', async (t) => {
  const session = await signIn(api, { phiMode: 'phi', integration: { agencyId } });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await created(session, { name: `Book ${i}`, query_id: 'active_census' })).id);
  await session.request({ method: 'DELETE', url: `${TOKENS}/${ids[1]}`, headers: { 'idempotency-key': key() } });
  const all = (await session.request({ method: 'GET', url: `${TOKENS}?limit=2` })).json();
  t.same(
    all.data.map((q: { id: string }) => q.id),
    [ids[4], ids[3]],
  );
  t.match(all.meta, { total: 5, total_exact: true, limit: 2, has_more: true, next_offset: 2 });
  const rest = (
    await session.request({
      method: 'GET',
      url: `${TOKENS}?limit=2&cursor=${encodeURIComponent(all.meta.next_cursor)}`,
    })
  ).json();
  t.same(
    rest.data.map((q: { id: string }) => q.id),
    [ids[2], ids[1]],
  );
  const revoked = (await session.request({ method: 'GET', url: `${TOKENS}?status=revoked` })).json().data;
  t.same(
    revoked.map((q: { id: string; status: string }) => [q.id, q.status]),
    [[ids[1], 'revoked']],
  );
  t.equal((await session.request({ method: 'GET', url: `${TOKENS}?status=active` })).json().meta.total, 4);
});

t.test('a replayed create answers the same token, and creates nothing twice', async (t) => {
  const idempotencyKey = key();
  const first = await create(phi, { name: 'Replay', query_id: 'active_census' }, idempotencyKey);
  const second = await create(phi, { name: 'Replay', query_id: 'active_census' }, idempotencyKey);
  t.equal(second.headers['idempotent-replayed'], 'true');
  t.equal(second.body, first.body);
  const rows = await db
    .selectFrom('query_tokens')
    .select('id')
    .where('agency_id', '=', agencyId)
    .where('name', '=', 'Replay')
    .execute();
  t.equal(rows.length, 1);
  const stored = await db
    .selectFrom('idempotency_keys')
    .select('response_body')
    .where('agency_id', '=', agencyId)
    .where('key', '=', idempotencyKey)
    .executeTakeFirstOrThrow();
  t.notOk(
    stored.response_body!.includes(first.json().data.token),
    'the stored answer is sealed: no secret in the database',
  );
});
