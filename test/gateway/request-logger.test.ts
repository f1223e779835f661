import t from 'tap';
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { deferredRequestLogger } from '../../src/gateway/request-logger.js';

function capturedApp(level: string) {
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
  // Fastify's own logger and every child inherit this method: only the children bound to a request are counted.
  logger.child = function (this: typeof logger, ...args: Parameters<typeof child>) {
    if ('reqId' in args[0]) children++;
    return child.apply(this, args);
  } as typeof logger.child;
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, childLoggerFactory: deferredRequestLogger });
  app.get('/quiet', async (request) => {
    request.log.debug('below the level');
    return { ok: true };
  });
  app.get('/loud', async (request) => {
    request.log.warn({ detail: 1 }, 'first');
    request.log.child({ step: 'inner' }).error('second');
    return { level: request.log.level };
  });
  return { app, lines, children: () => children };
}

t.test('a request that logs nothing at the configured level makes no child logger', async (t) => {
  // Fastify logs every request at info: at warn, the route's own debug call is all there is.
  const { app, lines, children } = capturedApp('warn');
  t.teardown(() => app.close());
  const res = await app.inject({ url: '/quiet' });
  t.equal(res.statusCode, 200);
  t.equal(children(), 0);
  t.same(lines, []);
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
