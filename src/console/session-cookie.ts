import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_LIFETIME_MS } from '../identity/console-sessions.js';
import { CONSOLE_PATH } from './layout.js';

const NAME = 'console_session';

/** The session cookie: HTTP-only, same-site strict, on the console's path only, Secure wherever the service is https. */
export interface SessionCookie {
  read(request: FastifyRequest): string | undefined;
  set(reply: FastifyReply, value: string): void;
  clear(reply: FastifyReply): void;
}

export function sessionCookie(secure: boolean): SessionCookie {
  const options = { path: CONSOLE_PATH, httpOnly: true, sameSite: 'strict', secure } as const;
  return {
    read: (request) => request.cookies[NAME],
    set: (reply, value) => void reply.setCookie(NAME, value, { ...options, maxAge: SESSION_LIFETIME_MS / 1000 }),
    clear: (reply) => void reply.clearCookie(NAME, options),
  };
}
