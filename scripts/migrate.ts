import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const target = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite at ${config.dataDir}`;
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    ...config.db,
    migrate: false,
  });
  try {
    const applied = await migrateToLatest(database.db);
    for (const name of applied) console.log(`applied ${name}`);
    console.log(`${target}: ${applied.length ? `${applied.length} migration(s) applied` : 'already up to date'}`);
  } finally {
    await database.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
