import { DEFAULT_OVERLAP_HOURS, DELIVERY_STATUSES } from '../../admin/webhook.js';
import type { DeliveryStatus } from '../../db/tables/webhooks.js';
import {
  type DeliveryAttempt,
  type listDeliveries,
  SUBSCRIBABLE_EVENT_TYPES,
  type SubscriptionRow,
} from '../../events/subscriptions.js';
import { webhookEvents, type WebhookEventType } from '../../generated/contract.js';
import { PHI_MODES } from '../../identity/grants.js';
import { barChart } from '../charts.js';
import { html, type Html } from '../html.js';
import { instant } from '../instant.js';
import { CONSOLE_PATH, csrfField, type Viewer } from '../layout.js';

export const WEBHOOKS_PATH = `${CONSOLE_PATH}/webhooks`;

/** What a subscription's deliveries are, by status (a status with none is absent). */
export type StatusCounts = Partial<Record<DeliveryStatus, number>>;

/** The create form's fields as sent: a refused form is shown again with them. */
export interface SubscriptionForm {
  url: string;
  eventTypes: string[];
  phiMode: string;
  secret: string;
  baaSigned: boolean;
  allowHttpLoopback: boolean;
}

export const EMPTY_FORM: SubscriptionForm = {
  url: '',
  eventTypes: [],
  phiMode: 'no_phi',
  secret: '',
  baaSigned: false,
  allowHttpLoopback: false,
};

export type Delivery = Awaited<ReturnType<typeof listDeliveries>>[number];

const subscriptionPath = (row: SubscriptionRow) => `${WEBHOOKS_PATH}/${row.id}`;
const checked = (on: boolean) => (on ? html` checked` : '');

/** Delivered, as a whole percentage of the deliveries that are settled (delivered or failed). */
function successPercent(counts: StatusCounts): number | undefined {
  const settled = (counts.delivered ?? 0) + (counts.failed ?? 0);
  return settled === 0 ? undefined : Math.round(((counts.delivered ?? 0) * 100) / settled);
}

function successChart(rows: readonly SubscriptionRow[], counts: ReadonlyMap<string, StatusCounts>): Html {
  const bars = rows.flatMap((row) => {
    const percent = successPercent(counts.get(row.id) ?? {});
    return percent === undefined ? [] : [{ label: row.id, value: percent, bad: percent < 100 }];
  });
  if (bars.length === 0)
    return html`<p class="muted">No delivery has been settled yet: the chart of delivery success appears with the first.</p>`;
  return barChart('Delivery success per subscription (% of settled deliveries delivered)', bars, '% delivered');
}

function subscriptionsTable(rows: readonly SubscriptionRow[], counts: ReadonlyMap<string, StatusCounts>): Html {
  if (rows.length === 0) return html`<p>This agency has no webhook subscription.</p>`;
  return html`<table><caption>Subscriptions</caption><thead><tr><th scope="col">Receiver</th><th scope="col">Event types</th><th scope="col">Status</th><th scope="col">BAA</th><th scope="col" class="number">Held deliveries</th><th scope="col" class="number">Delivered</th></tr></thead><tbody>${rows.map(
    (row) => {
      const percent = successPercent(counts.get(row.id) ?? {});
      return html`<tr><td><a href="${subscriptionPath(row)}">${row.url}</a></td><td>${row.event_types.join(', ')}</td><td>${statusText(row)}</td><td>${row.baa_signed_at ? html`recorded ${instant(row.baa_signed_at)}` : 'not recorded'}</td><td class="number">${counts.get(row.id)?.held ?? 0}</td><td class="number">${percent === undefined ? '—' : `${percent}%`}</td></tr>`;
    },
  )}</tbody></table>`;
}

const statusText = (row: SubscriptionRow) =>
  row.status === 'enabled' ? 'enabled' : `disabled (${row.disabled_reason ?? 'no reason recorded'})`;

function eventTypeChoices(chosen: readonly string[]): Html {
  return html`<fieldset><legend>Event types</legend>${SUBSCRIBABLE_EVENT_TYPES.map(
    (type) =>
      html`<label><input type="checkbox" name="events" value="${type}"${checked(chosen.includes(type))}> ${type}${webhookEvents[type as WebhookEventType].clinical ? ' (clinical: held until the BAA is recorded)' : ''}</label>`,
  )}</fieldset>`;
}

