import {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, LogFn, Logger } from 'pino';
import { elapsedMs } from '../core/response-time.js';

type LogArgs = Parameters<LogFn>;

/**
 * A request's logger, made on its first log call that its level lets through: pino serializes a child's bindings
 * when the child is made (1.3 µs of a 69 µs health call), and most requests log nothing at the configured level.
 */
class DeferredChildLogger implements FastifyBaseLogger {
  private logger: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
  ) {}

  get level(): string {
    return (this.logger ?? this.parent).level;
  }

  set level(level: string) {
    this.made().level = level;
  }

  fatal(...args: LogArgs) {
    this.log('fatal', args);
  }

  error(...args: LogArgs) {
    this.log('error', args);
  }

  warn(...args: LogArgs) {
    this.log('warn', args);
  }

  info(...args: LogArgs) {
    this.log('info', args);
  }

  debug(...args: LogArgs) {
    this.log('debug', args);
  }

  trace(...args: LogArgs) {
    this.log('trace', args);
  }

  silent() {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.made().child(bindings, options);
  }

  private log(level: Level, args: LogArgs) {
    if ((this.logger ?? this.parent).isLevelEnabled(level)) this.made()[level](...args);
  }

  private made(): Logger {
    return (this.logger ??= this.parent.child(this.bindings));
  }
}

/** Fastify's own lines but the one it writes as a request arrives: accessLog() writes one per response instead. */
class ServiceLogController extends LogController {
  override incomingRequest(): void {}
}

/**
 * Fastify options for the service's logging. Fastify itself gets no logger: with one (or with any onResponse hook) it
 * adds and removes a 'finish' and an 'error' listener on every response to log its completion, about 1-2 % of a warm
 * health call's throughput (A/B). Requests still log through `request.log`, a deferred child of the service's logger,
 * and so do Fastify's own warnings about a request; the access line comes from accessLog().
 */
export function requestLogging(root: Logger): FastifyServerOptions {
  return {
    logger: false,
    logController: new ServiceLogController(),
    // Fastify's own (null) logger is ignored: children are made from the service's.
    childLoggerFactory: (_fastifyLogger, bindings, options) =>
      options.level ? root.child(bindings, options) : new DeferredChildLogger(root, bindings),
  };
}

/**
 * One line per response at info, as it is handed to the socket: status, method, path (never the query string, which
 * can carry patient details), time since arrival, and the operation and integration of a gateway call.
 * Below info nothing is installed, so a request pays for no hook.
 */
function logCompleted(request: FastifyRequest, statusCode: number) {
  const principal = request.call?.principal;
  request.log.info(
    {
      method: request.method,
      path: request.url.split('?', 1)[0],
      statusCode,
      responseTimeMs: request.receivedAt === undefined ? undefined : Math.round(elapsedMs(request) * 1000) / 1000,
      operationId: request.routeOptions.config.operationId,
      agencyId: principal?.agencyId,
      extensionId: principal?.extensionId,
    },
    'request completed',
  );
}

export function accessLog(app: FastifyInstance, root: Logger) {
  if (!root.isLevelEnabled('info')) return;
  app.addHook('onSend', (request, reply, _payload, done) => {
    logCompleted(request, reply.statusCode);
    done();
  });
}

/** The access line of a reply handed to another library (reply.hijack(): Fastify's hooks see no send), when it finishes. */
export function accessLogHijacked(request: FastifyRequest, reply: FastifyReply) {
  reply.raw.once('finish', () => logCompleted(request, reply.raw.statusCode));
}
