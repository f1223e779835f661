import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError } from '../../admin/command.js';
import {
  createIntegration,
  DEFAULT_DAILY_QUOTA,
  DEFAULT_OVERLAP_HOURS,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  listIntegrations,
  revokeIntegrationTokens,
  rotateClientSecret,
  setIntegrationStatus,
} from '../../admin/integration.js';
import type { ExtensionStatus } from '../../db/tables/identity.js';
import {
  CONTRACT_CAPABILITIES,
  CONTRACT_SCOPES,
  CURRENT_CONTRACT_VERSION,
  NON_COMMAND_CAPABILITIES,
  PHI_MODES,
  REGISTRABLE_CONTRACT_VERSIONS,
} from '../../identity/grants.js';
import type { Person } from '../../identity/mcp-authorization/people.js';
import type { PhiMode } from '../../shared/principal.js';
import {
  doneNotices,
  type DoneWord,
  refusalOf,
  pageError,
  actorOf,
  formList,
  formText,
  needs,
  readStore,
  render,
  viewerOf,
  type ConsoleContext,
  type ConsoleSection,
} from '../console-context.js';
import { mayIn } from '../console-roles.js';
import {
  createForm,
  detailPage,
  integrationPath,
  INTEGRATIONS_PATH,
  listPage,
  requestLogPage,
  secretPage,
  type CreateFormValues,
  type ShownIntegration,
} from './integration-pages.js';
import {
  callsPerDay,
  errorsByCode,
  parseLogCursor,
  requestLogPage as readRequestLog,
  usageToday,
} from './request-log.js';

const CHOICES = {
  scopes: CONTRACT_SCOPES,
  capabilities: CONTRACT_CAPABILITIES,
  phiModes: PHI_MODES,
  contractVersions: REGISTRABLE_CONTRACT_VERSIONS,
};

/** A fresh form holds the admin CLI's defaults. */
const DEFAULTS: CreateFormValues = {
  name: '',
  scopes: CONTRACT_SCOPES,
  capabilities: NON_COMMAND_CAPABILITIES,
  phiModes: ['no_phi'],
  rateLimitPerMinute: String(DEFAULT_RATE_LIMIT_PER_MINUTE),
  dailyQuota: String(DEFAULT_DAILY_QUOTA),
  dailyCostBudget: '',
  contractVersion: CURRENT_CONTRACT_VERSION,
};

const DONE = doneNotices({
  disabled: 'The integration is disabled: it gets no tokens and its tokens are refused.',
  enabled: 'The integration is enabled.',
  revoked: 'Every token issued to the integration until now is revoked.',
});

const notFound = () => pageError(404, 'There is no such integration in your agency.');
const badRequest = (message: string) => pageError(400, message);

/** The viewer's agency's integration of a client id; another agency's, or none, is a 404 (before anything changes). */
async function integrationOf(ctx: ConsoleContext, person: Person, clientId: string): Promise<ShownIntegration> {
  const integration = (await listIntegrations(readStore(ctx, person))).find((i) => i.client_ids.includes(clientId));
  if (!integration) throw notFound();
  return { ...integration, clientId };
}

const clientIdParam = (request: FastifyRequest) => (request.params as { clientId: string }).clientId;

function formValues(request: FastifyRequest): CreateFormValues {
  return {
    name: formText(request, 'name').trim(),
    scopes: formList(request, 'scopes'),
    capabilities: formList(request, 'capabilities'),
    phiModes: formList(request, 'phi_modes'),
    rateLimitPerMinute: formText(request, 'rate_limit').trim(),
    dailyQuota: formText(request, 'daily_quota').trim(),
    dailyCostBudget: formText(request, 'cost_budget').trim(),
    contractVersion: formText(request, 'contract_version'),
  };
}

function wholeNumber(text: string, label: string, min: number): number {
  const value = Number(text);
  if (text === '' || !Number.isSafeInteger(value) || value < min)
    throw new AdminError(`${label} must be a whole number of at least ${min}.`);
  return value;
}

/** The admin CLI's createIntegration input from the form; what the CLI would refuse is refused in the same words. */
function integrationInput(person: Person, values: CreateFormValues) {
  if (values.scopes.length === 0) throw new AdminError('Choose at least one scope.');
  if (values.phiModes.length === 0) throw new AdminError('Choose at least one PHI mode.');
  return {
    agencyId: person.agencyId,
    name: values.name,
    scopes: [...values.scopes],
    capabilities: [...values.capabilities],
    phiModes: values.phiModes as PhiMode[],
    rateLimitPerMinute: wholeNumber(values.rateLimitPerMinute, 'Requests per minute', 1),
    dailyQuota: wholeNumber(values.dailyQuota, 'Requests per day', 1),
    dailyCostBudget:
      values.dailyCostBudget === '' ? null : wholeNumber(values.dailyCostBudget, 'The daily cost budget', 0),
    // Absent: the CLI's default (the current version), never an empty one.
    contractVersion: values.contractVersion || undefined,
  };
}

/**
 * A secret is the answer itself: rendered once, never redirected to (it would end up in a URL or a stored page).
 * no-store is set here too, so that this page keeps it whatever the console's defaults become.
 */
