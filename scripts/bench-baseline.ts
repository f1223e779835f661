/**
 * Bare Fastify reference for scripts/bench.ts: serves, for each benchmarked route, the exact bytes
 * and content-type the real service answered, so the ratio isolates the service's own overhead.
 * Usage: node --import tsx scripts/bench-baseline.ts <routes.json> (PORT from the environment).
 */
import { readFileSync } from 'node:fs';
import Fastify, { type HTTPMethods } from 'fastify';

export interface BaselineRoute {
  method: HTTPMethods;
  path: string;
  status: number;
  contentType: string;
  bodyBase64: string;
}

const routesFile = process.argv[2];
if (!routesFile) throw new Error('usage: bench-baseline.ts <routes.json>');
const routes: BaselineRoute[] = JSON.parse(readFileSync(routesFile, 'utf8'));

const app = Fastify({ logger: false });
for (const route of routes) {
  const body = Buffer.from(route.bodyBase64, 'base64');
  app.route({
    method: route.method,
    url: route.path.split('?')[0],
    handler: async (_request, reply) => reply.code(route.status).type(route.contentType).send(body),
  });
}
app.get('/livez', async () => ({ status: 'ok' }));

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void app.close().then(() => process.exit(0)));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
