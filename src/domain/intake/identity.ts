import { normalizeNameKey, normalizePhoneKey } from '../../db/patient-match-keys.js';
import { PlatformError } from '../../shared/platform-error.js';
import type { PatientName } from './patient-name.js';

/** The identity-match key: normalized last and first name, dob as sent, normalized primary phone. */
export interface PatientIdentity {
  match_last_name: string;
  match_first_name: string;
  dob: string;
  match_phone: string;
}

/** An existing chart the referral lands on, with its active episode when the patient is mid-episode. */
export interface ChartRef {
  id: string;
  activeEpisode: { id: string; start_date: string } | null;
}

/** Null when dob or a phone with digits is missing: such a referral never matches and opens a chart. */
export function identityOf(
  name: PatientName,
  dob: string | undefined,
  phone: string | undefined,
): PatientIdentity | null {
  const matchPhone = normalizePhoneKey(phone);
  if (!dob || !matchPhone) return null;
  return {
    match_last_name: normalizeNameKey(name.last_name),
    match_first_name: normalizeNameKey(name.first_name),
    dob,
    match_phone: matchPhone,
  };
}

export function checkDob(dob: string | undefined, now: Date): void {
  if (dob && dob > now.toISOString().slice(0, 10)) {
    throw new PlatformError('PLATFORM_INVALID_INPUT', `patient_dob ${dob} is in the future.`, { field: 'patient_dob' });
  }
}

/**
 * A referral that lands on a chart with an active episode (by patient_id or by the identity match) needs the
 * sender to confirm it reviewed that episode. A state conflict the caller resolves by changing the request,
 * hence PLATFORM_CONFLICT rather than PLATFORM_WORKFLOW_ACTION_NOT_ALLOWED (which would say no request can do it).
 */
export function checkEpisodeReview(chart: ChartRef, reviewed: boolean | undefined): void {
  const episode = chart.activeEpisode;
  if (!episode || reviewed === true) return;
  throw new PlatformError(
    'PLATFORM_CONFLICT',
    `Patient ${chart.id} is mid-episode (episode ${episode.id}, active since ${episode.start_date}). Review that episode, then send the referral again with existing_patient_episode_reviewed: true.`,
    {
      reason: 'existing_patient_episode_review_required',
      field: 'existing_patient_episode_reviewed',
      patient_id: chart.id,
      episode_id: episode.id,
      episode_start_date: episode.start_date,
      next_step:
        'Review the active episode, then resend with existing_patient_episode_reviewed: true; nothing was recorded, so the same idempotency-key may be reused.',
    },
  );
}
