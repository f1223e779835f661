/** NUL and unpaired surrogates: PostgreSQL refuses them in text and jsonb, so they would fail the insert. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Where the first character of `text` that the database cannot store is; -1 when there is none. */
export function unstorableAt(text: string): number {
  return text.search(UNSTORABLE);
}

/** The character at `at` as U+XXXX and what it is, for a refusal. */
export function describeUnstorable(text: string, at: number): string {
  const code = text.charCodeAt(at);
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')} (${code === 0 ? 'a NUL byte' : 'an unpaired UTF-16 surrogate'})`;
}

/** `text` with every character the database cannot store shown as U+FFFD, so a message quoting it can itself be stored and printed. */
export function withUnstorableReplaced(text: string): string {
  return text.replace(new RegExp(UNSTORABLE.source, 'g'), '\uFFFD');
}
