import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endSession, startSession } from '../identity/console-sessions.js';
import { changeOwnPassword } from '../admin/user.js';
import { MIN_PASSWORD_LENGTH, newPasswordProblem, signIn, type Person } from '../identity/mcp-authorization/people.js';
import { SignInFailureLimiter, signInRefusal } from '../identity/mcp-authorization/sign-in-failures.js';
import { PlatformError } from '../shared/platform-error.js';
import { formText, sendPage, newFormToken, type ConsoleContext } from './console-context.js';
import { html } from './html.js';
import { CONSOLE_PATH, noticeBlock, publicPage } from './layout.js';
import type { SessionCookie } from './session-cookie.js';

const SIGN_IN_PATH = `${CONSOLE_PATH}/sign-in`;
const PASSWORD_PATH = `${CONSOLE_PATH}/password`;

const csrfInput = (reply: FastifyReply) => html`<input type="hidden" name="_csrf" value="${newFormToken(reply)}">`;

function signInPage(reply: FastifyReply, status: number, error?: string, email = '') {
  return sendPage(
    reply,
    status,
    publicPage(
      'Sign in to the agency console',
      html`${noticeBlock(error ? { kind: 'refused', text: error } : undefined)}
<form method="post" action="${SIGN_IN_PATH}" class="stack">${csrfInput(reply)}
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" value="${email}" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
    ),
  );
}

/** The first sign-in: the password an administrator handed over is typed once more and replaced. */
function passwordPage(reply: FastifyReply, status: number, email: string, error?: string) {
  return sendPage(
    reply,
    status,
    publicPage(
      'Choose your own password',
      html`<p>The password you signed in with was handed to you by an administrator. Choose your own; the one you were given stops working.</p>
${noticeBlock(error ? { kind: 'refused', text: error } : undefined)}
<form method="post" action="${PASSWORD_PATH}" class="stack">${csrfInput(reply)}
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" value="${email}" required readonly>
<label for="password">Password you were given</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<label for="new_password">New password (at least ${MIN_PASSWORD_LENGTH} characters)</label><input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required autofocus>
<label for="confirm_password">New password again</label><input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required>
<button type="submit">Save and sign in</button></form>`,
    ),
  );
}

/**
 * Sign-in, the first sign-in's password change, and sign-out: plain HTML forms that post (password managers, assistive
 * technology and a browser without scripts all see a real form), under the MCP surface's sign-in limits.
 */
export function registerSignIn(scope: FastifyInstance, ctx: ConsoleContext, cookie: SessionCookie) {
  const failures = new SignInFailureLimiter(ctx.db);

  /** The person the form's email and password name, or undefined once a page saying why was sent. */
  const checked = async (request: FastifyRequest, reply: FastifyReply): Promise<Person | undefined> => {
    const email = formText(request, 'email');
    try {
      const person = await signIn(ctx.db, failures, {
        email,
        password: formText(request, 'password'),
        remoteAddress: request.ip,
      });
      if (!person) await signInPage(reply, 401, 'The email or password is not right.', email);
      return person;
    } catch (err) {
      if (!(err instanceof PlatformError)) throw err;
      reply.headers(err.headers ?? {});
      await signInPage(reply, err.status, signInRefusal(err), email);
      return undefined;
    }
  };

  const enter = async (reply: FastifyReply, person: Person) => {
    cookie.set(reply, await startSession(ctx.db, person));
    return reply.redirect(`${CONSOLE_PATH}/`, 303);
  };

  scope.get('/sign-in', async (_request, reply) => signInPage(reply, 200));

  scope.post('/sign-in', { preHandler: scope.csrfProtection }, async (request, reply) => {
    const person = await checked(request, reply);
    if (!person) return reply;
    if (person.passwordChangeRequired) return passwordPage(reply, 200, person.email);
    return enter(reply, person);
  });

  // The password handed over is checked again (with the sign-in limits): the page itself proves nothing.
  scope.post('/password', { preHandler: scope.csrfProtection }, async (request, reply) => {
    const person = await checked(request, reply);
    if (!person) return reply;
    const chosen = formText(request, 'new_password');
    const problem = newPasswordProblem(formText(request, 'password'), chosen, formText(request, 'confirm_password'));
    if (problem) return passwordPage(reply, 400, person.email, problem);
    await changeOwnPassword(ctx.db, person, chosen);
    return enter(reply, { ...person, passwordChangeRequired: false });
  });
}

/** Sign-out, in the signed-in scope (whose form tokens are the person's). */
export function registerSignOut(scope: FastifyInstance, ctx: ConsoleContext, cookie: SessionCookie) {
  scope.post('/sign-out', async (request, reply) => {
    const value = cookie.read(request);
    if (value) await endSession(ctx.db, value);
    cookie.clear(reply);
    return reply.redirect(SIGN_IN_PATH, 303);
  });
}
