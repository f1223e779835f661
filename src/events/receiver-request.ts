import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from './receiver-address.js';

export interface ReceiverAnswer {
  /** The receiver's status; undefined when none came (refused, timed out, reset). */
  status?: number;
  /** Retry-After in milliseconds from now, when the receiver sent one. */
  retryAfterMs?: number;
  /** What went wrong, for the delivery's last_error; undefined on a 2xx. */
  error?: string;
  /** The same in a word, for a span's error.type: the status, the socket's error code, `timeout`; never the host. */
  errorType?: string;
}

interface ReceiverLimits {
  /** For the whole attempt: connecting, sending, and reading the answer. */
  timeoutMs: number;
  /** How much of the answer is read; the rest is not waited for. */
  readLimitBytes: number;
}

/** Retry-After as seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Connects to the checked address whatever the name resolves to now; the URL's host stays the Host and TLS name. */
const pinnedTo =
  ({ address, family }: ResolvedAddress): LookupFunction =>
  (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as unknown as (err: null, addresses: ResolvedAddress[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };

function answerOf(response: IncomingMessage): ReceiverAnswer {
  const status = response.statusCode!;
  if (status >= 200 && status < 300) return { status };
  const retryAfter = retryAfterMs(response.headers['retry-after']);
  const error =
    status >= 300 && status < 400
      ? `redirect not followed (${status} to ${response.headers.location ?? 'no location'})`
      : `receiver answered ${status}`;
  return {
    status,
    error,
    errorType: String(status),
    ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
  };
}

/**
 * One POST of a delivery to its receiver, connected to `address`: no redirect is followed, the whole attempt is
 * bounded by the time-out, and at most `readLimitBytes` of the answer are read. Never throws: a failure is an answer.
 */
export function postToReceiver(
  url: URL,
  address: ResolvedAddress,
  headers: Record<string, string>,
  body: string,
  limits: ReceiverLimits,
): Promise<ReceiverAnswer> {
  return new Promise((resolve) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const payload = Buffer.from(body, 'utf8');
    let settled = false;
    const finish = (answer: ReceiverAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(answer);
    };
    const request = send(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(payload.length), 'user-agent': 'svc-extension-api-webhooks' },
      lookup: pinnedTo(address),
      agent: false,
    });
    const timer = setTimeout(
      () => finish({ error: `no answer within ${limits.timeoutMs / 1000} s`, errorType: 'timeout' }),
      limits.timeoutMs,
    );
    request.on('error', (err: NodeJS.ErrnoException) =>
      finish({ error: `request failed: ${err.code ?? err.message}`, errorType: err.code ?? 'request_failed' }),
    );
    request.on('response', (response) => {
      const answer = answerOf(response);
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= limits.readLimitBytes) finish(answer);
      });
      response.on('end', () => finish(answer));
      response.on('error', () => finish(answer));
    });
    request.end(payload);
  });
}
