import type { OperationDefinition, OperationId } from '../../generated/contract.js';
import type { Principal } from '../../shared/principal.js';
import { RequestError } from '../../shared/request-error.js';
import type { PathParams, QueryParams, RequestBody, RequestHeaders } from './handler.js';
import type { CallLogger, CallState, HeaderValues, OperationCall, ResponseHead } from './operation-call.js';
import type { OperationPipeline } from './pipeline.js';
import type { Gateway } from './gateway.js';
import { errorResponse, type Refusal } from './error-response.js';
import { requestIdOf } from './request-id.js';

/** One call of an operation without HTTP (the MCP surface, a CLI, a worker). */
export interface DirectCallInput<K extends OperationId = OperationId> {
  operationId: K;
  /** The caller, established by the transport from a token of its own; its integration's current policy still applies. */
  principal?: Principal;
  /** Without a principal: an Authorization header value, authenticated as over HTTP (the token endpoint reads Basic credentials from it). */
  authorization?: string;
  params?: PathParams<K>;
  query?: QueryParams<K>;
  /** The operation's header parameters; svc-contract-version picks the contract version. */
  headers?: Partial<RequestHeaders<K>>;
  body?: RequestBody<K>;
  /** A command's idempotency key (its idempotency-key header over HTTP). */
  idempotencyKey?: string;
  /** Kept when well-formed, like x-request-id over HTTP; otherwise one is minted. */
  requestId?: string;
  /** The caller's network address, when the transport knows one; the token endpoint counts failed attempts by it. */
  remoteAddress?: string;
}

/** What an HTTP response would carry. */
interface DirectCallResult {
  status: number;
  /** The headers the gateway and the handler set (x-request-id, contract version, rate limits, etag...), lower-case. */
  headers: Record<string, string>;
  /** The JSON value of the body (a text/plain operation's text); refusals in the contract's error shapes. */
  body: unknown;
  /** Set when the operation refused: its code, message and retryability, whichever error shape the body has. */
  refusal?: Refusal;
}

/** The address of calls made in this process without one: the token endpoint counts their failures together. */
const IN_PROCESS = 'in-process';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The head of a direct call's answer: what a FastifyReply would hold, without the wire's own headers. */
class DirectResponse implements ResponseHead {
  statusCode = 200;
  readonly values = new Map<string, string>();

  code(status: number) {
    this.statusCode = status;
    return this;
  }

  header(name: string, value: string) {
    this.values.set(name.toLowerCase(), value);
    return this;
  }

  headers(values: Record<string, string>) {
    for (const name of Object.keys(values)) this.header(name, values[name]);
    return this;
  }

  hasHeader(name: string) {
    return this.values.has(name.toLowerCase());
  }

  getHeader(name: string) {
    return this.values.get(name.toLowerCase());
  }

  type(contentType: string) {
    return this.header('content-type', contentType);
  }
}

/** The path an HTTP client would have called: with the method, what an idempotency key's fingerprint covers. */
function pathOf(operation: OperationDefinition, params: Record<string, unknown>): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(params[name] ?? '')));
}

function headersOf(input: DirectCallInput): HeaderValues {
  const headers: HeaderValues = { ...(input.headers as HeaderValues) };
  if (input.authorization !== undefined) headers.authorization = input.authorization;
  if (input.idempotencyKey !== undefined) headers['idempotency-key'] = input.idempotencyKey;
  return headers;
}

function callOf(gateway: Gateway, operation: OperationDefinition, input: DirectCallInput, id: string): OperationCall {
  const params: Record<string, unknown> = { ...input.params };
  // Without the gateway's state (CallState): the pipeline's first step, begin(), sets all of it.
  const call = {
    id,
    method: operation.method,
    url: pathOf(operation, params),
    ip: input.remoteAddress ?? IN_PROCESS,
    log: gateway.log.child({ reqId: id }),
    receivedAt: performance.now(),
    params,
    // A copy: validation coerces parameters and fills defaults in place.
    query: { ...input.query },
    headers: headersOf(input),
    body: input.body,
  };
  return call as typeof call & CallState;
}

async function answer(
  gateway: Gateway,
  pipeline: OperationPipeline,
  call: OperationCall,
  response: ResponseHead,
  input: DirectCallInput,
): Promise<unknown> {
  gateway.refuseWhenClosing();
  const body = await pipeline.handle(call, response, input.authorization, input.principal);
  // A command answers the JSON text it stored for its replays; a constant read the JSON bytes it encoded once.
  if (body instanceof Uint8Array) return JSON.parse(Buffer.from(body).toString('utf8'));
  return pipeline.operation.command ? JSON.parse(body as string) : body;
}

/** Sets the refusal's status and headers, as the HTTP error handler does; the call notes its code. */
function refused(
  err: unknown,
  response: DirectResponse,
  id: string,
  log: CallLogger,
  call?: OperationCall,
): { body: unknown; refusal: Refusal } {
  const { status, code, headers, body, refusal } = errorResponse(err, id, log);
  if (call) call.refusal = code;
  if (headers) response.headers(headers);
  response.code(status);
  return { body, refusal };
}

function resultOf(response: DirectResponse, body: unknown, refusal?: Refusal): DirectCallResult {
  if (!response.hasHeader('content-type')) response.type(JSON_CONTENT_TYPE);
  return {
    status: response.statusCode,
    headers: Object.fromEntries(response.values),
    body,
    ...(refusal ? { refusal } : {}),
  };
}

async function called(
  gateway: Gateway,
  pipeline: OperationPipeline,
  input: DirectCallInput,
  id: string,
): Promise<DirectCallResult> {
  const call = callOf(gateway, pipeline.operation, input, id);
  const response = new DirectResponse().header('x-request-id', id);
  let answered: { body: unknown; refusal?: Refusal };
  try {
    answered = { body: await answer(gateway, pipeline, call, response, input) };
  } catch (err) {
    answered = refused(err, response, id, call.log, call);
  }
  pipeline.record(call, response);
  return resultOf(response, answered.body, answered.refusal);
}

/**
 * Runs an operation as an HTTP call would run: version, identity (the principal, or the authorization), access,
 * limits, validation, idempotency, the handler under its timeout, no_phi reduction, version serialization, metering
 * and audit. Never rejects for a refusal: it answers the contract's error body, with its status. What HTTP alone
 * checks (content type, repeated Authorization headers, the token endpoint's grant-type refusal) is not run.
 */
export function callOperation<K extends OperationId>(
  gateway: Gateway,
  input: DirectCallInput<K>,
): Promise<DirectCallResult> {
  const id = requestIdOf(input.requestId);
  const pipeline = gateway.pipeline(input.operationId);
  if (pipeline) return gateway.track(called(gateway, pipeline, input as unknown as DirectCallInput, id));
  const response = new DirectResponse().header('x-request-id', id);
  const unknown = new RequestError(
    404,
    'not_found',
    'PLATFORM_RESOURCE_NOT_FOUND',
    `No operation ${input.operationId} in the contract; its operations are listed at /platform/api/openapi.json.`,
  );
  const { body, refusal } = refused(unknown, response, id, gateway.log);
  return Promise.resolve(resultOf(response, body, refusal));
}
