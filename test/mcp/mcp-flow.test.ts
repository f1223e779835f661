import { t } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { discoverAuthorizationServerMetadata, refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createAgency } from '../../src/admin/agency.js';
import { createUser } from '../../src/admin/user.js';
import { createMcpClient } from '../../src/admin/mcp-client.js';
import { seedDemoAgency } from '../../src/demo/seed.js';
import { testDatabase } from '../helpers/database.js';
import { FormBrowser, formAction } from './browser.js';
import { authorizeInBrowser, listeningApp, refusalOf, TestOAuthClient, withOwnPassword } from './mcp-helpers.js';

const db = (await testDatabase()).db;
const { base } = await listeningApp(t);
const mcpUrl = new URL(`${base}/api/v1/mcp`);
const redirectUri = 'http://127.0.0.1:1/callback';
const isCallback = (url: string) => url.startsWith(redirectUri);

await createAgency(db, { id: 'mcp-flow', name: 'MCP flow agency', serviceZips: ['02108'] });
await seedDemoAgency(db, { agencyId: 'mcp-flow', size: 'small' });
const user = await createUser(db, {
  agencyId: 'mcp-flow',
  email: 'Nurse.Manager@example.org',
  name: 'Nora Manager',
  role: 'manager',
});
const person = await withOwnPassword(db, user);
const client = await createMcpClient(db, 'Test assistant', [redirectUri]);

/** The authorization as a browser does it, each page checked. */
async function authorizeChecked(authorizationUrl: URL) {
  const { login, consent, callback, code } = await authorizeInBrowser(base, authorizationUrl, redirectUri, person);
  t.equal(login.status, 200, 'the login page');
  t.match(login.body, /Sign in to connect Test assistant/);
  t.equal(consent.status, 200, 'the consent page after signing in');
  t.match(consent.body, /Allow Test assistant\?/);
  t.match(consent.body, /Signed in as Nora Manager/);
  t.equal(callback.searchParams.get('iss'), base, 'RFC 9207: the issuer comes back with the code');
  return { code };
}

t.test('discovery: the 401 names the resource metadata, which names the authorization server', async (t) => {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: '{}',
  });
  t.equal(res.status, 401);
  t.equal(
    res.headers.get('www-authenticate'),
    `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/api/v1/mcp"`,
  );
  const resource = (await (await fetch(`${base}/.well-known/oauth-protected-resource/api/v1/mcp`)).json()) as {
    resource_name: string;
  };
  t.same(resource, {
    resource: mcpUrl.href,
    authorization_servers: [base],
    scopes_supported: ['mcp:tools', 'platform:read', 'no_phi', 'offline_access'],
    bearer_methods_supported: ['header'],
    resource_name: resource.resource_name,
  });
  const metadata = await discoverAuthorizationServerMetadata(base);
  t.match(metadata, {
    issuer: base,
    authorization_endpoint: `${base}/api/v1/oauth/authorize`,
    token_endpoint: `${base}/api/v1/oauth/token`,
    code_challenge_methods_supported: ['S256'],
    response_types_supported: ['code'],
    grant_types_supported: ['client_credentials', 'authorization_code', 'refresh_token'],
  });
});

