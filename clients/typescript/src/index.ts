import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { COMMANDS, CONTRACT_VERSION } from './generated/contract.js';
import { items, pages, type CursorPath, type PageOptions } from './pages.js';
import { retryingFetch, type Fetch, type RetryOptions } from './retries.js';
import { ClientProof, TOKEN_PATH, TokenSource, type Credentials } from './tokens.js';
import type { paths } from './generated/schema.js';

export {
  ExtensionApiError,
  knownCode,
  retryAfterSeconds,
  unwrap,
  type ApiErrorBody,
  type ErrorCategory,
  type ExternalPlatformError,
  type KnownErrorCode,
} from './errors.js';
export { COMMANDS, CONTRACT_VERSION, ERROR_CODES, MANIFEST_VERSION } from './generated/contract.js';
export type { components, operations, paths } from './generated/schema.js';
export type { CursorPath, Page, PageOptions } from './pages.js';
export type { Authorizer, Fetch, RetryOptions } from './retries.js';
export {
  CLIENT_ASSERTION_TYPE,
  clientAssertion,
  MAX_ASSERTION_LIFETIME_SECONDS,
  signingKey,
  type AssertionAlgorithm,
  type AssertionKey,
  type SigningKey,
} from './assertion.js';
export {
  ClientProof,
  TokenSource,
  type Credentials,
  type KeyCredentials,
  type PhiMode,
  type SecretCredentials,
  type TokenResponse,
} from './tokens.js';
// The receiver's side of webhooks: one file of the service that needs nothing but node:crypto.
export {
  payloadHash,
  verifyDelivery,
  WebhookVerificationError,
  type DeliveryHeaders,
  type VerificationFailure,
  type VerifyOptions,
  type WebhookEnvelope,
} from '../../../src/events/verify-delivery.js';

export interface ExtensionClientOptions {
  /** Where the API is served, for example https://api.example.com (no trailing path). */
  baseUrl: string;
  /** A secret, or a private key whose public half is registered for the client (private_key_jwt). */
  credentials: Credentials;
  retry?: RetryOptions;
  /** How long before a token's expiry a new one is fetched (default 60 s, at most half its lifetime). */
  renewBeforeSeconds?: number;
  /** The fetch used for every request (default: the global fetch). */
  fetch?: Fetch;
  /** The clock tokens are timed by, in milliseconds (default Date.now); assertions are signed by the wall clock. */
  now?: () => number;
}

export interface ExtensionClient extends Client<paths> {
  readonly tokens: TokenSource;
  /** Each page of a cursor list, following meta.next_cursor. */
  pages<P extends CursorPath>(path: P, options?: PageOptions<P>): ReturnType<typeof pages<P>>;
  /** Each item of a cursor list, page after page. */
  items<P extends CursorPath>(path: P, options?: PageOptions<P>): ReturnType<typeof items<P>>;
}

/** A new idempotency key for each command (x-svc-command) the caller sent without one; retries copy the request, key included. */
const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (COMMANDS.has(`${request.method} ${schemaPath}`) && !request.headers.has('idempotency-key')) {
      request.headers.set('idempotency-key', `idem_${globalThis.crypto.randomUUID()}`);
    }
  },
};

/**
 * The typed client of contract version 2 (openapi-fetch over the released contract's types): `GET`, `POST`...
 * answer `{ data, error, response }`; `unwrap` turns a refusal into a thrown ExtensionApiError.
 */
export function createExtensionClient(options: ExtensionClientOptions): ExtensionClient {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const common = { baseUrl: options.baseUrl, headers: { 'svc-contract-version': CONTRACT_VERSION } };
  const proof = new ClientProof(options.credentials, `${options.baseUrl.replace(/\/+$/, '')}${TOKEN_PATH}`);
  const tokens = new TokenSource(
    createClient<paths>({ ...common, fetch: retryingFetch(send, options.retry, proof) }),
    options.credentials,
    options.renewBeforeSeconds,
    options.now,
  );
  const client = createClient<paths>({ ...common, fetch: retryingFetch(send, options.retry, tokens) });
  client.use(idempotencyKeys);
  return Object.assign(client, {
    tokens,
    pages: <P extends CursorPath>(path: P, pageOptions?: PageOptions<P>) => pages(client, path, pageOptions),
    items: <P extends CursorPath>(path: P, pageOptions?: PageOptions<P>) => items(client, path, pageOptions),
  });
}
