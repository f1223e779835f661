import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';

/**
 * The product spec is not in the repository, so its numbering ("route 23", "spec part 4 rule 3", "spec 7.1") tells a
 * reader nothing: comments and docs name the rule, or point at an operationId, an `x-svc-*` table or a README section.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SCANNED = ['openapi.json', 'README.md', 'src', 'codegen', 'tools', 'scripts', 'clients', 'test', 'db', 'docs'];
/** Generated code repeats openapi.json's descriptions, which are scanned at their source. */
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.venv', '__pycache__', 'generated']);
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|py|md|sql|sh)$/;
/** The spec numbers routes 1 to 28 and rules within parts; three digits after "route" or "rule" are an HTTP status. */
const FOREIGN_NUMBERING = [
  /\broutes? \d{1,2}\b/i,
  /\bspec(?:'s)? (?:part |route )?\d/i,
  /\bpart \d{1,2}\b/i,
  /\brule \d{1,2}\b/i,
  /§/,
];
/** Text that legitimately holds such words: a US rural-route street address in the intake tests. */
const ALLOWED = ['Rural Route 2'];

function files(path: string): string[] {
  const entries = readdirSync(path, { withFileTypes: true });
  return entries.flatMap((entry) => {
    const full = join(path, entry.name);
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : files(full);
    return TEXT.test(entry.name) ? [full] : [];
  });
}

function scanned(): string[] {
  return SCANNED.flatMap((name) => (name.includes('.') ? [join(ROOT, name)] : files(join(ROOT, name))));
}

function citations(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line, index) =>
      FOREIGN_NUMBERING.some((pattern) => pattern.test(line)) && !ALLOWED.some((text) => line.includes(text))
        ? [`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`]
        : [],
    );
}

t.test('no comment or doc cites a numbering of the spec, which is not in the repository', async (t) => {
  const self = join(import.meta.dirname, 'no-foreign-numbering.test.ts');
  const found = scanned()
    .filter((file) => file !== self)
    .flatMap(citations);
  t.same(found, [], 'name the rule, an operationId, an x-svc-* table or a README section instead');
});
