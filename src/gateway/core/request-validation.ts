import type { OperationDefinition, Validator } from '../../generated/contract.js';
import { RequestError, type ValidationIssue } from '../../shared/request-error.js';
import type { CallInput } from './operation-call.js';
import { holdsUnstorableText, unstorableTextPointers } from '../../domain/storable-text.js';

const SLOTS = ['params', 'query', 'headers', 'body'] as const;
type Slot = (typeof SLOTS)[number];
const LOCATION: Record<Slot, ValidationIssue['location']> = {
  params: 'path',
  query: 'query',
  headers: 'header',
  body: 'body',
};

function describe(slot: Slot, error: NonNullable<Validator['errors']>[number]): ValidationIssue {
  const location = LOCATION[slot];
  const named = slot !== 'body';
  const pointer = error.instancePath;
  if (error.keyword === 'required') {
    const name = String(error.params.missingProperty);
    return {
      location,
      path: named ? name : `${pointer}/${name}`,
      message: `${named ? `${location} parameter` : 'property'} "${name}" is required`,
      keyword: 'required',
    };
  }
  if (error.keyword === 'additionalProperties') {
    const name = String(error.params.additionalProperty);
    return {
      location,
      path: named ? name : `${pointer}/${name}`,
      message: `unknown ${named ? `${location} parameter` : 'property'} "${name}"`,
      keyword: 'additionalProperties',
    };
  }
  const path = named ? pointer.replace(/^\//, '') : pointer;
  return { location, path, message: error.message ?? 'is invalid', keyword: error.keyword };
}

/** The request problem's code: a bad idempotency key has its own (PLATFORM_INVALID_IDEMPOTENCY_KEY). */
function codeFor(issues: ValidationIssue[]) {
  return issues.some((i) => i.location === 'header' && i.path === 'idempotency-key')
    ? 'PLATFORM_INVALID_IDEMPOTENCY_KEY'
    : 'PLATFORM_INVALID_REQUEST';
}

const UNSTORABLE_MESSAGE = 'holds a NUL character or an unpaired UTF-16 surrogate, which no field can store';

/**
 * Text no field can store, wherever a request carries data: body, query and path (Node's HTTP parser already refuses
 * NUL in headers). Checked once here for every operation, so no handler meets it and no insert fails on it.
 */
function unstorableTextIssues(slot: Slot, value: unknown): ValidationIssue[] {
  const issue = (path: string): ValidationIssue => ({
    location: LOCATION[slot],
    path,
    message: UNSTORABLE_MESSAGE,
    keyword: 'storableText',
  });
  if (slot === 'body') return unstorableTextPointers(value).map(issue);
  // A parameter is named, as in every other issue of it, however it nests (a repeated query parameter is an array).
  const named = Object.entries(value as Record<string, unknown>);
  return named.filter(([name, item]) => holdsUnstorableText([name, item])).map(([name]) => issue(name));
}

/** A refusal naming the fields of `slot` that hold text no field can store; undefined when there are none. */
export function unstorableTextRefusal(slot: Slot, value: unknown): RequestError | undefined {
  return holdsUnstorableText(value) ? invalidRequest(unstorableTextIssues(slot, value)) : undefined;
}

/** Runs the operation's precompiled validators and the storable-text check, and reports every problem at once. */
export function validateRequest(operation: OperationDefinition, input: CallInput) {
  let issues: ValidationIssue[] | undefined;
  const validate: Partial<Record<Slot, Validator>> = operation.validate;
  for (const slot of SLOTS) {
    const validator = validate[slot];
    if (validator && !validator(input[slot]))
      (issues ??= []).push(...(validator.errors ?? []).map((e) => describe(slot, e)));
    if (slot !== 'headers' && holdsUnstorableText(input[slot]))
      (issues ??= []).push(...unstorableTextIssues(slot, input[slot]));
  }
  if (issues) throw invalidRequest(issues);
}

function invalidRequest(issues: ValidationIssue[]): RequestError {
  const code = codeFor(issues);
  return new RequestError(
    400,
    'invalid_request',
    code,
    code === 'PLATFORM_INVALID_IDEMPOTENCY_KEY'
      ? 'Commands need an idempotency-key header of 8 to 128 characters from letters, digits, ".", "_", ":" and "-".'
      : `The request does not match the contract: ${issues.map((i) => `${i.location} ${i.path || '(root)'} ${i.message}`).join('; ')}.`,
    { issues, nextStep: 'Correct the listed fields; the contract is at /platform/api/openapi.json.' },
  );
}

/** Commands with a body accept only the content types the contract lists for them. */
export function checkContentType(operation: OperationDefinition, input: CallInput) {
  if (operation.requestContentTypes.length === 0 || input.body === undefined) return;
  const sent = String(input.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (!(operation.requestContentTypes as readonly string[]).includes(sent)) {
    throw new RequestError(
      415,
      'unsupported_media_type',
      'PLATFORM_INVALID_REQUEST',
      `Content-Type "${sent}" is not accepted here; send ${operation.requestContentTypes.join(' or ')}.`,
    );
  }
}

const AUTHORIZATION = 'authorization';

/** Case-insensitive without allocating: every letter of "authorization" differs from its capital in bit 0x20 only. */
function isAuthorization(name: string): boolean {
  if (name.length !== AUTHORIZATION.length) return false;
  for (let i = 0; i < AUTHORIZATION.length; i++) {
    if ((name.charCodeAt(i) | 0x20) !== AUTHORIZATION.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Node keeps only the first of two Authorization headers; a proxy in front may keep the other. Refusing both keeps
 * them from disagreeing on who calls. Runs on every call: one pass over the raw header list, no allocation.
 */
export function refuseRepeatedAuthorization(rawHeaders: string[]) {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (!isAuthorization(rawHeaders[i])) continue;
    if (seen) {
      throw new RequestError(
        400,
        'invalid_request',
        'PLATFORM_INVALID_REQUEST',
        'The request carries more than one Authorization header; send exactly one.',
        {
          issues: [
            { location: 'header', path: AUTHORIZATION, message: 'must be sent at most once', keyword: 'duplicate' },
          ],
        },
      );
    }
    seen = true;
  }
}