t.test('PKCE: plain is refused, and so is a request without a challenge', async (t) => {
  const params = {
    client_id: client.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'mcp:tools no_phi',
    resource: mcpUrl.href,
  };
  for (const pkce of [{ code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, {}] as Record<
    string,
    string
  >[]) {
    const res = await new FormBrowser().open(
      `${base}/api/v1/oauth/authorize?${new URLSearchParams({ ...params, ...pkce })}`,
    );
    const back = new URL(res.location!);
    t.ok(isCallback(back.href), 'the error goes back to the exact redirect URI');
    t.equal(back.searchParams.get('error'), 'invalid_request', JSON.stringify(pkce));
  }
  const foreign = await new FormBrowser().open(
    `${base}/api/v1/oauth/authorize?${new URLSearchParams({ ...params, redirect_uri: 'http://127.0.0.1:1/other' })}`,
  );
  t.equal(foreign.status, 400, 'an unregistered redirect URI gets an error page, not a redirect');
  t.notOk(foreign.location);
});

t.test(
  'the SDK client: authorization code with PKCE, tools, refresh with rotation, reuse revokes the family',
  async (t) => {
    const oauth = new TestOAuthClient(client.clientId, redirectUri);
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth });
    await t.rejects(
      new Client({ name: 'test', version: '1' }).connect(first),
      /Unauthorized/,
      'no token yet: the client is sent to authorize',
    );
    const authorizationUrl = oauth.authorizationUrl!;
    t.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    t.equal(authorizationUrl.searchParams.get('resource'), mcpUrl.href, 'RFC 8707: the resource is the MCP endpoint');

    const { code } = await authorizeChecked(authorizationUrl);
    await first.finishAuth(code);
    const tokens = oauth.saved!;
    t.ok(tokens.access_token && tokens.refresh_token, 'an access token and a refresh token');
    t.equal(
      tokens.scope?.split(' ').sort().join(' '),
      'mcp:tools no_phi platform:read',
      "the access token's scopes (offline_access asked for the refresh token)",
    );

    const mcp = new Client({ name: 'test', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth }));
    const { tools } = await mcp.listTools();
    t.same(tools.map((tool) => tool.name).sort(), [
      'braes.agency.summary',
      'braes.orders.aging',
      'braes.proposals.create',
      'braes.proposals.status',
      'braes.quality.hhvbp_measures',
      'braes.quality.hhvbp_summary',
      'braes.queries.list',
      'braes.queries.run',
      'braes.referrals.pipeline',
      'braes.remittances.totals',
      'braes.visits.missed_late',
    ]);
    t.same(
      tools.filter((tool) => tool.annotations?.readOnlyHint !== true).map((tool) => tool.name),
      ['braes.proposals.create'],
      'every tool but the proposal is read-only',
    );
    t.ok(
      tools.every((tool) => tool.inputSchema.type === 'object'),
      'inputs have JSON schemas',
    );

    // One active chart without an office: it still counts, under Unassigned.
    const unassigned = await db
      .selectFrom('patients')
      .select('id')
      .where('agency_id', '=', 'mcp-flow')
      .where('status', '=', 'active')
      .limit(1)
      .executeTakeFirstOrThrow();
    await db
      .updateTable('patients')
      .set({ office_id: null })
      .where('agency_id', '=', 'mcp-flow')
      .where('id', '=', unassigned.id)
      .execute();
    const census = await mcp.callTool({ name: 'braes.agency.summary', arguments: {} });
    t.notOk(census.isError);
    const summary = census.structuredContent as {
      active_patients: number;
      by_service_line: Record<string, number>;
      by_office: { office_id: string; active_patients: number }[];
    };
    t.ok(summary.active_patients > 0, 'the seeded census');
    t.equal(
      Object.values(summary.by_service_line).reduce((a, b) => a + b, 0),
      summary.active_patients,
      'service lines add up',
    );
    t.equal(
      summary.by_office.reduce((a, o) => a + o.active_patients, 0),
      summary.active_patients,
      'offices add up',
    );
    t.match(
      summary.by_office.find((o) => o.office_id === ''),
      { office_name: 'Unassigned', active_patients: 1 },
      'the chart without an office',
    );
    const census_text = (census.content as { type: string; text: string }[])[0].text;
    t.match(census_text, /active patients/);

    const orders = await mcp.callTool({ name: 'braes.orders.aging', arguments: {} });
    t.match(orders.structuredContent, {
      awaiting_signature: Number,
      by_aging_bucket: { '31_plus_days': Number },
      sla_breached: Number,
      sla_days: 7,
    });

    const visits = await mcp.callTool({ name: 'braes.visits.missed_late', arguments: {} });
    t.match(visits.structuredContent, { missed: Number, late_within_current_year: null });

    const referrals = await mcp.callTool({ name: 'braes.referrals.pipeline', arguments: {} });
    t.match(
      referrals.structuredContent,
      { referrals_received: Number, referrals_by_disposition: { accepted: Number }, intakes_admitted: Number },
      JSON.stringify(referrals),
    );

    const badYear = await mcp.callTool({ name: 'braes.referrals.pipeline', arguments: { year: 'last' } });
    t.ok(badYear.isError, 'bad input is a tool error');

    const hhvbp = await mcp.callTool({
      name: 'braes.quality.hhvbp_summary',
      arguments: { performance_year: 1999 + 25 },
    });
    t.ok(hhvbp.isError || hhvbp.structuredContent, "an answer, or the contract's refusal");

    const remittances = await mcp.callTool({
      name: 'braes.remittances.totals',
      arguments: { from: '2026-01-01', to: '2026-12-31' },
    });
    t.match(
      remittances.structuredContent,
      { payers: Array, totals: { paid: /^\d+\.\d\d$/, claims: Number }, complete: true },
      JSON.stringify(remittances),
    );
    const listed = (await mcp.callTool({ name: 'braes.queries.list', arguments: {} })).structuredContent as {
      queries: { id: string; no_phi: string }[];
    };
    t.ok(
      listed.queries.some((query) => query.id === 'active_census'),
      'the governed queries a no_phi session may run',
    );
    t.notOk(listed.queries.some((query) => query.no_phi === 'denied'));
    const censusRows = await mcp.callTool({
      name: 'braes.queries.run',
      arguments: { query_id: 'active_census', limit: 1 },
    });
    t.match(
      censusRows.structuredContent,
      { query_id: 'active_census', rows: Array, as_of: String },
      JSON.stringify(censusRows),
    );
    const unknownQuery = await mcp.callTool({ name: 'braes.queries.run', arguments: { query_id: 'no_such_query' } });
    t.ok(unknownQuery.isError);
    t.match(refusalOf(unknownQuery as CallToolResult), { status: 404, code: 'PLATFORM_QUERY_NOT_FOUND' });

    // Refresh: a new refresh token replaces the old one.
    const metadata = (await discoverAuthorizationServerMetadata(base))!;
    const clientInformation = oauth.clientInformation();
    const refreshed = await refreshAuthorization(base, {
      metadata,
      clientInformation,
      refreshToken: tokens.refresh_token!,
      resource: mcpUrl,
    });
    t.not(refreshed.refresh_token, tokens.refresh_token, 'rotation: the replacement must be kept');
    t.not(refreshed.access_token, tokens.access_token);
    oauth.saveTokens(refreshed);
    const again = new Client({ name: 'test', version: '1' });
    await again.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth }));
    t.equal((await again.listTools()).tools.length, 11, 'the refreshed access token works');

    // Reuse of the replaced refresh token: refused, and the whole family is revoked.
    await t.rejects(
      refreshAuthorization(base, {
        metadata,
        clientInformation,
        refreshToken: tokens.refresh_token!,
        resource: mcpUrl,
      }),
      /already used|invalid_grant|grant request is invalid/i,
    );
    await t.rejects(
      refreshAuthorization(base, {
        metadata,
        clientInformation,
        refreshToken: refreshed.refresh_token!,
        resource: mcpUrl,
      }),
      'the replacement is revoked too',
    );
    const revoked = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${refreshed.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    t.equal(revoked.status, 401, 'and so is its access token');
    t.match(revoked.headers.get('www-authenticate'), /error="invalid_token"/);
  },
);

