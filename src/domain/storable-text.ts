import { pointerToken } from '../shared/json-pointer.js';

/**
 * Text PostgreSQL cannot store: NUL, and UTF-16 surrogates without their pair (text and jsonb refuse both). A value
 * holding one would fail its insert, or be changed on the way in, so requests carrying one are refused as sent.
 */
const SUSPECT = /[\0\uD800-\uDFFF]/;
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The quick test finds nothing in almost all text; the exact one tells a lone surrogate from a pair. */
export function isStorableText(text: string): boolean {
  if (!SUSPECT.test(text)) return true;
  UNSTORABLE.lastIndex = 0;
  return !UNSTORABLE.test(text);
}

/** The same text in a form that is always stored: each NUL and lone surrogate becomes U+FFFD. */
export function storableText(text: string): string {
  return isStorableText(text) ? text : text.replace(UNSTORABLE, '\uFFFD');
}

/** Whether any string or member name in `value` cannot be stored: the common answer, no, allocates nothing. */
export function holdsUnstorableText(value: unknown): boolean {
  if (typeof value === 'string') return !isStorableText(value);
  if (typeof value !== 'object' || value === null) return false;
  for (const key in value) {
    if (!isStorableText(key) || holdsUnstorableText((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/** Where the first character of `text` that cannot be stored is; -1 when there is none. */
export function unstorableAt(text: string): number {
  if (!SUSPECT.test(text)) return -1;
  UNSTORABLE.lastIndex = 0;
  return text.search(UNSTORABLE);
}

/** The character at `at` as U+XXXX and what it is, for a refusal. */
export function describeUnstorable(text: string, at: number): string {
  const code = text.charCodeAt(at);
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')} (${code === 0 ? 'a NUL byte' : 'an unpaired UTF-16 surrogate'})`;
}

/** The JSON pointer of every string or member name in `value` that cannot be stored, at most `limit` of them. */
export function unstorableTextPointers(value: unknown, limit = 10, pointer = '', found: string[] = []): string[] {
  if (found.length >= limit) return found;
  if (typeof value === 'string') {
    if (!isStorableText(value)) found.push(pointer);
    return found;
  }
  if (typeof value !== 'object' || value === null) return found;
  for (const key of Object.keys(value)) {
    const itemPointer = `${pointer}/${pointerToken(key)}`;
    if (!isStorableText(key)) found.push(itemPointer);
    else unstorableTextPointers((value as Record<string, unknown>)[key], limit, itemPointer, found);
    if (found.length >= limit) break;
  }
  return found;
}
