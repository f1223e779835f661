import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.js';
import { importEraFile, textSource, type EraImportResult } from '../../src/resources/remittances/era-import.js';
import { webhookOutbox } from '../../src/events/outbox.js';
import { runPlatformCommand } from '../../src/platform-commands/platform-command.js';

export const FIXTURES = [
  'medicare-home-health-crlf.835',
  'secondary-payer-checks-no-breaks.835',
  'recoupment-only.835',
] as const;
export type Fixture = (typeof FIXTURES)[number];

export function fixtureText(name: Fixture): string {
  return readFileSync(new URL(`../fixtures/era/${name}`, import.meta.url), 'utf8');
}

export function importText(db: Kysely<DB>, agencyId: string, name: string, text: string): Promise<EraImportResult> {
  const command = {
    agencyId,
    operation: 'importEraFile',
    actor: 'admin-cli',
    resourceType: 'remittance',
    phiMode: 'phi',
    outbox: webhookOutbox,
  } as const;
  return runPlatformCommand(db, command, (store) => importEraFile(store, textSource(name, text)));
}

/** Rows of the agency in the four ERA tables. */
export async function eraRowCounts(db: Kysely<DB>, agencyId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of [
    'era_files',
    'remittances',
    'remittance_allocations',
    'remittance_provider_adjustments',
  ] as const) {
    const { n } = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agency_id', '=', agencyId)
      .executeTakeFirstOrThrow();
    counts[table] = Number(n);
  }
  return counts;
}

/** An 835 of one payment of `claims` (CLP and its 2100 segments, each claim paid in full), with correct counts and balance. */
export function eraText(claims: { pcn: string; paid: string; segments?: string[] }[], trace = 'TRACE1'): string {
  const isa =
    'ISA*00*          *00*          *ZZ*PAYER          *ZZ*AGENCY         *261102*0930*^*00501*000000077*0*P*:';
  const cents = claims.reduce((sum, c) => sum + Math.round(Number(c.paid) * 100), 0);
  const body = [
    'ST*835*0001',
    `BPR*I*${(cents / 100).toFixed(2)}*C*ACH*CCP*01*011000015*DA*123*1111111111**01*021000021*DA*987*20261104`,
    `TRN*1*${trace}*1111111111`,
    'N1*PR*TEST PAYER',
    'N1*PE*ACME HOME HEALTH*XX*1234567893',
    'LX*1',
    ...claims.flatMap((c, i) => [`CLP*${c.pcn}*1*${c.paid}*${c.paid}**MA*PCN${i + 1}`, ...(c.segments ?? [])]),
  ];
  body.push(`SE*${body.length + 1}*0001`);
  return `${[isa, 'GS*HP*PAYER*AGENCY*20261102*0930*77*X*005010X221A1', ...body, 'GE*1*77', 'IEA*1*000000077'].join('~\n')}~\n`;
}
