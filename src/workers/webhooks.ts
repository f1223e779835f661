import { webhookDelivery } from '../generated/contract.js';
import { TenantPseudonyms } from '../db/pseudonyms.js';
import {
  claimDue,
  fanOut,
  recordAttempt,
  recordOutcome,
  type AttemptOutcome,
  type ClaimedDelivery,
  type RecordedOutcome,
} from '../events/delivery-queue.js';
import { deliveryBody } from '../events/payload.js';
import {
  receiverAddress,
  receiverUrl,
  ReceiverRefused,
  systemResolver,
  type Resolver,
} from '../events/receiver-address.js';
import { postToReceiver, type ReceiverAnswer } from '../events/receiver-request.js';
import { deliveryHeaders, type SigningSecrets } from '../events/signing.js';
import { signingSecrets } from '../events/subscriptions.js';
import type { KeyEncryption } from '../identity/key-encryption.js';
import type { DeliveryTracer } from '../observability/call-trace.js';
import type { MetricsRegistrar } from '../observability/metrics.js';
import type { Worker, WorkerContext } from './worker.js';

export interface WebhookWorkerOptions {
  /** Attempts in flight at once. */
  concurrency?: number;
  /** How long to wait for new work when there is none. */
  idlePollMs?: number;
  /** How long an attempt is this worker's: past it, another worker may try the delivery again. */
  leaseMs?: number;
  /** Upper bounds of the waits between attempts (full jitter); the contract's schedule by default. */
  retryDelaysMs?: readonly number[];
  /** How host names are resolved (tests pass a stub). */
  resolver?: Resolver;
  timeoutMs?: number;
}

const SECOND = 1000;
const DAY = 86_400 * SECOND;
const FAN_OUT_BATCH = 500;

/** Full jitter: a random wait up to the attempt's delay, or the receiver's Retry-After when longer; null when none is left. */
export function retryDelayMs(
  attempt: number,
  delays: readonly number[],
  retryAfterMs: number | undefined,
  random = Math.random,
): number | null {
  if (attempt > delays.length) return null;
  const jittered = random() * delays[attempt - 1];
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, webhookDelivery.retry_after_max_seconds * SECOND));
}

// From a first attempt's fraction of a second to the retries' hours and the last one's days.
const LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400, 86_400];

/** Attempts by event type and outcome, and the lag of delivered events, in the process that makes the attempts. */
function deliveryMetrics(metrics: MetricsRegistrar) {
  const attempts = metrics.counter({
    name: 'extension_api_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by event type and outcome: delivered, retry, failed (no retry left), disabled (the subscription with it), superseded (recorded after its lease ran out), error (not made or not recorded).',
    labelNames: ['event_type', 'outcome'],
  });
  const lag = metrics.histogram({
    name: 'extension_api_webhook_delivery_lag_seconds',
    help: "Seconds from an event's creation to its successful delivery, retries included, by event type.",
    labelNames: ['event_type'],
    buckets: LAG_BUCKETS,
  });
  return {
    recorded(eventType: string, recorded: RecordedOutcome) {
      attempts.inc({ event_type: eventType, outcome: recorded.outcome });
      if (recorded.outcome === 'delivered') lag.observe({ event_type: eventType }, recorded.lagSeconds);
    },
    broken: (eventType: string) => attempts.inc({ event_type: eventType, outcome: 'error' }),
  };
}

/**
 * Delivers webhooks: makes each new event's deliveries, then attempts due deliveries, several at once,
 * signing each attempt with the subscription's secrets. Any number run on one database (the queues are claimed with
 * SKIP LOCKED). stop() takes no new work and waits for the attempts in flight.
 */
export function webhooks(options: WebhookWorkerOptions = {}): Worker {
  return new WebhookWorker(options);
}

class WebhookWorker implements Worker {
  readonly name = 'webhooks';
  readonly #concurrency: number;
  readonly #idlePollMs: number;
  readonly #leaseMs: number;
  readonly #delays: readonly number[];
  readonly #resolver: Resolver;
  readonly #timeoutMs: number;
  readonly #inFlight = new Set<Promise<void>>();
  #stopping = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #metrics: ReturnType<typeof deliveryMetrics> | undefined;

  constructor(options: WebhookWorkerOptions) {
    this.#concurrency = options.concurrency ?? 16;
    this.#idlePollMs = options.idlePollMs ?? 200;
    this.#leaseMs = options.leaseMs ?? 4 * webhookDelivery.timeout_seconds * SECOND;
    this.#delays = options.retryDelaysMs ?? webhookDelivery.retry_delays_seconds.map((seconds) => seconds * SECOND);
    this.#resolver = options.resolver ?? systemResolver;
    this.#timeoutMs = options.timeoutMs ?? webhookDelivery.timeout_seconds * SECOND;
  }

