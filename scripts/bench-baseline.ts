/**
 * Bare Fastify reference for scripts/bench.ts. For each gateway scenario it serves the exact bytes and
 * content-type the real service answered, so the ratio isolates the service's own overhead, and the same bytes
 * under FAST_JWT_PREFIX behind the token check alone; with a `clinical` section it also serves the minimal live
 * routes of bench-baseline-clinical.ts.
 * Usage: node --import tsx scripts/bench-baseline.ts <baseline.json> (PORT from the environment).
 */
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyReply, type HTTPMethods } from 'fastify';
import { registerClinicalRoutes, type ClinicalBaselineConfig } from './bench-baseline-clinical.js';
import { registerOrderRoutes } from './bench-baseline-orders.js';
import { registerRemittanceRoutes } from './bench-baseline-remittances.js';
import { registerQueryRoutes } from './bench-baseline-queries.js';
import { authenticated, tokenVerifier, type TokenCheckConfig } from './bench-baseline-tokens.js';
import { FAST_JWT_PREFIX } from './bench-scenarios.js';

export interface BaselineRoute {
  method: HTTPMethods;
  path: string;
  status: number;
  contentType: string;
  bodyBase64: string;
}

export interface BaselineConfig {
  routes: BaselineRoute[];
  tokens: TokenCheckConfig;
  clinical?: ClinicalBaselineConfig;
}

const configFile = process.argv[2];
if (!configFile) throw new Error('usage: bench-baseline.ts <baseline.json>');
const config: BaselineConfig = JSON.parse(readFileSync(configFile, 'utf8'));

const app = Fastify({ logger: false });
const verify = await tokenVerifier(config.tokens);
for (const route of config.routes) {
  const body = Buffer.from(route.bodyBase64, 'base64');
  const url = route.path.split('?')[0];
  const send = async (reply: FastifyReply) => reply.code(route.status).type(route.contentType).send(body);
  app.route({ method: route.method, url, handler: async (_request, reply) => send(reply) });
  app.route({
    method: route.method,
    url: FAST_JWT_PREFIX + url,
    handler: authenticated(verify, async (_agencyId, _request, reply) => send(reply)),
  });
}
if (config.clinical) await registerClinicalRoutes(app, config.clinical, verify);
if (config.clinical) await registerOrderRoutes(app, config.clinical, verify);
if (config.clinical) await registerRemittanceRoutes(app, config.clinical, verify);
if (config.clinical) await registerQueryRoutes(app, config.clinical, verify);
app.get('/livez', async () => ({ status: 'ok' }));

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void app.close().then(() => process.exit(0)));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