t.test(
  'a token without no_phi gets 403 insufficient_scope; the consent refuses a request without the required scopes',
  async (t) => {
    const oauth = new TestOAuthClient(client.clientId, redirectUri);
    await t.rejects(
      new Client({ name: 'test', version: '1' }).connect(
        new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth }),
      ),
      /Unauthorized/,
    );
    const { code } = await authorizeChecked(oauth.authorizationUrl!);
    await new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth }).finishAuth(code);
    const metadata = (await discoverAuthorizationServerMetadata(base))!;
    // A refresh may narrow the scope (RFC 6749 6): a token with mcp:tools only.
    const body = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: oauth.saved!.refresh_token!,
      client_id: client.clientId,
      scope: 'mcp:tools',
      resource: mcpUrl.href,
    });
    const narrowed = (await (
      await fetch(metadata.token_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      })
    ).json()) as { scope: string; access_token: string };
    t.equal(narrowed.scope, 'mcp:tools');
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${narrowed.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    t.equal(res.status, 403);
    t.match(res.headers.get('www-authenticate'), /error="insufficient_scope".*scope="mcp:tools no_phi"/);

    const params = new URLSearchParams({
      client_id: client.clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'mcp:tools platform:read',
      resource: mcpUrl.href,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const back = await new FormBrowser().follow(`${base}/api/v1/oauth/authorize?${params}`, isCallback);
    t.equal(
      new URL(back.location!).searchParams.get('error'),
      'invalid_scope',
      'no_phi is required: refused before anyone signs in',
    );
  },
);

t.test('a wrong password shows the login page again; a disabled user cannot use their token', async (t) => {
  const oauth = new TestOAuthClient(client.clientId, redirectUri);
  await t.rejects(
    new Client({ name: 'test', version: '1' }).connect(
      new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth }),
    ),
    /Unauthorized/,
  );
  const browser = new FormBrowser();
  const login = await browser.follow(oauth.authorizationUrl!.href, isCallback);
  const wrong = await browser.post(
    formAction(login.body, base),
    { email: user.email, password: 'not-the-password' },
    isCallback,
  );
  t.equal(wrong.status, 401);
  t.match(wrong.body, /The email or password is not right/);
  t.equal(wrong.body.includes('not-the-password'), false, 'the password is not echoed');
});

t.test(
  'offline_access alone, without prompt=consent (which the SDK adds, other clients may not), still gets a refresh token',
  async (t) => {
    const oauth = new TestOAuthClient(client.clientId, redirectUri);
    await new Client({ name: 'test', version: '1' })
      .connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth }))
      .catch(() => {});
    const asked = new URL(oauth.authorizationUrl!);
    t.equal(asked.searchParams.get('prompt'), 'consent', "the SDK's own request");
    asked.searchParams.delete('prompt');
    t.match(asked.searchParams.get('scope'), /offline_access/);
    const { code, consent } = await authorizeInBrowser(base, asked, redirectUri, person);
    t.match(consent.body, /stay connected/, 'the consent page names what offline_access allows');
    const metadata = (await discoverAuthorizationServerMetadata(base))!;
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      client_id: client.clientId,
      redirect_uri: redirectUri,
      code_verifier: oauth.codeVerifier(),
      resource: mcpUrl.href,
    });
    const tokens = (await (
      await fetch(metadata.token_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      })
    ).json()) as { refresh_token?: string };
    t.ok(tokens.refresh_token, 'a refresh token');
  },
);
