import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { receiverAddress, receiverUrl, type ResolvedAddress, type Resolver } from './receiver-address.js';

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

/** What one request to a receiver came back with: its response (read up to the limit) or why none came. */
type Exchange =
  | { response: IncomingMessage; body: Buffer | undefined }
  | { failure: Required<Pick<ReceiverAnswer, 'error' | 'errorType'>> };

/**
 * One request to a receiver, connected to `address`: no redirect is followed, the whole attempt is bounded by the
 * time-out, and at most `readLimitBytes` of the answer are read. Never throws: a failure is an answer.
 */
function exchange(
  url: URL,
  address: ResolvedAddress,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  limits: ReceiverLimits,
  /** Whether the answer's bytes are kept: a delivery reads its receiver's answer only to end it, a document fetch keeps it. */
  keepBody: boolean,
): Promise<Exchange> {
  return new Promise((resolve) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const payload = Buffer.from(init.body ?? '', 'utf8');
    let settled = false;
    const finish = (outcome: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(outcome);
    };
    const request = send(url, {
      method: init.method,
      headers: { ...init.headers, ...(init.body === undefined ? {} : { 'content-length': String(payload.length) }) },
      lookup: pinnedTo(address),
      agent: false,
    });
    const timer = setTimeout(
      () => finish({ failure: { error: `no answer within ${limits.timeoutMs / 1000} s`, errorType: 'timeout' } }),
      limits.timeoutMs,
    );
    request.on('error', (err: NodeJS.ErrnoException) =>
      finish({
        failure: { error: `request failed: ${err.code ?? err.message}`, errorType: err.code ?? 'request_failed' },
      }),
    );
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let read = 0;
      const done = () => finish({ response, body: keepBody ? Buffer.concat(chunks) : undefined });
      response.on('data', (chunk: Buffer) => {
        if (keepBody) chunks.push(chunk);
        read += chunk.length;
        if (read >= limits.readLimitBytes) done();
      });
      response.on('end', done);
      response.on('error', done);
    });
    request.end(init.body === undefined ? undefined : payload);
  });
}

/** One POST of a delivery to its receiver (see exchange). Never throws: a failure is an answer. */
export async function postToReceiver(
  url: URL,
  address: ResolvedAddress,
  headers: Record<string, string>,
  body: string,
  limits: ReceiverLimits,
): Promise<ReceiverAnswer> {
  const outcome = await exchange(
    url,
    address,
    { method: 'POST', headers: { ...headers, 'user-agent': 'svc-extension-api-webhooks' }, body },
    limits,
    false,
  );
  return 'failure' in outcome ? outcome.failure : answerOf(outcome.response);
}

export interface ReceiverDocument {
  status: number;
  headers: IncomingMessage['headers'];
  /** At most the read limit: `complete` says whether the whole answer fit. */
  body: Buffer;
  complete: boolean;
}

/** One GET of a document (a client's JWKS) from an outside address checked like a receiver's; throws when no answer came. */
async function getFromReceiver(url: URL, address: ResolvedAddress, limits: ReceiverLimits): Promise<ReceiverDocument> {
  const outcome = await exchange(
    url,
    address,
    { method: 'GET', headers: { accept: 'application/json', 'user-agent': 'svc-extension-api' } },
    limits,
    true,
  );
  if ('failure' in outcome) throw new Error(outcome.failure.error);
  const response = outcome.response;
  const body = outcome.body!;
  return {
    status: response.statusCode!,
    headers: response.headers,
    body: body.subarray(0, limits.readLimitBytes),
    complete: body.length < limits.readLimitBytes,
  };
}

/** How long a JWKS fetch may take and how much of it is read: a key set is a few kilobytes. */
const DOCUMENT_LIMITS: ReceiverLimits = { timeoutMs: 5_000, readLimitBytes: 64 * 1024 };

/**
 * A document at a URL that must pass the webhook receivers' checks (https, no private or special-purpose address,
 * plain http to loopback only with the development allowance); throws ReceiverRefused with the reason.
 */
export async function fetchCheckedDocument(
  text: string,
  allowHttpLoopback: boolean,
  resolve?: Resolver,
): Promise<ReceiverDocument> {
  const url = receiverUrl(text, allowHttpLoopback);
  return getFromReceiver(url, await receiverAddress(url, allowHttpLoopback, resolve), DOCUMENT_LIMITS);
}