/** The create form (administrators only), filled with what was sent when it is shown again after a refusal. */
export function subscribeForm(viewer: Viewer, form: SubscriptionForm): Html {
  return html`<h2 id="subscribe">Subscribe a receiver</h2>
<form method="post" action="${WEBHOOKS_PATH}" class="stack" aria-labelledby="subscribe">${csrfField(viewer)}
<label for="url">Receiver URL</label><input type="url" id="url" name="url" required value="${form.url}" aria-describedby="url-hint">
<p class="muted" id="url-hint">https:// only; the address is checked now and before every attempt (no private, loopback or link-local address).</p>
${eventTypeChoices(form.eventTypes)}
<label for="phi_mode">PHI mode</label><select id="phi_mode" name="phi_mode">${PHI_MODES.map(
    (mode) => html`<option value="${mode}"${form.phiMode === mode ? html` selected` : ''}>${mode}</option>`,
  )}</select>
<label for="secret">Signing secret (optional)</label><input type="text" id="secret" name="secret" value="${form.secret}" autocomplete="off" aria-describedby="secret-hint">
<p class="muted" id="secret-hint">whsec_ and 24 to 64 bytes in base64; left empty, one is generated. It is shown once.</p>
<fieldset><legend>Agreements and development</legend>
<label><input type="checkbox" name="baa_signed" value="yes"${checked(form.baaSigned)}> The business associate agreement is signed</label>
<label><input type="checkbox" name="allow_http_loopback" value="yes"${checked(form.allowHttpLoopback)}> Allow plain http:// to a loopback receiver (development only)</label>
</fieldset>
<button type="submit">Subscribe</button></form>`;
}

export function subscriptionsPage(
  rows: readonly SubscriptionRow[],
  counts: ReadonlyMap<string, StatusCounts>,
  form: Html,
): Html {
  return html`<p>Receivers of the agency's events, signed with each subscription's secret. Clinical events wait for the subscription's business associate agreement.</p>
${successChart(rows, counts)}${subscriptionsTable(rows, counts)}${form}`;
}

/** The answer that carries a signing secret: shown this once, never stored in the clear, never cached. */
export function secretPage(row: { id: string }, secret: string, facts: Html): Html {
  return html`<p>Store this signing secret with the receiver now: it is shown once and cannot be shown again.</p>
<p class="secret" aria-label="Signing secret">${secret}</p>${facts}
<p><a href="${WEBHOOKS_PATH}/${row.id}">Go to the subscription</a></p>`;
}

function actionForm(viewer: Viewer, row: SubscriptionRow, action: string, button: string, kind = ''): Html {
  return html`<form method="post" action="${subscriptionPath(row)}/${action}" class="inline">${csrfField(viewer)}<button type="submit"${kind ? html` class="${kind}"` : ''}>${button}</button></form>`;
}

function administration(viewer: Viewer, row: SubscriptionRow): Html {
  return html`<h2>Change it</h2>
<p>${row.baa_signed_at ? '' : html`${actionForm(viewer, row, 'baa', 'Record the BAA as signed')} `}${row.status === 'enabled' ? html`${actionForm(viewer, row, 'test', 'Send a test event', 'secondary')} ${actionForm(viewer, row, 'disable', 'Disable', 'danger')}` : actionForm(viewer, row, 'enable', 'Enable')}</p>
<p class="muted">A test event is a <code>webhook.test</code> delivery to this receiver only, whatever its event types and BAA: signed, retried and replayable like any other; it carries no patient data.</p>
<form method="post" action="${subscriptionPath(row)}/rotate-secret" class="stack" aria-labelledby="rotate">${csrfField(viewer)}
<h3 id="rotate">Rotate the signing secret</h3>
<label for="overlap_hours">Hours the old secret keeps signing</label><input type="number" id="overlap_hours" name="overlap_hours" min="0" max="720" value="${DEFAULT_OVERLAP_HOURS}">
<button type="submit">Rotate the secret</button></form>
<form method="post" action="${subscriptionPath(row)}/replay-failed" class="stack" aria-labelledby="replay">${csrfField(viewer)}
<h3 id="replay">Replay failed deliveries</h3>
<label for="since">Every failed delivery since (UTC)</label><input type="datetime-local" id="since" name="since" required>
<button type="submit">Replay failed deliveries</button></form>`;
}