function showSecret(
  request: FastifyRequest,
  reply: FastifyReply,
  page: { title: string; note: string },
  clientId: string,
  secret: string,
) {
  reply.header('cache-control', 'no-store');
  return render(request, reply, page.title, secretPage(clientId, secret, page.note));
}

const CREATED = { title: 'Integration created', note: 'The integration is created with this client id and secret.' };
const ROTATED = {
  title: 'New client secret',
  note: `A new secret; the ones it replaces keep working for ${DEFAULT_OVERLAP_HOURS} hours.`,
};

function registerReads(scope: FastifyInstance, ctx: ConsoleContext) {
  scope.get('/integrations', async (request, reply) => {
    const viewer = viewerOf(request);
    const integrations = await listIntegrations(readStore(ctx, viewer.person));
    return render(
      request,
      reply,
      'Integrations',
      listPage(viewer, integrations, mayIn(viewer.person.role, 'administer')),
    );
  });

  scope.get('/integrations/:clientId', async (request, reply) => {
    const viewer = viewerOf(request);
    const integration = await integrationOf(ctx, viewer.person, clientIdParam(request));
    const store = readStore(ctx, viewer.person);
    const [today, days, errors] = await Promise.all([
      usageToday(store, integration.extension_id),
      callsPerDay(store, integration.extension_id),
      errorsByCode(store, integration.extension_id),
    ]);
    const overlapHours = mayIn(viewer.person.role, 'administer') ? DEFAULT_OVERLAP_HOURS : undefined;
    return render(
      request,
      reply,
      integration.name,
      detailPage(viewer, { integration, today, days, errors, overlapHours }),
      DONE.of(request),
    );
  });

  scope.get('/integrations/:clientId/requests', async (request, reply) => {
    const viewer = viewerOf(request);
    const integration = await integrationOf(ctx, viewer.person, clientIdParam(request));
    const beforeText = (request.query as Record<string, unknown>).before;
    const before = typeof beforeText === 'string' ? parseLogCursor(beforeText) : undefined;
    if (beforeText !== undefined && !before) throw badRequest('That page of the request log does not exist.');
    const page = await readRequestLog(readStore(ctx, viewer.person), integration.extension_id, before);
    return render(
      request,
      reply,
      `Request log of ${integration.name}`,
      requestLogPage(integration, page.calls, page.older, before !== undefined),
    );
  });
}

function registerChanges(scope: FastifyInstance, ctx: ConsoleContext) {
  const administer = { preHandler: needs('administer') };

  scope.get('/integrations/new', administer, async (request, reply) =>
    render(request, reply, 'Create an integration', createForm(viewerOf(request), CHOICES, DEFAULTS)),
  );

  scope.post('/integrations', administer, async (request, reply) => {
    const viewer = viewerOf(request);
    const values = formValues(request);
    try {
      const created = await createIntegration(ctx.db, integrationInput(viewer.person, values), actorOf(viewer.person));
      return showSecret(request, reply, CREATED, created.clientId, created.clientSecret);
    } catch (err) {
      return render(request, reply, 'Create an integration', createForm(viewer, CHOICES, values), refusalOf(err), 400);
    }
  });

  scope.post('/integrations/:clientId/rotate-secret', administer, async (request, reply) => {
    const { person } = viewerOf(request);
    const { clientId } = await integrationOf(ctx, person, clientIdParam(request));
    const rotated = await rotateClientSecret(ctx.db, clientId, DEFAULT_OVERLAP_HOURS, actorOf(person));
    return showSecret(request, reply, ROTATED, clientId, rotated.clientSecret);
  });

  /** A change that then shows the integration again, with what it did (Post/Redirect/Get). */
  const change = (
    path: string,
    done: DoneWord<typeof DONE>,
    act: (clientId: string, person: Person) => Promise<unknown>,
  ) =>
    scope.post(`/integrations/:clientId/${path}`, administer, async (request, reply) => {
      const { person } = viewerOf(request);
      const { clientId } = await integrationOf(ctx, person, clientIdParam(request));
      await act(clientId, person);
      return DONE.redirect(reply, integrationPath(clientId), done);
    });
  const setStatus = (status: ExtensionStatus) => (clientId: string, person: Person) =>
    setIntegrationStatus(ctx.db, clientId, status, actorOf(person));
  change('disable', 'disabled', setStatus('disabled'));
  change('enable', 'enabled', setStatus('active'));
  change('revoke-tokens', 'revoked', (clientId, person) => revokeIntegrationTokens(ctx.db, clientId, actorOf(person)));
}

/**
 * The agency's integrations: everyone reads them, with each one's request log, usage and errors (from metering,
 * which holds no body and so no PHI); administrators create them and rotate, revoke, disable and enable, through the
 * admin CLI's own functions with the person as the audit record's actor.
 */
export const integrationsSection: ConsoleSection = {
  nav: { path: INTEGRATIONS_PATH, label: 'Integrations', capability: 'read' },
  register(scope, ctx) {
    registerChanges(scope, ctx);
    registerReads(scope, ctx);
  },
};
