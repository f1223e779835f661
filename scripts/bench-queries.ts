/**
 * Governed query scenarios (issue 29): one page of 100 rows of orders_awaiting_signature on the large demo agency, with
 * the extension's access token and with a query token, each against the minimal live route of
 * bench-baseline-queries.ts running the same SQL. PostgreSQL only.
 */
import { randomUUID } from 'node:crypto';
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
    build: async (ctx) => page(ctx, await queryToken(ctx)),
  },
];

const post = (path: string, token: string): Request => ({
  method: 'POST',
  path,
  headers: { ...bearer(token), 'content-type': 'application/json' },
  body: BODY,
});

async function page(ctx: ClinicalContext, token: string): Promise<Omit<Scenario, 'name'>> {
  const first = await fetch(`${ctx.serviceUrl}/api/v1/ext/queries/${QUERY}/run`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: BODY,
  });
  const { data } = (await first.json()) as { data?: { row_count: number } };
  if (!first.ok || data?.row_count !== PAGE)
    throw new Error(
      `${QUERY} answered ${first.status} with ${data?.row_count} rows; the scenario needs a page of ${PAGE}`,
    );
  return {
    service: post(`/api/v1/ext/queries/${QUERY}/run`, token),
    baseline: post(`${BASELINE_QUERIES_PATH}/${QUERY}`, ctx.token),
    connections: CONNECTIONS,
    goal: 0.7,
  };
}

/** A phi query token for the query, created through the service by the bench integration. */
async function queryToken(ctx: ClinicalContext): Promise<string> {
  const response = await fetch(`${ctx.serviceUrl}/api/v1/ext/query-tokens`, {
    method: 'POST',
    headers: { ...bearer(ctx.token), 'content-type': 'application/json', 'idempotency-key': `bench-${randomUUID()}` },
    body: JSON.stringify({ name: 'Bench', query_id: QUERY, phi_mode: 'phi' }),
  });
  if (!response.ok)
    throw new Error(`query token creation answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  return ((await response.json()) as { data: { token: string } }).data.token;
}
