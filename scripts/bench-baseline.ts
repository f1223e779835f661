/**
 * Bare Fastify reference for scripts/bench.ts. For each gateway scenario it serves the exact bytes and
 * content-type the real service answered, so the ratio isolates the service's own overhead; with a
 * `clinical` section it also serves the minimal live routes of bench-baseline-clinical.ts.
 * Usage: node --import tsx scripts/bench-baseline.ts <baseline.json> (PORT from the environment).
 */
import { readFileSync } from 'node:fs';
import Fastify, { type HTTPMethods } from 'fastify';
import { registerClinicalRoutes, type ClinicalBaselineConfig } from './bench-baseline-clinical.js';

export interface BaselineRoute {
  method: HTTPMethods;
  path: string;
  status: number;
  contentType: string;
  bodyBase64: string;
}

export interface BaselineConfig {
  routes: BaselineRoute[];
  clinical?: ClinicalBaselineConfig;
}

const configFile = process.argv[2];
if (!configFile) throw new Error('usage: bench-baseline.ts <baseline.json>');
const config: BaselineConfig = JSON.parse(readFileSync(configFile, 'utf8'));

const app = Fastify({ logger: false });
for (const route of config.routes) {
  const body = Buffer.from(route.bodyBase64, 'base64');
  app.route({
    method: route.method,
    url: route.path.split('?')[0],
    handler: async (_request, reply) => reply.code(route.status).type(route.contentType).send(body),
  });
}
if (config.clinical) await registerClinicalRoutes(app, config.clinical);
app.get('/livez', async () => ({ status: 'ok' }));

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void app.close().then(() => process.exit(0)));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
