import type { Handler } from '../handler.js';
import { runIntakePipeline } from '../../domain/intake/pipeline.js';
import { misspeltFieldWarnings } from '../../domain/intake/request-shape.js';
import { referralIntakeStore } from './referral-intake-store.js';
import { emitReferralEvents } from './referral-events.js';

/** `createReferral`: the intake pipeline records the lead (accepted or declined), and its events, in the command's transaction. */
export const createReferral: Handler<'createReferral'> = async (ctx) => {
  const { body, store } = ctx;
  // Stamped before the pipeline runs, so that a refused attempt's audit record carries the sender's reference too.
  store.audit.sourceSystem = body.source_system ?? null;
  store.audit.externalReferenceId = body.external_reference_id ?? null;
  const { created, deprecations } = await runIntakePipeline(body, referralIntakeStore(store), new Date());
  ctx.deprecations.push(...deprecations);
  await emitReferralEvents(store, created);
  const warnings = misspeltFieldWarnings(body);
  return { data: created, ...(warnings.length > 0 ? { warnings } : {}) };
};
