import { PlatformError } from '../../shared/platform-error.js';

export interface PatientName {
  first_name: string;
  middle_name: string | null;
  last_name: string;
  suffix: string | null;
  /** patient_name as sent, or the parts joined. */
  display_name: string;
}

interface NameFields {
  patient_name?: string;
  patient_first_name?: string;
  patient_last_name?: string;
  patient_middle_name?: string;
  patient_suffix?: string;
}

/** Generational and professional suffixes recognised at the end of a full name. */
const SUFFIXES = new Set(['jr', 'sr', 'ii', 'iii', 'iv', 'v', 'md', 'phd', 'esq']);

const isSuffix = (word: string | undefined) =>
  word !== undefined && SUFFIXES.has(word.toLowerCase().replace(/\./g, ''));

/** Trimmed, inner whitespace collapsed; blank is absent. */
function clean(text: string | undefined): string | null {
  const cleaned = text?.replace(/\s+/g, ' ').trim();
  return cleaned ? cleaned : null;
}

const joinParts = (...parts: (string | null)[]) => parts.filter(Boolean).join(' ');

function splitWords(words: string[], suffix: string | null): Omit<PatientName, 'display_name'> {
  return {
    first_name: words[0],
    middle_name: words.slice(1, -1).join(' ') || null,
    last_name: words[words.length - 1],
    suffix,
  };
}

function lastCommaFirst(last: string, given: string, suffix: string | null): Omit<PatientName, 'display_name'> {
  const lastWords = last.split(' ');
  const ownSuffix = !suffix && lastWords.length > 1 && isSuffix(lastWords.at(-1)) ? lastWords.pop()! : null;
  return splitWords([...given.split(' '), lastWords.join(' ')], suffix ?? ownSuffix);
}

/**
 * "Last, First Middle" when there is a comma, else "First Middle Last"; a known suffix (Jr, Sr, II, III, IV, ...)
 * at the end, after a comma or not, is split off. Null when no first and last name can be told apart.
 */
function splitFullName(full: string): Omit<PatientName, 'display_name'> | null {
  const parts = full
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const suffix = parts.length > 1 && isSuffix(parts.at(-1)) ? parts.pop()! : null;
  if (parts.length === 2) return lastCommaFirst(parts[0], parts[1], suffix);
  if (parts.length !== 1) return null;
  const words = parts[0].split(' ');
  const trailing = !suffix && words.length > 2 && isSuffix(words.at(-1)) ? words.pop()! : null;
  return words.length >= 2 ? splitWords(words, suffix ?? trailing) : null;
}

/** The name rule: patient_first_name with patient_last_name, else patient_name split into parts. */
export function patientName(body: NameFields): PatientName {
  const [first, last, full] = [clean(body.patient_first_name), clean(body.patient_last_name), clean(body.patient_name)];
  if (first && last) {
    const middle = clean(body.patient_middle_name);
    const suffix = clean(body.patient_suffix);
    return {
      first_name: first,
      middle_name: middle,
      last_name: last,
      suffix,
      display_name: full ?? joinParts(first, middle, last, suffix),
    };
  }
  if (!full) {
    throw new PlatformError(
      'PLATFORM_INVALID_INPUT',
      'A referral needs the patient name: send patient_name, or patient_first_name together with patient_last_name.',
      {
        field: 'patient_name',
        alternative: 'patient_first_name and patient_last_name',
      },
    );
  }
  const parts = splitFullName(full);
  if (!parts) {
    throw new PlatformError(
      'PLATFORM_INVALID_INPUT',
      `patient_name "${full}" does not give both a first and a last name; send patient_first_name and patient_last_name instead.`,
      {
        field: 'patient_name',
      },
    );
  }
  return { ...parts, display_name: full };
}
