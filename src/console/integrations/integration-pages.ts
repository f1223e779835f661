import type { listIntegrations } from '../../admin/integration.js';
import type { ErrorCode } from '../../generated/contract.js';
import { errorEntry } from '../../shared/platform-error.js';
import { barChart } from '../charts.js';
import { html, type Html } from '../html.js';
import { CONSOLE_PATH, csrfField, type Viewer } from '../layout.js';
import {
  CHART_DAYS,
  LOG_DAYS,
  logCursor,
  type DayCount,
  type ErrorCount,
  type LoggedCall,
  type LogPosition,
  type UsageToday,
} from './request-log.js';

export type Integration = Awaited<ReturnType<typeof listIntegrations>>[number];
/** An integration on its own pages, reached by its client id. */
export type ShownIntegration = Integration & { clientId: string };

export const INTEGRATIONS_PATH = `${CONSOLE_PATH}/integrations`;
export const integrationPath = (clientId: string) => `${INTEGRATIONS_PATH}/${encodeURIComponent(clientId)}`;

/**
 * The client id an integration is known by in the console: an integration is created with exactly one. The agency's
 * MCP surface for people runs as an extension with none (its people sign in instead), so it has no page here.
 */
const clientIdOf = (integration: Integration): string | undefined => integration.client_ids[0];

function nameCell(integration: Integration): Html {
  const clientId = clientIdOf(integration);
  return clientId ? html`<a href="${integrationPath(clientId)}">${integration.name}</a>` : html`${integration.name}`;
}

function authMethods(integration: Integration): string {
  if (!clientIdOf(integration)) return 'people sign in';
  const methods = integration.authentication.map((method) =>
    method === 'client_secret' ? 'secret' : method === 'private_key_jwt' ? 'keys' : method,
  );
  return methods.join(' and ') || 'none (no live secret, no keys)';
}

const time = (at: Date | string) => `${new Date(at).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
const costBudget = (integration: Integration) =>
  integration.daily_cost_budget === null ? 'no budget' : `${integration.daily_cost_budget} cost units per day`;

export function listPage(viewer: Viewer, integrations: readonly Integration[], mayAdminister: boolean): Html {
  const create = mayAdminister
    ? html`<p><a href="${INTEGRATIONS_PATH}/new">Create an integration</a></p>`
    : html`<p class="muted">Integrations are created and changed by the agency's administrators.</p>`;
  if (integrations.length === 0) return html`${create}<p>${viewer.person.agencyName} has no integrations yet.</p>`;
  return html`${create}<table><caption>The agency's integrations</caption><thead><tr><th scope="col">Name</th><th scope="col">Client id</th><th scope="col">Status</th><th scope="col">Authentication</th><th scope="col">Scopes</th><th scope="col">PHI modes</th><th scope="col">Limits</th></tr></thead><tbody>${integrations.map(
    (integration) =>
      html`<tr><td>${nameCell(integration)}</td><td>${clientIdOf(integration) ? html`<code>${clientIdOf(integration)}</code>` : 'none'}</td><td>${integration.status}</td><td>${authMethods(integration)}</td><td class="muted">${integration.scopes.join(', ')}</td><td>${integration.phi_modes.join(', ')}</td><td>${integration.rate_limit_per_minute} per minute, ${integration.daily_quota} per day; ${costBudget(integration)}</td></tr>`,
  )}</tbody></table>`;
}

/** What the create form offers: what the admin CLI accepts, with its defaults checked. */
export interface GrantChoices {
  scopes: readonly string[];
  capabilities: readonly string[];
  phiModes: readonly string[];
  contractVersions: readonly string[];
}

/** What the form was sent with (or the CLI's defaults on a fresh form). */
export interface CreateFormValues {
  name: string;
  scopes: readonly string[];
  capabilities: readonly string[];
  phiModes: readonly string[];
  rateLimitPerMinute: string;
  dailyQuota: string;
  dailyCostBudget: string;
  contractVersion: string;
}

function checkboxes(legend: string, name: string, choices: readonly string[], checked: readonly string[]): Html {
  return html`<fieldset><legend>${legend}</legend>${choices.map(
    (choice) =>
      html`<label><input type="checkbox" name="${name}" value="${choice}"${checked.includes(choice) ? html` checked` : ''}> ${choice}</label>`,
  )}</fieldset>`;
}

