/**
 * Which of the agency's patients a remitted claim is about. The 835 names the claim by the patient control number the
 * agency billed it with (CLP01) and the patient as the payer knows them (NM1*QC name, member id).
 *
 * - The control number names a patient when it is the patient's MRN, or the MRN followed by "-" and a claim suffix.
 * - matched: the control number names a patient, and the payer's member id is among that patient's coverages'
 *   policy numbers or the payer's last name is the patient's (compared without case, accents or extra spaces).
 * - partially_matched: one identifier alone points at one patient: the control number names a patient whose member id
 *   and last name both disagree, or it names none and exactly one patient holds the member id.
 * - unmatched: neither, or the member id is held by several patients; no patient is linked.
 */

type MatchStatus = 'matched' | 'partially_matched' | 'unmatched';

export interface CandidatePatient {
  id: string;
  /** Normalized (normalizeNameKey). */
  lastNameKey: string;
  policyNumbers: readonly string[];
}

interface ClaimIdentity {
  patientControlNumber: string;
  /** Normalized (normalizeNameKey); null when the 835 gives none. */
  lastNameKey: string | null;
  memberId: string | null;
}

export interface ClaimMatch {
  status: MatchStatus;
  patientId: string | null;
}

/** The MRNs a control number may name: itself, and the part before its first "-". */
export function mrnCandidates(patientControlNumber: string): string[] {
  const dash = patientControlNumber.indexOf('-');
  return dash > 0 ? [patientControlNumber, patientControlNumber.slice(0, dash)] : [patientControlNumber];
}

/**
 * `byMrn`: the patient the control number names, if any (the whole number wins over its prefix); `byMemberId`: the
 * patients whose coverages hold the claim's member id.
 */
export function matchClaim(
  claim: ClaimIdentity,
  byMrn: CandidatePatient | undefined,
  byMemberId: readonly string[],
): ClaimMatch {
  if (byMrn) {
    const memberAgrees = claim.memberId !== null && byMrn.policyNumbers.includes(claim.memberId);
    const nameAgrees = claim.lastNameKey !== null && claim.lastNameKey === byMrn.lastNameKey;
    return { status: memberAgrees || nameAgrees ? 'matched' : 'partially_matched', patientId: byMrn.id };
  }
  const holders = [...new Set(byMemberId)];
  if (holders.length === 1) return { status: 'partially_matched', patientId: holders[0] };
  return { status: 'unmatched', patientId: null };
}
