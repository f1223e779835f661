import type { OperationDefinition } from '../../generated/contract.js';
import type { ExtensionPolicy, Principal } from '../../shared/principal.js';
import type { Authentication } from '../../identity/authenticator.js';
import type { PipelineStep } from '../../observability/call-trace.js';
import { authorize } from '../access.js';
import type { UsageLimiter } from './usage-limits.js';
import type { OperationCall, ResponseHead } from './operation-call.js';

/**
 * What an operation's resource family adds to its admission, after the contract's access rules: a governed query run
 * checks the query's own access and costs the query's units. Throws a refusal, or returns the call's cost units.
 */
export interface CallAdmission {
  admit(params: unknown, principal: Principal, policy: ExtensionPolicy): number;
}

/** Who the caller says they are: an Authorization header, or a principal another transport established. */
export interface Credentials {
  authorization?: string;
  principal?: Principal;
}

/** One call's way through admission: what the steps read and what they learn for the next. */
export interface Admission extends Credentials {
  readonly call: OperationCall;
  readonly response: ResponseHead;
  nowMs: number;
  policy: ExtensionPolicy | undefined;
}

/**
 * A step of admission. It answers nothing when it is done in the same tick (a warm call: remembered token, cached
 * policy, leased units), or a promise when it waits on I/O; a refusal throws or rejects.
 */
export interface AdmissionStep {
  readonly name: PipelineStep;
  run(admission: Admission): void | Promise<void>;
}

export interface Admitters {
  authenticator: {
    authenticate(authorization: string | undefined, acceptsQueryToken?: boolean): Promise<Authentication>;
    authenticateNow(authorization: string | undefined, nowMs: number): Authentication | undefined;
    authenticatePrincipal(principal: Principal): Promise<Authentication>;
  };
  usageLimiter: UsageLimiter;
}

function accept(admission: Admission, { principal, policy }: Authentication) {
  admission.call.principal = principal;
  admission.call.policy = policy;
  admission.call.trace?.identify(principal);
  admission.policy = policy;
}

function authenticateStep(operation: OperationDefinition, { authenticator }: Admitters): AdmissionStep {
  return {
    name: 'authenticate',
    run(admission) {
      if (admission.principal)
        return authenticator.authenticatePrincipal(admission.principal).then((later) => accept(admission, later));
      const now = authenticator.authenticateNow(admission.authorization, admission.nowMs);
      if (now) return accept(admission, now);
      return authenticator
        .authenticate(admission.authorization, operation.queryTokens)
        .then((later) => accept(admission, later));
    },
  };
}

function authorizeStep(operation: OperationDefinition, family: CallAdmission | undefined): AdmissionStep {
  return {
    name: 'authorize',
    run({ call, policy }) {
      authorize(operation, call.principal!, policy!);
      if (family) call.costUnits = family.admit(call.params, call.principal!, policy!);
    },
  };
}

function limitsStep(
  operation: OperationDefinition,
  { usageLimiter }: Admitters,
  family: CallAdmission | undefined,
): AdmissionStep {
  // What the limits charge: the operation, or the call's own cost when its family sets one.
  const metered = (call: OperationCall) =>
    family
      ? { operationId: operation.operationId, costUnits: call.costUnits, costBudgeted: operation.costBudgeted }
      : operation;
  return {
    name: 'limits',
    run({ call, response, policy, nowMs }) {
      const headers = usageLimiter.admitNow(policy!, metered(call), nowMs);
      if (headers) return void response.headers(headers);
      return usageLimiter.admit(policy!, metered(call)).then((later) => void response.headers(later));
    },
  };
}

/** An operation's admission, in order; an operation without authentication admits every call. */
export function admissionSteps(
  operation: OperationDefinition,
  admitters: Admitters,
  family?: CallAdmission,
): AdmissionStep[] {
  if (!operation.authenticated) return [];
  return [
    authenticateStep(operation, admitters),
    authorizeStep(operation, family),
    limitsStep(operation, admitters, family),
  ];
}

/** The one place a step is traced: its span ends as it returns, or as its promise settles. */
function runStep(step: AdmissionStep, admission: Admission): void | Promise<void> {
  const trace = admission.call.trace;
  if (!trace) return step.run(admission);
  const span = trace.step(step.name);
  let pending: void | Promise<void>;
  try {
    pending = step.run(admission);
  } catch (err) {
    span.end(err);
    throw err;
  }
  if (!pending) {
    span.end();
    return;
  }
  return pending.then(
    () => span.end(),
    (err: unknown) => {
      span.end(err);
      throw err;
    },
  );
}

/**
 * Runs the steps from `first` on, in the same tick for as long as each step is done at once (the fast path: no
 * promise); from the first step that waits on I/O, the rest follow as it settles.
 */
export function runAdmission(steps: readonly AdmissionStep[], admission: Admission, first = 0): void | Promise<void> {
  for (let i = first; i < steps.length; i++) {
    const pending = runStep(steps[i], admission);
    if (pending) {
      return pending.then(() => {
        admission.nowMs = Date.now();
        return runAdmission(steps, admission, i + 1);
      });
    }
  }
}
