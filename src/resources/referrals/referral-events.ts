import type { components } from '../../generated/openapi.js';
import type { CommandStore } from '../../db/tenant-store.js';
import { findReferral } from './referral-repository.js';
import { referralSummary } from './referral-view.js';
import { findIntakeDetail } from '../intakes/intake-repository.js';
import { intakeSummary } from '../intakes/intake-view.js';

type ReferralCreated = components['schemas']['ReferralCreated'];
type IntakeStatusChange = components['schemas']['IntakeStatusChange'];

/**
 * A filed referral's events, in its transaction: referral.created (and referral.declined) with the referral as
 * `listReferrals` lists it, and intake.status_changed for the intake it opened, read back as `listIntakes` lists it.
 */
export async function emitReferralEvents(store: CommandStore, created: ReferralCreated): Promise<void> {
  const data = referralSummary((await findReferral(store, created.referral_id))!);
  const intake = (await findIntakeDetail(store, created.intake_id))!;
  await store.emit({ type: 'referral.created', data });
  if (created.disposition === 'declined') await store.emit({ type: 'referral.declined', data });
  const change: IntakeStatusChange = { intake: intakeSummary(intake), previous_status: null };
  await store.emit({ type: 'intake.status_changed', data: change });
}
