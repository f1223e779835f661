/**
 * The baselines' JWT check: the service's tokens verified with fast-jwt and its cache, keys from the service's JWKS.
 * Nothing else: no policy, limits, metering or contract shaping.
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { createVerifier } from 'fast-jwt';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface TokenCheckConfig {
  /** The service's /.well-known/jwks.json. */
  jwksUrl: string;
  issuer: string;
  audience: string;
}

export type Verify = (token: string) => Record<string, unknown> | Promise<Record<string, unknown>>;
type AgencyHandler = (agencyId: string, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * With one key in the JWKS (a fresh database) fast-jwt gets it as a static key, its synchronous and fastest form;
 * with several it looks the key up by kid, which makes every verify asynchronous.
 */
export async function tokenVerifier(config: TokenCheckConfig): Promise<Verify> {
  const response = await fetch(config.jwksUrl);
  if (!response.ok) throw new Error(`${config.jwksUrl} answered ${response.status}`);
  const { keys } = (await response.json()) as { keys: (JsonWebKey & { kid: string })[] };
  const pems = new Map(
    keys.map((jwk) => [
      jwk.kid,
      createPublicKey({ key: jwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString(),
    ]),
  );
  const options = {
    algorithms: ['ES256' as const],
    allowedIss: config.issuer,
    allowedAud: config.audience,
    cache: true,
  };
  if (pems.size === 1) return createVerifier({ ...options, key: [...pems.values()][0] });
  return createVerifier({
    ...options,
    key: async ({ header }: { header: Record<string, unknown> }) => pems.get(String(header.kid)) ?? '',
  });
}

/** Runs `handler` with the token's agency, or answers 401. */
export function authenticated(verify: Verify, handler: AgencyHandler) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const token = /^Bearer +(\S+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
    let agencyId: unknown;
    try {
      agencyId = (await verify(token)).agency_id;
    } catch {
      return reply.code(401).send({ error: 'invalid_token' });
    }
    return handler(String(agencyId), request, reply);
  };
}