export function subscriptionPage(viewer: Viewer, row: SubscriptionRow, counts: StatusCounts, mayAdminister: boolean) {
  return html`<dl class="facts"><dt>Id</dt><dd>${row.id}</dd><dt>Receiver</dt><dd>${row.url}</dd>
<dt>Event types</dt><dd>${row.event_types.join(', ')}</dd><dt>PHI mode</dt><dd>${row.phi_mode}</dd>
<dt>Status</dt><dd>${statusText(row)}</dd><dt>Business associate agreement</dt><dd>${row.baa_signed_at ? html`recorded ${instant(row.baa_signed_at)}` : 'not recorded: clinical events are held'}</dd>
<dt>Failing since</dt><dd>${instant(row.failing_since)}</dd><dt>Created</dt><dd>${instant(row.created_at)}</dd></dl>
<table><caption>Deliveries by status</caption><thead><tr>${DELIVERY_STATUSES.map((status) => html`<th scope="col" class="number">${status}</th>`)}</tr></thead><tbody><tr>${DELIVERY_STATUSES.map(
    (status) =>
      html`<td class="number"><a href="${subscriptionPath(row)}/deliveries?status=${status}">${counts[status] ?? 0}</a></td>`,
  )}</tr></tbody></table>
<p><a href="${subscriptionPath(row)}/deliveries">All deliveries and their attempts</a></p>
${mayAdminister ? administration(viewer, row) : ''}<p><a href="${WEBHOOKS_PATH}">All subscriptions</a></p>`;
}

function statusFilter(row: SubscriptionRow, status: DeliveryStatus | undefined): Html {
  return html`<form method="get" action="${subscriptionPath(row)}/deliveries" class="filter"><label for="status">Status</label><select id="status" name="status"><option value="">every status</option>${DELIVERY_STATUSES.map(
    (s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s}</option>`,
  )}</select> <button type="submit" class="secondary">Show</button></form>`;
}

const REPLAYABLE: readonly DeliveryStatus[] = ['delivered', 'failed'];

const answerOf = (statusCode: number | null) => (statusCode === null ? 'no answer' : `HTTP ${statusCode}`);

/**
 * Each attempt (time, answer, latency, error); a delivery attempted before attempts were kept shows its last one,
 * without a latency.
 */
function attemptList(delivery: Delivery, attempts: readonly DeliveryAttempt[]): Html {
  if (attempts.length === 0) {
    if (delivery.attempts === 0) return html`not attempted yet`;
    return html`${instant(delivery.last_attempt_at)}: ${answerOf(delivery.last_status_code)}${delivery.last_error ? `, ${delivery.last_error}` : ''}`;
  }
  return html`<ol class="attempts">${attempts.map(
    (a) =>
      html`<li>${instant(a.attempted_at)}: ${answerOf(a.status_code)}, ${a.latency_ms} ms${a.error ? `, ${a.error}` : ''}</li>`,
  )}</ol>`;
}

function deliveryRow(
  viewer: Viewer,
  row: SubscriptionRow,
  delivery: Delivery,
  attempts: readonly DeliveryAttempt[],
  mayAdminister: boolean,
): Html {
  const replay =
    mayAdminister && REPLAYABLE.includes(delivery.status)
      ? html`<form method="post" action="${subscriptionPath(row)}/deliveries/${delivery.id}/replay" class="inline">${csrfField(viewer)}<button type="submit" class="secondary" aria-label="Replay ${delivery.id}">Replay</button></form>`
      : '';
  return html`<tr><td><code>${delivery.id}</code></td><td>${delivery.type}</td><td>${instant(delivery.created_at)}</td><td>${delivery.status}</td><td class="number">${delivery.attempts}</td><td>${attemptList(delivery, attempts)}</td><td>${instant(delivery.delivered_at)}</td><td>${replay}</td></tr>`;
}

export function deliveriesPage(
  viewer: Viewer,
  row: SubscriptionRow,
  deliveries: readonly Delivery[],
  attempts: ReadonlyMap<string, readonly DeliveryAttempt[]>,
  status: DeliveryStatus | undefined,
  next: string | undefined,
  mayAdminister: boolean,
): Html {
  const table =
    deliveries.length === 0
      ? html`<p>No delivery${status ? ` is ${status}` : ''}.</p>`
      : html`<table><caption>Deliveries to ${row.url}, newest event first</caption><thead><tr><th scope="col">Delivery</th><th scope="col">Event type</th><th scope="col">Made</th><th scope="col">Status</th><th scope="col" class="number">Attempts</th><th scope="col">Attempts (time, answer, latency, error)</th><th scope="col">Delivered</th><th scope="col">Replay</th></tr></thead><tbody>${deliveries.map(
          (delivery) => deliveryRow(viewer, row, delivery, attempts.get(delivery.id) ?? [], mayAdminister),
        )}</tbody></table>`;
  return html`${statusFilter(row, status)}${table}${next ? html`<p><a href="${next}">Older deliveries</a></p>` : ''}
<p><a href="${subscriptionPath(row)}">Back to the subscription</a></p>`;
}
