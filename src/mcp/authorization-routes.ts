import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { DB } from '../db/schema.js';
import {
  AUTHORIZATION_PATHS,
  missingRequiredScopes,
  PEOPLE_GRANT_TYPES,
} from '../identity/mcp-authorization/authorization-server.js';
import {
  consentPage,
  loginPage,
  page,
  passwordChangePage,
  PAGE_SECURITY_HEADERS,
  escapeHtml,
} from '../identity/mcp-authorization/pages.js';
import { findPerson, newPasswordProblem, signIn } from '../identity/mcp-authorization/people.js';
import { changeOwnPassword } from '../admin/user.js';
import { SignInFailureLimiter, signInRefusal } from '../identity/mcp-authorization/sign-in-failures.js';
import { PlatformError } from '../shared/platform-error.js';
import { handOver } from './hand-over.js';

type Handler = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * oidc-provider is a Koa application: its routes are Fastify routes whose handler gives the raw request and response
 * to the provider's callback (see handOver). Bodies of its own routes are left unread for it to parse;
 * on the shared token route Fastify has parsed the form, and oidc-provider reads that instead.
 */
function providerRoute(provider: Provider): Handler {
  const callback = provider.callback();
  return (request, reply) => {
    handOver(request, reply);
    if (request.body !== undefined) (request.raw as { body?: unknown }).body = request.body;
    void callback(request.raw, reply.raw);
  };
}

/** The token route's grants that oidc-provider answers (the machine flow's client_credentials stays in the pipeline). */
export function peopleGrantHandover(provider: Provider): Record<string, Handler> {
  const route = providerRoute(provider);
  return Object.fromEntries(PEOPLE_GRANT_TYPES.map((grantType) => [grantType, route]));
}

function html(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).headers(PAGE_SECURITY_HEADERS).type('text/html; charset=utf-8').send(body);
}

/** An interaction that cannot go on (expired, its cookie missing): a page saying so, never a stack trace. */
function interactionGone(reply: FastifyReply, err: unknown) {
  if (!(err instanceof errors.OIDCProviderError)) throw err;
  return html(
    reply,
    err.statusCode ?? 400,
    page(
      'Sign-in expired',
      `<h1>This sign-in has expired</h1><p>${escapeHtml(err.error_description ?? err.message)}</p><p>Start again from your assistant.</p>`,
    ),
  );
}

/** The interaction of the request's cookie, or undefined once the page saying it is gone was sent. */
async function interactionOf(provider: Provider, request: FastifyRequest, reply: FastifyReply) {
  try {
    return await provider.interactionDetails(request.raw, reply.raw);
  } catch (err) {
    interactionGone(reply, err);
    return undefined;
  }
}

