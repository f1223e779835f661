import type { Handler } from '../handler.js';
import { runIntakePipeline } from '../../domain/intake/pipeline.js';
import { checkStorableText } from '../../domain/intake/storable-text.js';
import { referralIntakeStore } from './referral-intake-store.js';

/** Route 11: the intake pipeline records the lead (accepted or declined) in the command's transaction. */
export const createReferral: Handler<'createReferral'> = async (ctx) => {
  const { body, principal } = ctx;
  checkStorableText(body);
  // Stamped before the pipeline runs, so that a refused attempt's audit record carries the sender's reference too.
  ctx.audit.sourceSystem = body.source_system ?? null;
  ctx.audit.externalReferenceId = body.external_reference_id ?? null;
  const { created, deprecations } = await runIntakePipeline(body, referralIntakeStore(ctx.db, principal.agencyId), new Date());
  ctx.deprecations.push(...deprecations);
  // The intake and the chart are part of what this command wrote, so they are on its audit record too.
  ctx.audit.resourceIds = [created.referral_id, created.intake_id, ...(created.patient_id ? [created.patient_id] : [])];
  return { data: created };
};
