/**
 * The normalized identity columns of a patient row (match_last_name, match_first_name, match_phone).
 * Computed here rather than in SQL because stripping diacritics needs `unaccent`, which is not immutable
 * (so no generated column) and not available on every engine. Whoever writes a patient's name or phone
 * writes these with it; the identity match compares against them and the raw dob.
 */
interface PatientMatchKeys {
  match_last_name: string;
  match_first_name: string;
  match_phone: string | null;
}

/** Lower case, diacritics stripped, inner whitespace collapsed: "  José  María " -> "jose maria". */
export function normalizeNameKey(name: string): string {
  return name.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Digits only, without the US country code: "+1 (614) 555-0142" -> "6145550142"; null when there are none. */
export function normalizePhoneKey(phone: string | null | undefined): string | null {
  const digits = (phone ?? '').replace(/\D/g, '');
  const national = digits.length === 11 && digits.startsWith('1') ? digits.slice(1) : digits;
  return national === '' ? null : national;
}

export function patientMatchKeys(patient: {
  first_name: string;
  last_name: string;
  primary_phone: string | null;
}): PatientMatchKeys {
  return {
    match_last_name: normalizeNameKey(patient.last_name),
    match_first_name: normalizeNameKey(patient.first_name),
    match_phone: normalizePhoneKey(patient.primary_phone),
  };
}
