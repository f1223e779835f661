import type { AgingBucket } from '../../domain/physician-orders/aging.js';
import { AGING_BUCKETS } from '../../domain/physician-orders/aging.js';
import type { Person } from '../../identity/mcp-authorization/people.js';
import { orderAgingSummary } from '../../resources/physician-orders/physician-order-repository.js';
import { barChart } from '../charts.js';
import { readStore, type ConsoleContext } from '../console-context.js';
import { html, type Html } from '../html.js';
import { instant } from '../instant.js';

const BUCKET_LABELS: Record<AgingBucket, string> = {
  not_sent: 'Not sent yet',
  '0_7_days': '0 to 7 days',
  '8_14_days': '8 to 14 days',
  '15_30_days': '15 to 30 days',
  '31_plus_days': '31 days or more',
};

/**
 * The agency's physician orders awaiting signature by days outstanding: the summary GET /api/v1/ext/physician-orders
 * carries in meta.summary (the same function, kept per order revision), drawn.
 */
export async function orderAgingPicture(ctx: ConsoleContext, person: Person): Promise<Html> {
  const asOf = new Date();
  const summary = await orderAgingSummary(readStore(ctx, person), {}, asOf);
  const bars = [
    ...AGING_BUCKETS.map((bucket) => ({ label: BUCKET_LABELS[bucket], value: summary[bucket] })),
    { label: 'Past the signature SLA', value: summary.sla_breached, bad: true },
  ];
  return html`<h2>Orders awaiting signature</h2>
<p class="muted">Physician orders waiting for a signature, by whole days since they were sent (in each office’s calendar), as of ${instant(asOf)}. Those past the agency’s SLA are counted again in the last bar.</p>
${barChart('Orders awaiting signature by days outstanding', bars, 'Orders')}`;
}
