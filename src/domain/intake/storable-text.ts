import { PlatformError } from '../../shared/platform-error.js';

/** NUL and unpaired surrogates: PostgreSQL refuses them in text and jsonb, so they would fail the insert. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function firstUnstorable(value: unknown, path: string): string | null {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? path : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    const itemPath = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (UNSTORABLE.test(key)) return itemPath;
    const found = firstUnstorable(item, itemPath);
    if (found) return found;
  }
  return null;
}

/** Refuses a body holding text the database cannot store, naming the field, rather than failing on insert. */
export function checkStorableText(body: object): void {
  const field = firstUnstorable(body, '');
  if (field) {
    throw new PlatformError('PLATFORM_INVALID_INPUT', `${field} contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored.`, { field });
  }
}
