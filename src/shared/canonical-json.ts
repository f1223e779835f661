/**
 * JSON with object keys sorted at every depth and undefined members left out (absent = null at the top), so two
 * encodings of one value compare equal: idempotency fingerprints and cursor bindings. Recursive: safe because the
 * body parser refuses bodies nested deeper than x-svc-body-limits.max_depth, and bindings are shallow.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const object = value as Record<string, unknown>;
  const members = Object.keys(object)
    .filter((name) => object[name] !== undefined)
    .sort()
    .map((name) => `${JSON.stringify(name)}:${canonicalJson(object[name])}`);
  return `{${members.join(',')}}`;
}
