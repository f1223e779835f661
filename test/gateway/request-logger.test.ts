import t from 'tap';
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { accessLog, requestLogging } from '../../src/gateway/http/request-logger.js';
import { markReceived } from '../../src/gateway/core/response-time.js';

function capturedLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const logger = pino({ level }, stream);
  let children = 0;
  const child = logger.child;
  // Every child inherits this method: only the children bound to a request are counted.
  logger.child = function (this: typeof logger, ...args: Parameters<typeof child>) {
    if ('reqId' in args[0]) children++;
    return child.apply(this, args);
  } as typeof logger.child;
  return { logger, lines, children: () => children };
}

function capturedApp(level: string) {
  const captured = capturedLogger(level);
  const app = Fastify(requestLogging(captured.logger));
  app.addHook('onRequest', (request, _reply, done) => {
    markReceived(request);
    done();
  });
  accessLog(app, captured.logger);
  app.get('/quiet', async (request) => {
    request.log.debug('below the level');
    return { ok: true };
  });
  app.get('/loud', async (request) => {
    request.log.warn({ detail: 1 }, 'first');
    request.log.child({ step: 'inner' }).error('second');
    return { level: request.log.level };
  });
  app.get('/patients', { config: { operationId: 'listPatients' } }, async () => ({ data: [] }));
  return { app, ...captured };
}

t.test('a request that logs nothing at the configured level makes no child logger', async (t) => {
  const { app, lines, children } = capturedApp('warn');
  t.teardown(() => app.close());
  const res = await app.inject({ url: '/quiet' });
  t.equal(res.statusCode, 200);
  t.equal(children(), 0);
  t.same(lines, [], 'below info there is no access line either');
});

t.test('a request that logs gets one child, with the request id bound, and its own children keep it', async (t) => {
  const { app, lines, children } = capturedApp('warn');
  t.teardown(() => app.close());
  const res = await app.inject({ url: '/loud' });
  t.same(res.json(), { level: 'warn' });
  t.equal(children(), 1, 'made once, on the first call let through');
  t.match(lines, [
    { level: 40, reqId: String, detail: 1, msg: 'first' },
    { level: 50, reqId: String, step: 'inner', msg: 'second' },
  ]);
  t.equal(lines[0].reqId, lines[1].reqId);
});

t.test('Fastify has no logger of its own, so it listens for no response to finish', async (t) => {
  const finishListeners = async (app: FastifyInstance) => {
    let count = -1;
    app.get('/count', async (_request, reply) => {
      count = reply.raw.listenerCount('finish') + reply.raw.listenerCount('error');
      return {};
    });
    await app.inject({ url: '/count' });
    await app.close();
    return count;
  };
  const { logger } = capturedLogger('info');
  // The injected response has listeners of its own: as many as with no logging at all.
  const none = await finishListeners(Fastify({ logger: false }));
  t.equal(await finishListeners(Fastify(requestLogging(logger))), none);
  t.ok(
    (await finishListeners(Fastify({ loggerInstance: logger as FastifyBaseLogger }))) > none,
    'with a logger of its own it would',
  );
});

t.test('at info each response gets one access line, without the query string', async (t) => {
  const { app, lines } = capturedApp('info');
  t.teardown(() => app.close());
  const res = await app.inject({ url: '/patients?name=Jane%20Doe' });
  t.equal(res.statusCode, 200);
  t.equal(lines.length, 1);
  t.match(lines[0], {
    level: 30,
    reqId: String,
    msg: 'request completed',
    method: 'GET',
    path: '/patients',
    statusCode: 200,
    operationId: 'listPatients',
    responseTimeMs: Number,
  });
  t.notMatch(JSON.stringify(lines[0]), /Jane/);
  t.match(String(lines[0].responseTimeMs), /^\d+(\.\d{1,3})?$/, 'in milliseconds to the microsecond');
  await app.inject({ url: '/missing' });
  t.match(lines.filter((line) => line.msg === 'request completed')[1], { statusCode: 404, path: '/missing' });
});
