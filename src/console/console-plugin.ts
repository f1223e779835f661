import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_FILE_BYTES } from '../admin/socket-protocol.js';
import { sessionPerson } from '../identity/console-sessions.js';
import type { KeyEncryption } from '../identity/key-encryption.js';
import { serviceSecret } from '../identity/secrets-at-rest.js';
import { formTokenOwner, newFormToken, sendPage, type ConsoleContext, type ConsoleSection } from './console-context.js';
import { html } from './html.js';
import { CONSOLE_PATH, consolePage, publicPage } from './layout.js';
import { registerSignIn, registerSignOut } from './sign-in-routes.js';
import { sessionCookie, type SessionCookie } from './session-cookie.js';
import { STYLESHEET } from './stylesheet.js';
import { overviewSection } from './overview/overview-routes.js';
import { integrationsSection } from './integrations/integration-routes.js';
import { webhooksSection } from './webhooks/webhook-routes.js';
import { peopleSection } from './people/people-routes.js';
import { proposalsSection } from './proposals/proposals-routes.js';
import { importsSection } from './imports/imports-routes.js';

/** The console's sections, in the order of the navigation. */
const SECTIONS: readonly ConsoleSection[] = [
  overviewSection,
  integrationsSection,
  webhooksSection,
  proposalsSection,
  importsSection,
  peopleSection,
];

const NAVIGATION = SECTIONS.map((section) => section.nav);

/** Nothing loads from another host, no script or inline style runs, nothing frames a page, forms post only here. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
} as const;

const COOKIE_KEY_PURPOSE = 'console-cookies';
const FORM_TOKEN_KEY_PURPOSE = 'console-form-tokens';

/**
 * The agency console at /console: server-rendered pages for the people of one agency, over the same tenant store,
 * operator commands and audit trail as the rest of the service (see README, Console).
 */
export async function registerConsole(app: FastifyInstance, ctx: ConsoleContext, keyEncryption: KeyEncryption) {
  const secure = ctx.services.config.tokenIssuer.startsWith('https:');
  const cookieSecret = (await serviceSecret(ctx.db, keyEncryption, COOKIE_KEY_PURPOSE)).toString('base64url');
  const formTokenKey = await serviceSecret(ctx.db, keyEncryption, FORM_TOKEN_KEY_PURPOSE);
  const cookie = sessionCookie(secure);
  await app.register(
    async (scope) => {
      scope.decorateRequest('viewer', null);
      scope.addHook('onRequest', async (_request, reply) => void reply.headers(SECURITY_HEADERS));
      installFormParsers(scope);
      await scope.register(fastifyCookie, { secret: cookieSecret });
      await scope.register(fastifyCsrf, {
        sessionPlugin: '@fastify/cookie',
        cookieKey: 'console_csrf',
        cookieOpts: { path: CONSOLE_PATH, httpOnly: true, sameSite: 'strict', secure, signed: true },
        // A form's token is good only for the person it was made for (and the sign-in form's for no one).
        getUserInfo: (request: FastifyRequest) => formTokenOwner(request.viewer?.person),
        csrfOpts: { hmacKey: formTokenKey },
      });
      scope.setErrorHandler(consoleErrorHandler);
      scope.setNotFoundHandler((request, reply) => errorPage(request, reply, 404, 'There is no such page here.'));
      scope.get('/assets/console-1.css', async (_request, reply) =>
        reply.header('cache-control', 'public, max-age=31536000, immutable').type('text/css').send(STYLESHEET),
      );
      registerSignIn(scope, ctx, cookie);
      await scope.register(async (signedIn) => {
        signedIn.addHook('preHandler', signedInViewer(ctx, cookie));
        signedIn.addHook('preHandler', (request, reply, done) =>
          request.method === 'GET' ? done() : scope.csrfProtection(request, reply, done),
        );
        registerSignOut(signedIn, ctx, cookie);
        for (const section of SECTIONS) section.register(signedIn, ctx);
      });
    },
    { prefix: CONSOLE_PATH },
  );
}

/** Sets request.viewer from the session cookie; without a live session, the page is the sign-in form's redirect. */
function signedInViewer(ctx: ConsoleContext, cookie: SessionCookie) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const value = cookie.read(request);
    const person = value ? await sessionPerson(ctx.db, value) : undefined;
    if (!person) {
      if (value) cookie.clear(reply);
      return reply.redirect(`${CONSOLE_PATH}/sign-in`, 303);
    }
    request.viewer = {
      person,
      csrfToken: '',
      nav: NAVIGATION,
      path: request.url.split('?')[0],
    };
    request.viewer.csrfToken = newFormToken(reply, person);
  };
}

/** Forms post url-encoded (checkboxes of one name repeat) or, with a file, multipart, held in memory up to a limit. */
function installFormParsers(scope: FastifyInstance) {
  scope.removeContentTypeParser('application/x-www-form-urlencoded');
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const fields: Record<string, string | string[]> = {};
    for (const [name, value] of new URLSearchParams(body as string)) {
      const seen = fields[name];
      fields[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
    }
    done(null, fields);
  });
  scope.register(fastifyMultipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 50 },
    async onFile(part) {
      (part as unknown as { value: unknown }).value = { filename: part.filename, content: await part.toBuffer() };
    },
  });
}

function errorPage(request: FastifyRequest, reply: FastifyReply, status: number, message: string) {
  const body = html`<p class="notice refused" role="alert">${message}</p><p><a href="${CONSOLE_PATH}/">Back to the console</a></p>`;
  const title = status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : 'Something went wrong';
  const page = request.viewer ? consolePage(request.viewer, title, body) : publicPage(title, body);
  return sendPage(reply, status, page);
}

/** An error is a page saying what happened, never a stack trace: a refusal's message, or a request id for a failure. */
function consoleErrorHandler(this: FastifyInstance, err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
  if (status >= 500) {
    request.log.error({ err }, 'console page failed');
    return errorPage(request, reply, status, `The page could not be shown. Request id: ${request.id}.`);
  }
  if (err.code === 'FST_CSRF_INVALID_TOKEN' || err.code === 'FST_CSRF_MISSING_SECRET')
    return errorPage(
      request,
      reply,
      403,
      'This form has expired or did not come from the console: open the page again and resend it.',
    );
  return errorPage(request, reply, status, err.message);
}
