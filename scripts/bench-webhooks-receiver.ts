import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The loopback receiver of scripts/bench-webhooks.ts, in its own process so that it takes no time from the worker
 * measured: answers 204 at once, and reports each delivery's event time and arrival over IPC.
 */
const server = createServer((request, reply) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    reply.statusCode = 204;
    reply.end();
    const { created_at: createdAt } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { created_at: string };
    process.send!({
      delivery: String(request.headers['x-svc-delivery-id']),
      latencyMs: Date.now() - Date.parse(createdAt),
    });
  });
});
server.keepAliveTimeout = 0;
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('disconnect', () => server.close(() => process.exit(0)));
