/**
 * Governed query scenarios (issue 29): one page of 100 rows of orders_awaiting_signature on the large demo agency, with
 * the extension's access token and with a query token, each against the minimal live route of
 * bench-baseline-queries.ts running the same SQL. PostgreSQL only.
 */
import { randomUUID } from 'node:crypto';
import { BenchTokens } from './bench-credentials.js';
import { bearer, type Request, type Scenario } from './bench-scenarios.js';
import type { ClinicalContext, ClinicalSpec } from './bench-clinical.js';
import { BASELINE_QUERIES_PATH } from './bench-baseline-queries.js';

const QUERY = 'orders_awaiting_signature';
const PAGE = 100;
const CONNECTIONS = [10, 50];
const BODY = JSON.stringify({ limit: PAGE });

export const QUERY_SPECS: ClinicalSpec[] = [
  { name: 'governed query page of 100, large agency', agency: 'large', build: (ctx) => page(ctx, ctx.token) },
  {
    name: 'governed query page of 100 with a query token, large agency',
    agency: 'large',
    build: async (ctx) => page(ctx, await queryTokens(ctx)),
  },
];

const post = (path: string, tokens: BenchTokens): Request => ({
  method: 'POST',
  path,
  headers: { 'content-type': 'application/json' },
  tokens,
  body: BODY,
});

async function page(ctx: ClinicalContext, tokens: BenchTokens): Promise<Omit<Scenario, 'name'>> {
  const first = await fetch(`${ctx.serviceUrl}/api/v1/ext/queries/${QUERY}/run`, {
    method: 'POST',
    headers: { ...bearer(await tokens.current()), 'content-type': 'application/json' },
    body: BODY,
  });
  const text = await first.text();
  const { data } = JSON.parse(text) as { data?: { row_count: number } };
  if (!first.ok || data?.row_count !== PAGE)
    throw new Error(
      `${QUERY} answered ${first.status} with ${data?.row_count} rows; the scenario needs a page of ${PAGE}:\n${text.slice(0, 500)}`,
    );
  return {
    service: post(`/api/v1/ext/queries/${QUERY}/run`, tokens),
    baseline: post(`${BASELINE_QUERIES_PATH}/${QUERY}`, ctx.token),
    connections: CONNECTIONS,
    goal: 0.7,
  };
}

/** A phi query token for the query, created through the service by the bench integration (again when it expires). */
function queryTokens(ctx: ClinicalContext): Promise<BenchTokens> {
  return BenchTokens.issue(`the query token of ${ctx.agencyId}`, async () => {
    const response = await fetch(`${ctx.serviceUrl}/api/v1/ext/query-tokens`, {
      method: 'POST',
      headers: {
        ...bearer(await ctx.token.current()),
        'content-type': 'application/json',
        'idempotency-key': `bench-${randomUUID()}`,
      },
      body: JSON.stringify({ name: 'Bench', query_id: QUERY, phi_mode: 'phi' }),
    });
    if (!response.ok)
      throw new Error(`query token creation answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    const { data } = (await response.json()) as { data: { token: string; expires_at: string } };
    return { tokens: [data.token], expiresAtMs: Date.parse(data.expires_at) };
  });
}
