import type { FastifyReply, FastifyRequest } from 'fastify';
import { accessLogHijacked } from '../gateway/http/request-logger.js';

/**
 * Gives the raw response to another library (oidc-provider, the MCP SDK's transport): the headers Fastify's hooks set
 * (x-request-id) go onto it first, Fastify sends nothing more, and the access line is still written when it finishes.
 */
export function handOver(request: FastifyRequest, reply: FastifyReply) {
  for (const [name, value] of Object.entries(reply.getHeaders()))
    if (value !== undefined) reply.raw.setHeader(name, value);
  reply.hijack();
  accessLogHijacked(request, reply);
}
