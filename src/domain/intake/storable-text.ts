import { PlatformError } from '../../shared/platform-error.js';
import { unstorableAt } from '../storable-text.js';

const unstorable = (text: string) => unstorableAt(text) >= 0;

function firstUnstorable(value: unknown, path: string): string | null {
  if (typeof value === 'string') return unstorable(value) ? path : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    const itemPath = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (unstorable(key)) return itemPath;
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