const formField = (request: FastifyRequest, name: string) => {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/**
 * The login and consent pages of the authorization server, and its routes: authorization (and its resume), revocation,
 * and, through the token route, the authorization_code and refresh_token grants.
 */
export function registerPeopleAuthorization(app: FastifyInstance, provider: Provider, db: Kysely<DB>) {
  const route = providerRoute(provider);
  const failures = new SignInFailureLimiter(db);
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // The stream stays unread: oidc-provider parses its own bodies.
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.route({ method: ['GET', 'POST'], url: AUTHORIZATION_PATHS.authorization, handler: route });
    scope.get(`${AUTHORIZATION_PATHS.authorization}/:uid`, route);
    scope.post(AUTHORIZATION_PATHS.revocation, route);
  });

  const interactionPath = (uid: string) => `${AUTHORIZATION_PATHS.interaction}/${encodeURIComponent(uid)}`;

  app.get(`${AUTHORIZATION_PATHS.interaction}/:uid`, async (request, reply) => {
    const details = await interactionOf(provider, request, reply);
    if (!details) return reply;
    const missing = missingRequiredScopes(String(details.params.scope ?? ''));
    if (missing.length > 0) {
      handOver(request, reply);
      return provider.interactionFinished(request.raw, reply.raw, {
        error: 'invalid_scope',
        error_description: `the scopes ${missing.join(' and ')} are required`,
      });
    }
    const client = await provider.Client.find(String(details.params.client_id));
    const clientName = client?.clientName ?? String(details.params.client_id);
    if (details.prompt.name === 'login')
      return html(reply, 200, loginPage(`${interactionPath(details.uid)}/login`, clientName));
    const person = details.session?.accountId ? await findPerson(db, details.session.accountId) : undefined;
    const scopes = String(details.params.scope).split(' ').filter(Boolean);
    return html(
      reply,
      200,
      consentPage(
        `${interactionPath(details.uid)}/consent`,
        clientName,
        person ? `${person.name} (${person.email})` : 'unknown',
        scopes,
      ),
    );
  });

  type Interaction = NonNullable<Awaited<ReturnType<typeof interactionOf>>>;
  const clientNameOf = async (details: Interaction) =>
    (await provider.Client.find(String(details.params.client_id)))?.clientName ?? '';

  /** The person the form's email and password name, or undefined once the login page saying why was sent again. */
  const signedIn = async (request: FastifyRequest, reply: FastifyReply, details: Interaction) => {
    const loginAgain = async (status: number, error: string) =>
      void html(reply, status, loginPage(`${interactionPath(details.uid)}/login`, await clientNameOf(details), error));
    try {
      const person = await signIn(db, failures, {
        email: formField(request, 'email'),
        password: formField(request, 'password'),
        remoteAddress: request.ip,
      });
      if (!person) await loginAgain(401, 'The email or password is not right.');
      return person;
    } catch (err) {
      if (!(err instanceof PlatformError)) throw err;
      reply.headers(err.headers ?? {});
      await loginAgain(err.status, signInRefusal(err));
      return undefined;
    }
  };

  const finishLogin = (request: FastifyRequest, reply: FastifyReply, accountId: string) => {
    handOver(request, reply);
    return provider.interactionFinished(
      request.raw,
      reply.raw,
      { login: { accountId } },
      { mergeWithLastSubmission: false },
    );
  };

  const passwordPage = async (reply: FastifyReply, details: Interaction, email: string, status = 200, error?: string) =>
    html(
      reply,
      status,
      passwordChangePage(`${interactionPath(details.uid)}/password`, await clientNameOf(details), email, error),
    );

  app.post(`${AUTHORIZATION_PATHS.interaction}/:uid/login`, async (request, reply) => {
    const details = await interactionOf(provider, request, reply);
    if (!details) return reply;
    const person = await signedIn(request, reply, details);
    if (!person) return reply;
    if (person.passwordChangeRequired) return passwordPage(reply, details, person.email);
    return finishLogin(request, reply, person.id);
  });

  // The password handed over is checked again (with the sign-in limits): the page itself proves nothing.
  app.post(`${AUTHORIZATION_PATHS.interaction}/:uid/password`, async (request, reply) => {
    const details = await interactionOf(provider, request, reply);
    if (!details) return reply;
    const person = await signedIn(request, reply, details);
    if (!person) return reply;
    const problem = newPasswordProblem(
      formField(request, 'password'),
      formField(request, 'new_password'),
      formField(request, 'confirm_password'),
    );
    if (problem) return passwordPage(reply, details, person.email, 400, problem);
    await changeOwnPassword(db, person, formField(request, 'new_password'));
    return finishLogin(request, reply, person.id);
  });

  app.post(`${AUTHORIZATION_PATHS.interaction}/:uid/consent`, async (request, reply) => {
    const details = await interactionOf(provider, request, reply);
    if (!details) return reply;
    handOver(request, reply);
    if (formField(request, 'decision') !== 'allow' || !details.session?.accountId) {
      return provider.interactionFinished(request.raw, reply.raw, {
        error: 'access_denied',
        error_description: 'the user did not allow access',
      });
    }
    const existing = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
    // A grant revoked while its person was on this page (a reused code or refresh token) is not brought back.
    if (details.grantId && !existing) {
      return provider.interactionFinished(request.raw, reply.raw, {
        error: 'access_denied',
        error_description: 'this access was revoked; start again from your assistant',
      });
    }
    const grant =
      existing ??
      new provider.Grant({ accountId: details.session.accountId, clientId: String(details.params.client_id) });
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
      grant.addResourceScope(resource, scopes.join(' '));
    const grantId = await grant.save();
    return provider.interactionFinished(
      request.raw,
      reply.raw,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    );
  });
}
