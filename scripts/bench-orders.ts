/**
 * Physician order list scenarios (issue 27): a page of 50 at offset 0, at offset 5,000 and by cursor at 5,000 on the
 * large demo agency, each against the minimal live route of bench-baseline-orders.ts. PostgreSQL only.
 */
import { bearer, type Request, type Scenario } from './bench-scenarios.js';
import type { ClinicalContext, ClinicalSpec } from './bench-clinical.js';
import { baselineOrdersPath } from './bench-baseline-orders.js';

const ORDERS = '/api/v1/ext/physician-orders';
const PAGE = 50;
const DEPTH = 5_000;
const CONNECTIONS = [10, 50];

export const ORDER_SPECS: ClinicalSpec[] = [
  { name: 'physician order list offset 0, large agency', agency: 'large', build: (ctx) => atOffset(ctx, 0, 0.7) },
  { name: `physician order list offset ${DEPTH}, large agency`, agency: 'large', build: (ctx) => atOffset(ctx, DEPTH) },
  { name: `physician order list cursor at ${DEPTH}, large agency`, agency: 'large', build: byCursor },
];

const get = (ctx: ClinicalContext, path: string): Request => ({ method: 'GET', path, headers: {}, tokens: ctx.token });

function scenario(service: Request, baseline: Request, goal?: number): Omit<Scenario, 'name'> {
  return { service, baseline, connections: CONNECTIONS, goal };
}

function atOffset(ctx: ClinicalContext, offset: number, goal?: number) {
  return scenario(get(ctx, `${ORDERS}?limit=${PAGE}&offset=${offset}`), get(ctx, baselineOrdersPath({ offset })), goal);
}

interface OrderPage {
  data: { id: string; created_at: string }[];
  meta: { next_cursor: string | null };
}

/** The service's cursor after the page that ends at DEPTH, and that page's last order as the baseline's keyset. */
async function byCursor(ctx: ClinicalContext) {
  const response = await fetch(`${ctx.serviceUrl}${ORDERS}?limit=${PAGE}&offset=${DEPTH - PAGE}`, {
    headers: bearer(await ctx.token.current()),
  });
  if (!response.ok)
    throw new Error(
      `order list at offset ${DEPTH - PAGE} answered ${response.status}: ${(await response.text()).slice(0, 300)}`,
    );
  const { data, meta } = (await response.json()) as OrderPage;
  const last = data.at(-1);
  if (!last || !meta.next_cursor) {
    throw new Error(
      `${ctx.agencyId} has fewer than ${DEPTH + PAGE} physician orders: it was seeded before demo orders existed; bench on a fresh database`,
    );
  }
  return scenario(
    get(ctx, `${ORDERS}?limit=${PAGE}&cursor=${meta.next_cursor}`),
    get(ctx, baselineOrdersPath({ after: [last.created_at, last.id] })),
  );
}
