import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.js';

const root = join(import.meta.dirname, '../..');

/** Names the dump by what it is made of: PGlite's version and every migration's text. */
function templateName(): string {
  const hash = createHash('sha256').update(
    JSON.parse(readFileSync(join(root, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')).version,
  );
  const migrations = join(root, 'db/migrations');
  for (const file of readdirSync(migrations).sort()) hash.update(file).update(readFileSync(join(migrations, file)));
  return join(tmpdir(), `svc-extension-api-pglite-${hash.digest('hex').slice(0, 16)}.tar`);
}

/** Opened and migrated as every test and the server open theirs, then dumped. */
async function migratedDump(): Promise<Blob> {
  const database = await openDatabase({});
  try {
    return await database.dumpDataDir!();
  } finally {
    await database.close();
  }
}

/**
 * A migrated, empty PGlite data directory, made by the first test process that needs it and kept in the temp
 * directory: every test process then skips initdb and the migrations (about 4 s of CPU each).
 */
export async function pgliteTemplate(): Promise<Blob> {
  const path = templateName();
  if (existsSync(path)) return new Blob([readFileSync(path)]);
  const dump = await migratedDump();
  // Written aside and renamed: processes that make it at once each put a whole file in place.
  const partial = `${path}.${process.pid}`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, path);
  return dump;
}
