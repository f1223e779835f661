import type { components } from '../../generated/openapi.js';
import type { CommandStore } from '../../db/tenant-store.js';
import { findReferralWithIntake } from './referral-repository.js';
import { referralSummary } from './referral-view.js';
import { intakeSummary } from '../intakes/intake-view.js';

type ReferralCreated = components['schemas']['ReferralCreated'];
type IntakeStatusChange = components['schemas']['IntakeStatusChange'];

/**
 * A filed referral's events, in its transaction: referral.created (and referral.declined) with the referral as the
 * referral list shows it, and intake.status_changed for the intake it opened, as the intake list shows it. Both are
 * read back in one statement and written in one: each round trip inside the command's transaction is its cost.
 */
export async function emitReferralEvents(store: CommandStore, created: ReferralCreated): Promise<void> {
  const { referral, intake } = await findReferralWithIntake(store, created.referral_id);
  const data = referralSummary(referral);
  const change: IntakeStatusChange = { intake: intakeSummary(intake), previous_status: null };
  await store.emit(
    { type: 'referral.created', data },
    ...(created.disposition === 'declined' ? [{ type: 'referral.declined', data }] : []),
    { type: 'intake.status_changed', data: change },
  );
}