export function createForm(viewer: Viewer, choices: GrantChoices, values: CreateFormValues): Html {
  return html`<form method="post" action="${INTEGRATIONS_PATH}" class="stack">${csrfField(viewer)}
<label for="name">Name</label><input id="name" name="name" type="text" value="${values.name}" required>
${checkboxes('Scopes', 'scopes', choices.scopes, values.scopes)}
${checkboxes('Capabilities', 'capabilities', choices.capabilities, values.capabilities)}
${checkboxes('PHI modes', 'phi_modes', choices.phiModes, values.phiModes)}
<label for="rate_limit">Requests per minute</label><input id="rate_limit" name="rate_limit" type="number" min="1" step="1" value="${values.rateLimitPerMinute}" required>
<label for="daily_quota">Requests per day (UTC)</label><input id="daily_quota" name="daily_quota" type="number" min="1" step="1" value="${values.dailyQuota}" required>
<label for="cost_budget">Daily cost budget in cost units (empty: no budget)</label><input id="cost_budget" name="cost_budget" type="number" min="0" step="1" value="${values.dailyCostBudget}">
<label for="contract_version">Contract version</label><select id="contract_version" name="contract_version">${choices.contractVersions.map(
    (version) =>
      html`<option value="${version}"${version === values.contractVersion ? html` selected` : ''}>${version}</option>`,
  )}</select>
<button type="submit">Create the integration</button></form>`;
}

/** The one page that ever shows a client secret: the answer to the post that made it (never a URL, never stored). */
export function secretPage(clientId: string, secret: string, note: string): Html {
  return html`<p>${note}</p>
<dl class="facts"><dt>Client id</dt><dd><code id="client-id">${clientId}</code></dd>
<dt>Client secret</dt><dd><p class="secret" id="client-secret">${secret}</p></dd></dl>
<p><strong>This secret is shown only this once.</strong> Store it now in the integration's own secret store: the service keeps only its hash, and this page is not kept by the browser.</p>
<p><a href="${integrationPath(clientId)}">Go to the integration</a></p>`;
}

function facts(integration: ShownIntegration): Html {
  const secrets = integration.active_secrets.map(
    (s) => html`<li>created ${time(s.created_at)}${s.expires_at ? `, works until ${time(s.expires_at)}` : ''}</li>`,
  );
  return html`<dl class="facts"><dt>Client id</dt><dd><code>${integration.clientId}</code></dd>
<dt>Status</dt><dd>${integration.status}</dd>
<dt>Authentication</dt><dd>${authMethods(integration)}</dd>
<dt>Live secrets</dt><dd>${secrets.length ? html`<ul>${secrets}</ul>` : 'none'}</dd>
<dt>Keys</dt><dd>${integration.keys ? integration.keys.kids.join(', ') : 'none'}</dd>
<dt>Scopes</dt><dd>${integration.scopes.join(', ') || 'none'}</dd>
<dt>Capabilities</dt><dd>${integration.capabilities.join(', ') || 'none'}</dd>
<dt>PHI modes</dt><dd>${integration.phi_modes.join(', ')}</dd>
<dt>Contract version</dt><dd>${integration.contract_version}</dd>
<dt>Tokens revoked before</dt><dd>${integration.tokens_revoked_before ? time(integration.tokens_revoked_before) : 'never'}</dd></dl>`;
}

function usage(integration: Integration, today: UsageToday): Html {
  const share = (used: number, limit: number) => `${Math.round((used / limit) * 1000) / 10}%`;
  const budget = integration.daily_cost_budget;
  return html`<table><caption>Usage today (since 00:00 UTC)</caption><thead><tr><th scope="col">Limit</th><th scope="col" class="number">Used</th><th scope="col" class="number">Allowed</th><th scope="col" class="number">Share</th></tr></thead><tbody>
<tr><td>Requests per day</td><td class="number">${today.requests}</td><td class="number">${integration.daily_quota}</td><td class="number">${share(today.requests, integration.daily_quota)}</td></tr>
<tr><td>Cost units per day</td><td class="number">${today.costUnits}</td><td class="number">${budget ?? 'no budget'}</td><td class="number">${budget ? share(today.costUnits, budget) : ''}</td></tr>
<tr><td>Requests per minute (this minute, as reserved)</td><td class="number">${today.reserved.minute}</td><td class="number">${integration.rate_limit_per_minute}</td><td class="number">${share(today.reserved.minute, integration.rate_limit_per_minute)}</td></tr>
</tbody></table>
<p class="muted">Used is what the request log counts. The limits are checked against the service's shared counters, which hold the units its instances reserved in advance: ${today.reserved.day} requests and ${today.reserved.cost} cost units today.</p>`;
}

/** What the contract's error table says of a code, and what an integrator does about it. */
function nextStep(code: string): { meaning: string; step: string } {
  const entry = errorEntry(code as ErrorCode) as ReturnType<typeof errorEntry> | undefined;
  if (!entry) return { meaning: 'A code this console does not know.', step: 'See the contract.' };
  const step = entry.retryable
    ? 'Retry later: the same request can succeed (after the Retry-After delay when the answer gives one).'
    : entry.terminal
      ? 'Do not retry as is: the same request gets the same answer. Change the request, the token or the integration’s grants.'
      : 'Do not retry at once: the same request succeeds only once what the code says has changed.';
  return { meaning: `${entry.description} (${entry.category}, ${entry.status})`, step };
}

