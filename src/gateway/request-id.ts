import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{8,128}$/;

/** Keeps a caller's x-request-id when it is well-formed, so traces join up; otherwise mints one. */
export function requestIdFor(request: IncomingMessage): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && ACCEPTABLE.test(sent) ? sent : `req_${randomUUID()}`;
}
