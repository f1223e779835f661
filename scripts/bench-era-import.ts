/**
 * One 835 import, as the admin command runs it, in a process of its own for bench-remittances.ts: prints the claims,
 * seconds and this process's peak RSS as one JSON object.
 * Usage: node --import tsx scripts/bench-era-import.ts AGENCY_ID FILE.835 (DATABASE_URL or DATA_DIR from the environment).
 */
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { fileSource } from '../src/admin/era-file.js';
import { webhookOutbox } from '../src/events/outbox.js';
import { runPlatformCommand } from '../src/platform-commands/platform-command.js';
import { importEraFile } from '../src/resources/remittances/era-import.js';

const [agencyId, path] = process.argv.slice(2);
if (!agencyId || !path) throw new Error('usage: bench-era-import.ts AGENCY_ID FILE.835');
const config = loadConfig();
const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...config.db });
try {
  const started = process.hrtime.bigint();
  const source = await fileSource(path);
  const command = {
    agencyId,
    operation: 'importEraFile',
    actor: 'admin-cli',
    resourceType: 'remittance',
    phiMode: 'phi',
    outbox: webhookOutbox,
  } as const;
  const result = await runPlatformCommand(database.db, command, (store) => importEraFile(store, source));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  process.stdout.write(
    `${JSON.stringify({ claims: result.claims, seconds: Math.round(seconds * 10) / 10, peakRssMb, fileMb: Math.round(source.byteSize / 1e5) / 10 })}\n`,
  );
} finally {
  await database.close();
}
