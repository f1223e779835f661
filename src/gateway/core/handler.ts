import type { operations as OperationTypes } from '../../generated/openapi.js';
import type { OperationDefinition, OperationId, operations as RouteTable } from '../../generated/contract.js';
import type { ContractVersion, Deprecation } from '../../shared/versioning.js';
import type { ExtensionPolicy, Principal } from '../../shared/principal.js';
import type { CommandStore, TenantStore } from '../../db/tenant-store.js';
import type { CursorSealer } from '../../db/cursor-sealer.js';
import type { CallLogger, OperationCall, ResponseHead } from './operation-call.js';
import type { ConstantAnswer } from './constant-answer.js';

type Op<K extends OperationId> = OperationTypes[K];
// Parameter groups with only optional members are optional in the generated types, yet always present at run time.
type Part<T, P extends string> = P extends keyof T ? NonNullable<T[P]> : never;
type Content<T> = T extends { content: infer C } ? C[keyof C] : never;

export type PathParams<K extends OperationId> = Part<Op<K>['parameters'], 'path'>;
export type QueryParams<K extends OperationId> = Part<Op<K>['parameters'], 'query'>;
export type RequestHeaders<K extends OperationId> = Part<Op<K>['parameters'], 'header'>;
export type RequestBody<K extends OperationId> =
  Op<K> extends { requestBody: infer B } ? Content<NonNullable<B>> : undefined;
type SuccessBody<K extends OperationId> = Content<Op<K>['responses'][200]>;
type PagedByCursor<K extends OperationId> = (typeof RouteTable)[K]['pagedByCursor'];
type Store<K extends OperationId> = K extends 'issueToken'
  ? undefined
  : (typeof RouteTable)[K]['command'] extends true
    ? CommandStore
    : TenantStore;

/** What a handler sees: a validated, typed request, already through the gateway. */
export interface RequestContext<K extends OperationId> {
  operation: OperationDefinition;
  params: PathParams<K>;
  query: QueryParams<K>;
  headers: RequestHeaders<K>;
  body: RequestBody<K>;
  /** The authenticated caller; every partition route has one, the token endpoint none. */
  principal: K extends 'issueToken' ? undefined : Principal;
  /** What the agency granted the caller's integration, as the call was admitted with it (what access-policy.ts reads). */
  policy: K extends 'issueToken' ? undefined : ExtensionPolicy;
  contractVersion: ContractVersion;
  deprecations: Deprecation[];
  requestId: string;
  /**
   * The caller's agency, for this call's PHI mode: repositories read (and a command writes, in its transaction) through
   * it, and it records what they touched on the audit record. The token endpoint, which has no caller yet, has none.
   */
  store: Store<K>;
  /**
   * Seals and opens cursors bound to the caller (agency, extension, PHI mode) and this route (pass it to listPage,
   * which adds the list's filters); only operations that take a cursor have one.
   */
  cursors: PagedByCursor<K> extends true ? CursorSealer : undefined;
  log: CallLogger;
  /** Headers the handler sets on its answer (a task's etag). */
  response: ResponseHead;
  /** Where the call came from: `ip`, the caller's network address (the token endpoint counts failed attempts by it). */
  source: Pick<OperationCall, 'ip'>;
  /** Aborted when the handler timeout fires; a command's transaction must not commit after it. */
  signal: AbortSignal;
}

/**
 * A handler that needs no I/O may answer directly; the gateway then answers in the same tick. An answer that is the
 * same for every caller may come as a ConstantAnswer, whose JSON the gateway encodes once.
 */
export type Handler<K extends OperationId> = (
  ctx: RequestContext<K>,
) => SuccessBody<K> | ConstantAnswer<SuccessBody<K>> | Promise<SuccessBody<K>>;

/** Every operation of the contract must have a handler, or the build fails. */
export type Handlers = { [K in OperationId]: Handler<K> };
