import type { HandleParameter } from '../../generated/contract.js';
import { isSentAsHandle } from '../../domain/access-policy.js';
import type { TenantStore } from '../../db/tenant-store.js';
import { PlatformError } from '../../shared/platform-error.js';
import type { CallInput } from './operation-call.js';

/**
 * Ids that a no_phi session sends as surrogate handles, where the contract marks them (x-svc-phi handle on a
 * parameter or request property, listed by codegen as handleParameters): resolved to the real ids before the handler
 * runs, so that handlers read real ids in either PHI mode. The call keeps what was sent (the idempotency fingerprint
 * reads it); the handler's context gets the resolved copy.
 */

type Addressed = Pick<CallInput, 'params' | 'query' | 'body'>;

/** What a handler reads once the handles are resolved, and the handle sent for each real id. */
interface Resolved extends Addressed {
  handles: ReadonlyMap<string, string>;
}

const SLOTS = { path: 'params', query: 'query', body: 'body' } as const;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** The value the call sends for a handle parameter, if any (a body property only when its `when` holds). */
function sentValue(parameter: HandleParameter, input: Addressed): string | undefined {
  const path = parameter.field.split('.');
  const holder = path
    .slice(0, -1)
    .reduce<unknown>((node, name) => (isObject(node) ? node[name] : undefined), input[SLOTS[parameter.in]]);
  if (!isObject(holder)) return undefined;
  const value = holder[path[path.length - 1]];
  const when = parameter.when;
  if (typeof value !== 'string' || (when && !when.values.includes(holder[when.property] as string))) return undefined;
  return value;
}

/** A copy of `holder` with the value at `path` replaced, sharing everything else. */
function withValue(holder: unknown, path: readonly string[], value: string): Record<string, unknown> {
  const [name, ...rest] = path;
  const object = holder as Record<string, unknown>;
  return { ...object, [name]: rest.length === 0 ? value : withValue(object[name], rest, value) };
}

async function resolveAll(
  sent: { parameter: HandleParameter; handle: string }[],
  input: Addressed,
  store: TenantStore,
): Promise<Resolved> {
  const resolved: Addressed = { params: input.params, query: input.query, body: input.body };
  const handles = new Map<string, string>();
  for (const { parameter, handle } of sent) {
    const real = await store.pseudonyms.resolve(parameter.kind, handle);
    handles.set(real, handle);
    const slot = SLOTS[parameter.in];
    resolved[slot] = withValue(resolved[slot], parameter.field.split('.'), real);
  }
  return { ...resolved, handles };
}

/**
 * The handles the call sends, resolved in the store's agency; undefined, without a promise, when it sends none (every
 * phi session). A value refused by the addressing rule throws; one that does not resolve rejects with
 * PLATFORM_PSEUDONYM_UNRESOLVED.
 */
export function resolveHandles(
  parameters: readonly HandleParameter[],
  input: Addressed,
  store: TenantStore,
): Promise<Resolved> | undefined {
  if (parameters.length === 0) return undefined;
  const sent = parameters.flatMap((parameter) => {
    const handle = sentValue(parameter, input);
    const resolves = handle !== undefined && isSentAsHandle(parameter.kind, handle, store.phiMode, parameter.field);
    return resolves ? [{ parameter, handle }] : [];
  });
  return sent.length === 0 ? undefined : resolveAll(sent, input, store);
}

/** A refusal names the handle the caller sent, never the real id behind it (a not-found answer included). */
function namingSent(err: unknown, handles: ReadonlyMap<string, string>): unknown {
  if (!(err instanceof PlatformError)) return err;
  const named = (text: string) => [...handles].reduce((t, [real, handle]) => t.replaceAll(real, handle), text);
  const details =
    err.details &&
    Object.fromEntries(Object.entries(err.details).map(([k, v]) => [k, typeof v === 'string' ? named(v) : v]));
  return new PlatformError(err.code, named(err.message), details, err.headers);
}

/** Runs the handler on the resolved input, which replaces the context's. */
export async function runResolved(resolving: Promise<Resolved>, context: Addressed, handler: () => unknown) {
  const { handles, ...input } = await resolving;
  Object.assign(context, input);
  try {
    return await handler();
  } catch (err) {
    throw namingSent(err, handles);
  }
}
