import t from 'tap';
import { runAdmission, type Admission, type AdmissionStep } from '../../src/gateway/core/admission.js';
import type { OperationCall, ResponseHead } from '../../src/gateway/core/operation-call.js';
import type { CallTrace, PipelineStep } from '../../src/observability/call-trace.js';

/** A trace that records each step's span as it starts and ends, with its failure. */
function recordingTrace() {
  const spans: string[] = [];
  const trace = {
    step(name: PipelineStep) {
      spans.push(`start ${name}`);
      return {
        end: (failure?: unknown) => spans.push(failure ? `end ${name}: ${(failure as Error).message}` : `end ${name}`),
      };
    },
  } as unknown as CallTrace;
  return { spans, trace };
}

function admissionOf(trace?: CallTrace): Admission {
  return { call: { trace } as OperationCall, response: {} as ResponseHead, nowMs: 0, policy: undefined };
}

const sync = (name: PipelineStep, ran: string[]): AdmissionStep => ({ name, run: () => void ran.push(name) });
const later = (name: PipelineStep, ran: string[]): AdmissionStep => ({
  name,
  run: () => Promise.resolve().then(() => void ran.push(name)),
});

t.test('steps that need no I/O are all run in the same tick, in order, without a promise', async (t) => {
  const ran: string[] = [];
  const outcome = runAdmission([sync('authenticate', ran), sync('authorize', ran), sync('limits', ran)], admissionOf());
  t.equal(outcome, undefined, 'the fast path answers nothing');
  t.same(ran, ['authenticate', 'authorize', 'limits']);
});

t.test('from the first step that waits on I/O, the rest follow as it settles, in order', async (t) => {
  const ran: string[] = [];
  const outcome = runAdmission(
    [sync('authenticate', ran), later('authorize', ran), sync('limits', ran)],
    admissionOf(),
  );
  t.ok(outcome instanceof Promise);
  t.same(ran, ['authenticate'], 'the steps after it wait');
  await outcome;
  t.same(ran, ['authenticate', 'authorize', 'limits']);
});

t.test('a refusal stops admission: the later steps do not run', async (t) => {
  const ran: string[] = [];
  const refuse: AdmissionStep = {
    name: 'authorize',
    run: () => {
      throw new Error('refused');
    },
  };
  t.throws(() => runAdmission([sync('authenticate', ran), refuse, sync('limits', ran)], admissionOf()), /refused/);
  t.same(ran, ['authenticate']);
  const refuseLater: AdmissionStep = { name: 'authorize', run: () => Promise.reject(new Error('refused later')) };
  await t.rejects(runAdmission([refuseLater, sync('limits', ran)], admissionOf()) as Promise<void>, /refused later/);
  t.same(ran, ['authenticate'], 'limits never ran');
});

t.test('each step has one span, ended as it returns or settles, with its failure', async (t) => {
  const { spans, trace } = recordingTrace();
  const ran: string[] = [];
  const refuse: AdmissionStep = { name: 'limits', run: () => Promise.reject(new Error('over the limit')) };
  await t.rejects(
    runAdmission([sync('authenticate', ran), later('authorize', ran), refuse], admissionOf(trace)) as Promise<void>,
  );
  t.same(spans, [
    'start authenticate',
    'end authenticate',
    'start authorize',
    'end authorize',
    'start limits',
    'end limits: over the limit',
  ]);
});
