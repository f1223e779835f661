/**
 * ERA remittance scenarios (issue 35): a page of 50 allocations by cursor, 1,000 claims into a payment of 2,000, against
 * the minimal live route of bench-baseline-remittances.ts (PostgreSQL only); and the import of a generated
 * 50,000-claim 835 in a process of its own (scripts/bench-era-import.ts), reporting claims per second and peak RSS.
 */
import { execFile } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createAgency } from '../src/admin/agency.js';
import type { Config } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { interchangeLines, type WrittenClaim, type WrittenPayment } from '../src/demo/era-835-writer.js';
import { importEraFile, textSource } from '../src/resources/remittances/era-import.js';
import { webhookOutbox } from '../src/events/outbox.js';
import { runPlatformCommand } from '../src/platform-commands/platform-command.js';
import { baselineAllocationsPath } from './bench-baseline-remittances.js';
import type { ClinicalContext, ClinicalSpec } from './bench-clinical.js';
import { root } from './bench-processes.js';
import { bearer, type Request } from './bench-scenarios.js';

const PAGE = 50;
const PAYMENT_CLAIMS = 2_000;
const DEPTH = 1_000;
const IMPORT_CLAIMS = 50_000;
export const IMPORT_SCENARIO = `remittance import of a ${IMPORT_CLAIMS.toLocaleString('en-US')}-claim 835`;

export const REMITTANCE_SPECS: ClinicalSpec[] = [
  {
    name: `remittance allocation page of ${PAGE} by cursor at ${DEPTH}, small agency`,
    agency: 'small',
    build: allocationPage,
  },
];

/** Claim `i` of a generated payment: a paid Medicare home health period with contractual and sequestration adjustments. */
function benchClaim(i: number): WrittenClaim {
  const allowed = 1_500_00 + ((i * 7919) % 1_000_00);
  const charged = Math.round(allowed * 1.4);
  const sequestration = Math.round(allowed * 0.02);
  return {
    pcn: `B${String(i).padStart(8, '0')}-2610`,
    statusCode: '1',
    chargedCents: charged,
    paidCents: allowed - sequestration,
    payerClaimNumber: `2226${String(i).padStart(10, '0')}`,
    filingIndicator: 'MA',
    patient: {
      lastName: `PATIENT${i % 997}`,
      firstName: 'BENCH',
      memberId: `${(i % 9) + 1}EG${String(i).padStart(7, '0')}`,
    },
    from: '2026-10-01',
    to: '2026-10-30',
    adjustments: [
      ['CO', '45', charged - allowed],
      ['CO', '253', sequestration],
    ],
    allowedCents: allowed,
  };
}

function benchPayment(claims: number, trace: string): WrittenPayment {
  return {
    controlNumber: '0001',
    method: 'ACH',
    paymentDate: '2026-11-04',
    productionDate: '2026-11-02',
    traceNumber: trace,
    payer: { name: 'BENCH MEDICARE MAC', id: '11001', originator: '1999999999' },
    payee: { name: 'BENCH HOME HEALTH', npi: '1234567893' },
    claims: function* () {
      for (let i = 1; i <= claims; i++) yield benchClaim(i);
    },
    providerAdjustments: [['L6', 'BENCH', -12_34]],
  };
}

const interchange = { sender: 'BENCHMAC', receiver: 'BENCHHH', date: '2026-11-02', controlNumber: 35 };

/** The same bytes every run, so a second run on the same database finds the payment already imported. */
function paymentText(): string {
  return [...interchangeLines(interchange, [benchPayment(PAYMENT_CLAIMS, `BENCH${PAYMENT_CLAIMS}`)])].join('');
}

interface Page {
  data: { id: string; remittance_id: string }[];
  meta: { next_cursor: string | null };
}

async function allocationPage(ctx: ClinicalContext) {
  const database = await openDatabase({ databaseUrl: ctx.databaseUrl, poolMax: 1, migrate: false });
  let eraFileId: string;
  try {
    const command = {
      agencyId: ctx.agencyId,
      operation: 'importEraFile',
      actor: 'admin-cli',
      resourceType: 'remittance',
      phiMode: 'phi',
      outbox: webhookOutbox,
    } as const;
    eraFileId = (
      await runPlatformCommand(database.db, command, (store) =>
        importEraFile(store, textSource('bench-allocations.835', paymentText())),
      )
    ).eraFileId;
  } finally {
    await database.close();
  }
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${ctx.serviceUrl}${path}`, { headers: bearer(await ctx.token.current()) });
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    return (await response.json()) as T;
  };
  const [remittance] = (await get<{ data: { id: string }[] }>(`/api/v1/ext/remittances?era_file_id=${eraFileId}`)).data;
  const url = `/api/v1/ext/remittances/${remittance.id}/allocations`;
  const before = await get<Page>(`${url}?limit=${PAGE}&offset=${DEPTH - PAGE}`);
  const last = before.data.at(-1)!;
  const request = (path: string): Request => ({ method: 'GET', path, headers: {}, tokens: ctx.token });
  return {
    service: request(`${url}?limit=${PAGE}&cursor=${before.meta.next_cursor}`),
    baseline: request(baselineAllocationsPath(remittance.id, [DEPTH, last.id])),
    connections: [10, 50],
    goal: 0.7,
  };
}

/** Writes the generated file in chunks: the generator never holds more than one chunk of it. */
function writeImportFile(path: string): void {
  const fd = openSync(path, 'w');
  try {
    let chunk = '';
    for (const line of interchangeLines({ ...interchange, controlNumber: Date.now() % 1e9 }, [
      benchPayment(IMPORT_CLAIMS, `BENCHIMPORT${Date.now()}`),
    ])) {
      chunk += line;
      if (chunk.length > 1 << 20) {
        writeSync(fd, chunk);
        chunk = '';
      }
    }
    writeSync(fd, chunk);
  } finally {
    closeSync(fd);
  }
}

export interface ImportResult {
  scenario: string;
  claims: number;
  seconds: number;
  claimsPerSecond: number;
  peakRssMb: number;
  fileMb: number;
  database: 'postgres' | 'pglite';
}

/**
 * Imports a generated 50,000-claim file into a fresh agency through the import path, in a child process of its own
 * so that its peak RSS is the importer's (on the embedded store it includes PGlite's own PostgreSQL).
 */
export async function benchImport(config: Config, env: NodeJS.ProcessEnv, dir: string): Promise<ImportResult> {
  const file = join(dir, 'bench-import.835');
  writeImportFile(file);
  const agencyId = `bench-era-${Date.now()}`;
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await createAgency(database.db, { id: agencyId, name: 'Bench ERA import', serviceZips: ['02108'] });
  } finally {
    await database.close();
  }
  const output = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(root, 'scripts/bench-era-import.ts'), agencyId, file],
      { env, cwd: root, maxBuffer: 1 << 20 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`bench-era-import failed: ${stderr || err.message}`)) : resolve(stdout),
    );
  });
  const measured = JSON.parse(output) as { claims: number; seconds: number; peakRssMb: number; fileMb: number };
  return {
    scenario: IMPORT_SCENARIO,
    ...measured,
    claimsPerSecond: Math.round(measured.claims / measured.seconds),
    database: config.databaseUrl ? 'postgres' : 'pglite',
  };
}
