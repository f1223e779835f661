import { errorOf, type ExtensionApiError } from './errors.js';

export interface RetryOptions {
  /** Attempts in all, the first included (default 3). */
  maxAttempts?: number;
  /** A Retry-After longer than this is not waited for: the refusal is returned (default 30). */
  maxDelaySeconds?: number;
  /** First backoff when no Retry-After is given, doubled per attempt with full jitter (default 0.25). */
  baseDelaySeconds?: number;
  /** How to wait (tests pass their own clock). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export type Fetch = (request: Request) => Promise<Response>;

/** Sets each attempt's credentials; `renews` says whether a refusal is cured by new ones (an expired token). */
export interface Authorizer {
  /** The attempt to send: the request with its credentials set, or a copy with them in its body. */
  authorize(request: Request): Promise<Request>;
  renews(error: ExtensionApiError): boolean;
}

const abortableSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/**
 * A fetch that sends a request again after a network failure or a refusal whose `retryable` is true (for ApiError,
 * the code's entry of x-svc-error-codes), waiting Retry-After when given, else an exponential backoff with jitter.
 * Each attempt is a copy of the same request, headers included: a command's idempotency key is the same on every
 * attempt, so the server replays a first attempt whose answer was lost instead of running it twice.
 * `authorizer` sets each attempt's access token; a refusal it renews credentials for is sent again at once, once.
 */
export function retryingFetch(fetch: Fetch, options: RetryOptions = {}, authorizer?: Authorizer): Fetch {
  const { maxAttempts = 3, maxDelaySeconds = 30, baseDelaySeconds = 0.25, sleep = abortableSleep } = options;
  const backoff = (attempt: number) => Math.random() * baseDelaySeconds * 2 ** (attempt - 1);
  return async (request) => {
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      const copy = request.clone();
      const sent = authorizer ? await authorizer.authorize(copy) : copy;
      let response: Response;
      try {
        response = await fetch(sent);
      } catch (failure) {
        if (attempt >= maxAttempts || request.signal.aborted) throw failure;
        await sleep(backoff(attempt) * 1000, request.signal);
        continue;
      }
      if (response.ok || attempt >= maxAttempts) return response;
      const error = await errorOf(response);
      if (!renewed && authorizer?.renews(error)) {
        renewed = true;
        await response.body?.cancel();
        continue;
      }
      const delay = error.retryAfterSeconds ?? backoff(attempt);
      if (!error.retryable || delay > maxDelaySeconds) return response;
      await response.body?.cancel();
      await sleep(delay * 1000, request.signal);
    }
  };
}
