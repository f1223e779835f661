import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout } from 'node:timers/promises';
import t from 'tap';
import { buildSignedInApp } from '../helpers/app.js';
import { lockTable, testDatabase } from '../helpers/database.js';

// A lock held by a second connection is the only dependable way to make a handler outlast its clock; PGlite has one connection.
t.test(
  'a command that outlasts the handler timeout answers 504 and commits nothing',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs a second PostgreSQL connection' },
  async (t) => {
    const { db } = await testDatabase();
    // Long enough that issuing the test's token and the retry below finish in time on a loaded machine.
    const signed = await buildSignedInApp({ config: { handlerTimeoutMs: 2000 } });
    const release = await lockTable(t, 'tasks');

    const request = {
      method: 'POST' as const,
      url: '/api/v1/ext/tasks',
      headers: { 'idempotency-key': 'timeout-key-0001' },
      payload: { title: 'Slow' },
    };
    const slow = await signed.request(request);
    t.equal(slow.statusCode, 504);
    t.match(slow.json().error, { code: 'PLATFORM_TIMEOUT', retryable: true });

    await release();
    const tasks = await db
      .selectFrom('tasks')
      .select('id')
      .where('agency_id', '=', signed.integration.agencyId)
      .execute();
    t.equal(tasks.length, 0, 'the task was not committed');
    const retry = await signed.request(request);
    t.equal(retry.statusCode, 200, 'the key was rolled back with it, so the retry runs');
    t.notOk(retry.headers['idempotent-replayed']);

    // Metered with the time it took: Fastify's own clock (reply.elapsedTime) reads 0 when it has no logger of its own.
    await signed.app.close();
    const metered = await db
      .selectFrom('metering_events')
      .select(['status', 'duration_ms'])
      .where('request_id', '=', String(slow.headers['x-request-id']))
      .execute();
    t.equal(metered.length, 1);
    t.equal(metered[0].status, 504);
    t.ok(
      metered[0].duration_ms >= 1990,
      `the 504 was metered with its ${metered[0].duration_ms} ms, about the 2 s timeout`,
    );
  },
);

t.test(
  'a read whose client hung up before the answer is still metered, once',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs a second PostgreSQL connection' },
  async (t) => {
    const { db } = await testDatabase();
    const signed = await buildSignedInApp();
    const release = await lockTable(t, 'patients');

    await signed.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = signed.app.server.address() as AddressInfo;
    const requestId = 'hung-up-read-0001';
    const client = request({
      host: '127.0.0.1',
      port,
      path: '/api/v1/ext/patients?limit=1',
      headers: { authorization: `Bearer ${signed.token}`, 'x-request-id': requestId },
    });
    client.on('error', () => {});
    client.end();
    await setTimeout(100);
    client.destroy();
    await setTimeout(200);
    await release();

    // Closing waits for the handler that was left running and flushes what was metered.
    await signed.app.close();
    const metered = await db
      .selectFrom('metering_events')
      .select(['operation_id', 'status', 'duration_ms'])
      .where('request_id', '=', requestId)
      .execute();
    t.equal(metered.length, 1);
    t.match(metered[0], { operation_id: 'listPatients', status: 200 });
    // The lock was released about 300 ms after the request was sent, 200 ms after the hang-up.
    t.ok(metered[0].duration_ms >= 200, `metered with the ${metered[0].duration_ms} ms it ran, past the hang-up`);
  },
);