  start(ctx: WorkerContext): void {
    if (this.#loop) throw new Error('worker webhooks was already started');
    if (!ctx.keyEncryption)
      throw new Error('the webhooks worker needs the key-encryption keys (it opens the signing secrets)');
    if (ctx.metrics) this.#metrics = deliveryMetrics(ctx.metrics);
    this.#loop = this.#run(ctx, ctx.keyEncryption());
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#loop;
  }

  /** Waits for the poll interval, an attempt to end, or stop(); like every worker's timer, it never holds a process open. */
  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms).unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
      for (const attempt of this.#inFlight) void attempt.then(done);
    });
  }

  async #run(ctx: WorkerContext, keys: KeyEncryption): Promise<void> {
    while (!this.#stopping) {
      try {
        const fanned = await fanOut(ctx.db, FAN_OUT_BATCH);
        const free = this.#concurrency - this.#inFlight.size;
        const claimed = free > 0 ? await claimDue(ctx.db, free, this.#leaseMs) : [];
        if (claimed.length > 0) this.#startAttempts(ctx, keys, claimed);
        const busy = fanned === FAN_OUT_BATCH || (claimed.length > 0 && claimed.length === free);
        if (!busy && !this.#stopping) await this.#pause(claimed.length > 0 || fanned > 0 ? 0 : this.#idlePollMs);
        else if (this.#inFlight.size >= this.#concurrency) await this.#pause(this.#idlePollMs);
      } catch (err) {
        ctx.log.warn(
          { err, worker: this.name },
          `webhooks: the queue could not be read; trying again in ${this.#idlePollMs} ms`,
        );
        await this.#pause(this.#idlePollMs);
      }
    }
    await Promise.all(this.#inFlight);
  }

  #startAttempts(ctx: WorkerContext, keys: KeyEncryption, claimed: ClaimedDelivery[]): void {
    const secrets = signingSecrets(
      ctx.db,
      keys,
      claimed.map((c) => ({ agency_id: c.agency_id, id: c.subscription_id })),
    );
    for (const delivery of claimed) {
      const attempt = this.#attempt(ctx, delivery, secrets)
        .catch((err: unknown) => {
          this.#metrics?.broken(delivery.type);
          ctx.log.warn(
            { err, delivery: delivery.id },
            'webhooks: an attempt could not be recorded; it is tried again when its lease ends',
          );
        })
        .finally(() => this.#inFlight.delete(attempt));
      this.#inFlight.add(attempt);
    }
  }

  async #attempt(
    ctx: WorkerContext,
    delivery: ClaimedDelivery,
    allSecrets: Promise<Map<string, SigningSecrets>>,
  ): Promise<void> {
    const secrets = (await allSecrets).get(delivery.subscription_id);
    if (!secrets) throw new Error(`subscription ${delivery.subscription_id} has no current signing secret`);
    const pseudonyms = new TenantPseudonyms(ctx.db, delivery.agency_id);
    const event = {
      id: delivery.event_id,
      agency_id: delivery.agency_id,
      type: delivery.type,
      data: delivery.data,
      created_at: delivery.event_created_at,
    };
    const body = await deliveryBody(event, delivery.phi_mode, (kind, ids) => pseudonyms.handlesFor(kind, ids));
    const startedAt = new Date();
    const answer = await this.#tracedSend(ctx.deliveryTracer, delivery, body, secrets);
    await recordAttempt(ctx.db, delivery, {
      attemptedAt: startedAt,
      latencyMs: Date.now() - startedAt.getTime(),
      statusCode: answer.status ?? null,
      error: answer.error ?? null,
    });
    const recorded = await recordOutcome(
      ctx.db,
      delivery,
      this.#outcome(delivery, answer),
      webhookDelivery.disable_after_failing_days * DAY,
    );
    this.#metrics?.recorded(delivery.type, recorded);
  }

  /**
   * #send as a span of the trace of the call that emitted the event, whose traceparent the receiver gets; untraced
   * (and without traceparent) with tracing off or when that call was not traced.
   */
  async #tracedSend(
    tracer: DeliveryTracer | undefined,
    delivery: ClaimedDelivery,
    body: string,
    secrets: SigningSecrets,
  ): Promise<ReceiverAnswer> {
    if (!tracer || delivery.traceparent === null) return this.#send(delivery, body, secrets, {});
    const emittedBy = {
      traceparent: delivery.traceparent,
      ...(delivery.tracestate !== null ? { tracestate: delivery.tracestate } : {}),
    };
    const span = tracer.attempt(emittedBy, {
      deliveryId: delivery.id,
      eventType: delivery.type,
      attempt: delivery.attempts,
    });
    let answer: ReceiverAnswer | undefined;
    try {
      answer = await this.#send(delivery, body, secrets, span.headers);
      return answer;
    } finally {
      span.end(answer?.status, answer ? answer.errorType : 'Error');
    }
  }

  /** Checks the receiver's address again (DNS rebinding), then posts to that very address. */
  async #send(
    delivery: ClaimedDelivery,
    body: string,
    secrets: SigningSecrets,
    traceHeaders: Record<string, string>,
  ): Promise<ReceiverAnswer> {
    try {
      const url = receiverUrl(delivery.url, delivery.allow_http_loopback);
      const address = await receiverAddress(url, delivery.allow_http_loopback, this.#resolver);
      const headers = {
        ...deliveryHeaders(body, delivery.id, Math.floor(Date.now() / SECOND), secrets),
        ...traceHeaders,
      };
      return await postToReceiver(url, address, headers, body, {
        timeoutMs: this.#timeoutMs,
        readLimitBytes: webhookDelivery.response_read_limit_bytes,
      });
    } catch (err) {
      if (err instanceof ReceiverRefused)
        return { error: `receiver refused: ${err.message}`, errorType: 'receiver_refused' };
      throw err;
    }
  }

  #outcome(delivery: ClaimedDelivery, answer: ReceiverAnswer): AttemptOutcome {
    if (answer.error === undefined) return { delivered: true, status: answer.status! };
    const gone = answer.status === 410;
    return {
      delivered: false,
      status: answer.status,
      error: answer.error,
      gone,
      retryInMs: retryDelayMs(delivery.attempts, this.#delays, answer.retryAfterMs),
    };
  }
}