function errorTable(errors: readonly ErrorCount[]): Html {
  if (errors.length === 0) return html`<p>No refused calls in the last ${LOG_DAYS} days.</p>`;
  return html`<table><caption>Refused calls of the last ${LOG_DAYS} days, by error code</caption><thead><tr><th scope="col">Error code</th><th scope="col" class="number">Calls</th><th scope="col">Last</th><th scope="col">What it means</th><th scope="col">Next step</th></tr></thead><tbody>${errors.map(
    (error) => {
      const { meaning, step } = nextStep(error.code);
      return html`<tr><td><code>${error.code}</code></td><td class="number">${error.count}</td><td>${time(error.lastAt)}</td><td>${meaning}</td><td>${step}</td></tr>`;
    },
  )}</tbody></table>`;
}

function charts(days: readonly DayCount[]): Html {
  const label = (day: string) => day.slice(5);
  return html`${barChart(
    `Requests per day, last ${CHART_DAYS} days (UTC)`,
    days.map((d) => ({ label: label(d.day), value: d.requests })),
    'Requests',
  )}${barChart(
    `Errors per day, last ${CHART_DAYS} days (UTC)`,
    days.map((d) => ({ label: label(d.day), value: d.errors, bad: true })),
    'Errors',
  )}`;
}

function adminForms(viewer: Viewer, integration: ShownIntegration, overlapHours: number): Html {
  const path = integrationPath(integration.clientId);
  const toggle =
    integration.status === 'active'
      ? html`<form method="post" action="${path}/disable">${csrfField(viewer)}<p>Disabling refuses its tokens and gives it no new ones, until it is enabled again.</p><button type="submit" class="danger">Disable the integration</button></form>`
      : html`<form method="post" action="${path}/enable">${csrfField(viewer)}<p>Enabling lets it get tokens again; tokens revoked stay revoked.</p><button type="submit">Enable the integration</button></form>`;
  return html`<h2>Change</h2>
<form method="post" action="${path}/rotate-secret">${csrfField(viewer)}<p>A new secret, shown once; the secrets it replaces keep working for ${overlapHours} hours, so the integration can switch without downtime.</p><button type="submit">Rotate the secret</button></form>
<form method="post" action="${path}/revoke-tokens">${csrfField(viewer)}<p>Every token issued until now stops working within seconds; the integration gets new ones with its credentials.</p><button type="submit" class="danger">Revoke its tokens</button></form>
${toggle}`;
}

export interface DetailPageData {
  integration: ShownIntegration;
  today: UsageToday;
  days: readonly DayCount[];
  errors: readonly ErrorCount[];
  /** The overlap of a rotation, when the viewer may change the integration; undefined hides the forms. */
  overlapHours: number | undefined;
}

export function detailPage(viewer: Viewer, data: DetailPageData): Html {
  const { integration } = data;
  return html`${facts(integration)}
<p><a href="${integrationPath(integration.clientId)}/requests">Request log, last ${LOG_DAYS} days</a></p>
<h2>Usage</h2>${usage(integration, data.today)}
<h2>Requests and errors</h2>${charts(data.days)}
<h2>Errors</h2>${errorTable(data.errors)}
${data.overlapHours === undefined ? '' : adminForms(viewer, integration, data.overlapHours)}
<p><a href="${INTEGRATIONS_PATH}">All integrations</a></p>`;
}

const replayedText = (replayed: boolean | null) => (replayed === null ? '—' : replayed ? 'yes' : 'no');

export function requestLogPage(
  integration: ShownIntegration,
  calls: readonly LoggedCall[],
  older: LogPosition | undefined,
  paged: boolean,
): Html {
  const path = `${integrationPath(integration.clientId)}/requests`;
  const rows = calls.map(
    (call) =>
      html`<tr><td>${time(call.occurredAt)}</td><td>${call.operationId}</td><td class="number">${call.status}</td><td>${call.errorCode ? html`<code>${call.errorCode}</code>` : '—'}</td><td><code>${call.requestId}</code></td><td class="number">${call.durationMs}</td><td>${call.contractVersion ?? '—'}</td><td>${replayedText(call.replayed)}</td></tr>`,
  );
  const pages = html`<p>${paged ? html`<a href="${path}">Newest requests</a> ` : ''}${older ? html`<a href="${path}?before=${logCursor(older)}">Older requests</a>` : ''}</p>`;
  return html`<p>Each call of the last ${LOG_DAYS} days, newest first: what metering keeps, never a request or response body.</p>
${
  calls.length === 0
    ? html`<p>No calls${paged ? ' older than these' : ` in the last ${LOG_DAYS} days`}.</p>`
    : html`<table><caption>Requests of ${integration.name}</caption><thead><tr><th scope="col">Time</th><th scope="col">Operation</th><th scope="col" class="number">Status</th><th scope="col">Error code</th><th scope="col">Request id</th><th scope="col" class="number">Latency (ms)</th><th scope="col">Contract version</th><th scope="col">Replayed</th></tr></thead><tbody>${rows}</tbody></table>`
}${pages}
<p><a href="${integrationPath(integration.clientId)}">Back to ${integration.name}</a></p>`;
}
