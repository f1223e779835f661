/**
 * Clinical scenarios (issue 4): patient detail, referral create and patient list pages on the large and
 * the small demo agency, each against a minimal live route of bench-baseline-clinical.ts. PostgreSQL only.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import { createAgency } from '../src/admin/agency.js';
import type { Config } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import type { DB } from '../src/db/schema.js';
import { seedDemoAgency, type DemoSize } from '../src/demo/seed.js';
import { BASELINE_PAGE_SIZE, BASELINE_PATHS, baselineListPath } from './bench-baseline-clinical.js';
import type { BenchTokens } from './bench-credentials.js';
import { benchIntegration, reusedToken } from './bench-identity.js';
import { bearer, type Headers, type Request, type Scenario, type ScenarioSpec, type Setup } from './bench-scenarios.js';

/** Fixed ids, so a second run on the same database reuses the seeded agencies. */
const BENCH_AGENCIES: Record<DemoSize, string> = { large: 'bench-large', small: 'bench-small' };
// Boston neighbourhoods, as the first-run demo agency.
const SERVICE_ZIPS = ['02108', '02116', '02130', '02124', '02139', '02446'];

interface AgencyFixture {
  agencyId: string;
  /** A phi token of a fresh integration, reused by every request (renewed before it expires). */
  token: BenchTokens;
  /** A ZIP of the agency's service area. */
  zip: string;
  /** A patient with coverage, so the detail has its coverage list to read. */
  patientId: string;
}

export type ClinicalContext = AgencyFixture & { serviceUrl: string; databaseUrl: string };

export interface ClinicalSpec extends ScenarioSpec<ClinicalContext> {
  agency: DemoSize;
}

const CONNECTIONS = [10, 50];
const PATIENTS = '/api/v1/ext/patients';
const PAGE = BASELINE_PAGE_SIZE;
const DEPTH = 50_000;

export const CLINICAL_SPECS: ClinicalSpec[] = [
  { name: 'patient detail by id', agency: 'large', build: patientDetail },
  { name: 'referral create, fresh key each request', agency: 'large', build: referralCreate },
  { name: 'patient list offset 0, large agency', agency: 'large', build: (ctx) => listAtOffset(ctx, 0) },
  { name: `patient list offset ${DEPTH}, large agency`, agency: 'large', build: (ctx) => listAtOffset(ctx, DEPTH) },
  { name: `patient list cursor at ${DEPTH}, large agency`, agency: 'large', build: listByCursor },
  { name: 'patient list offset 0, small agency', agency: 'small', build: (ctx) => listAtOffset(ctx, 0) },
  {
    name: 'patient list status=active offset 0, large agency',
    agency: 'large',
    build: (ctx) => listAtOffset(ctx, 0, 'active'),
  },
];

/** Through PgBouncer in transaction mode against the same service direct on PostgreSQL (README "Databases"). */
const POOLED_SUFFIX = ', through PgBouncer against direct';
const POOLED_GOAL = 0.9;

export const POOLED_SPECS: ClinicalSpec[] = CLINICAL_SPECS.filter((spec) =>
  /detail|create|list offset 0, large/.test(spec.name),
).map((spec) => ({
  ...spec,
  name: spec.name + POOLED_SUFFIX,
  build: async (ctx) => ({
    ...(await spec.build(ctx)),
    baseline: undefined,
    pairing: 'pooled/service',
    goal: POOLED_GOAL,
  }),
}));

function scenario(service: Request, baseline: Request, goal?: number): Omit<Scenario, 'name'> {
  return { service, baseline, connections: CONNECTIONS, goal };
}

function get(ctx: ClinicalContext, path: string): Request {
  return { method: 'GET', path, headers: {}, tokens: ctx.token };
}

function patientDetail(ctx: ClinicalContext) {
  return scenario(
    get(ctx, `${PATIENTS}/${ctx.patientId}`),
    get(ctx, `${BASELINE_PATHS.patients}/${ctx.patientId}`),
    0.8,
  );
}

function listAtOffset(ctx: ClinicalContext, offset: number, status?: string) {
  const filter = status ? `&status=${status}` : '';
  return scenario(
    get(ctx, `${PATIENTS}?limit=${PAGE}&offset=${offset}${filter}`),
    get(ctx, baselineListPath({ offset }, status)),
  );
}

interface PatientPage {
  data: { id: string; last_name: string; first_name: string }[];
  meta: { next_cursor: string | null };
}

/** The service's cursor after the page that ends at DEPTH, and that page's last row as the baseline's keyset. */
async function listByCursor(ctx: ClinicalContext) {
  const response = await fetch(`${ctx.serviceUrl}${PATIENTS}?limit=${PAGE}&offset=${DEPTH - PAGE}`, {
    headers: bearer(await ctx.token.current()),
  });
  if (!response.ok)
    throw new Error(
      `patient list at offset ${DEPTH - PAGE} answered ${response.status}: ${(await response.text()).slice(0, 300)}`,
    );
  const { data, meta } = (await response.json()) as PatientPage;
  const last = data.at(-1);
  if (!last || !meta.next_cursor)
    throw new Error(
      `${ctx.agencyId} has fewer than ${DEPTH + PAGE} patients; the cursor scenario needs the large demo agency`,
    );
  const after: [string, string, string] = [last.last_name, last.first_name, last.id];
  return scenario(
    get(ctx, `${PATIENTS}?limit=${PAGE}&cursor=${meta.next_cursor}`),
    get(ctx, baselineListPath({ after })),
  );
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const randomInt = (below: number) => Math.floor(Math.random() * below);
const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Letters only: identity matching normalizes names, and a random one never matches an existing chart. */
function randomName(length: number): string {
  const letters = Array.from({ length }, () => LETTERS[randomInt(LETTERS.length)]).join('');
  return letters[0].toUpperCase() + letters.slice(1);
}

/** A current-shape (2026-08-19) referral for a new person in the service area. */
function referralBody(zip: string) {
  return {
    service_line: 'home_health',
    referral_type: 'soc',
    patient_first_name: randomName(7),
    patient_last_name: randomName(10),
    patient_dob: `${1930 + randomInt(40)}-${pad(1 + randomInt(12), 2)}-${pad(1 + randomInt(28), 2)}`,
    patient_phone: `(617) 555-${pad(randomInt(10_000), 4)}`,
    patient_zip_code: zip,
    referral_source: 'Bench General Hospital',
    insurance: 'Medicare Part A',
    diagnoses: [{ code: 'I50.9', description: 'Heart failure, unspecified' }],
    notes: 'Benchmark referral.',
  };
}

/**
 * Deletes the leads (intakes, referrals, charts) written since `since` by the service and by the baseline: a run adds
 * tens of thousands of charts, and the list scenarios after it, or the next run, should see the seeded agency.
 * Requests of the last slice may still be committing: a delete that meets one (a foreign key) is tried again.
 */
async function removeLeads(ctx: ClinicalContext, since: Date): Promise<void> {
  const database = await openDatabase({ databaseUrl: ctx.databaseUrl, poolMax: 1, migrate: false });
  const deleteLeads = sql`
    with intakes as (delete from intakes where agency_id = ${ctx.agencyId} and created_at >= ${since}),
      referrals as (delete from referrals where agency_id = ${ctx.agencyId} and created_at >= ${since})
    delete from patients where agency_id = ${ctx.agencyId} and created_at >= ${since}`;
  try {
    for (let attempt = 1; ; attempt++) {
      const failure = await deleteLeads.execute(database.db).then(
        () => undefined,
        (err: unknown) => err,
      );
      if (!failure) return;
      if (attempt === 5) throw failure;
      await sleep(1_000);
    }
  } finally {
    await database.close();
  }
}

function referralCreate(ctx: ClinicalContext) {
  const headers: Headers = { 'content-type': 'application/json' };
  const setup = (): Setup => (request) => ({
    ...request,
    headers: { ...request.headers, 'idempotency-key': randomUUID() },
    body: JSON.stringify(referralBody(ctx.zip)),
  });
  return {
    ...scenario(
      { method: 'POST', path: '/api/v1/ext/referrals', headers, tokens: ctx.token, setup },
      { method: 'POST', path: BASELINE_PATHS.referrals, headers, tokens: ctx.token, setup },
      0.4,
    ),
    after: (since: Date) => removeLeads(ctx, since),
  };
}

/** The agency under its fixed id, seeded as a demo agency of that size unless it already has patients. */
async function ensureSeeded(db: Kysely<DB>, size: DemoSize): Promise<string> {
  const agencyId = BENCH_AGENCIES[size];
  const agency = await db.selectFrom('agencies').select('id').where('id', '=', agencyId).executeTakeFirst();
  if (!agency) await createAgency(db, { id: agencyId, name: `Bench ${size} agency`, serviceZips: SERVICE_ZIPS });
  const { patients } = await db
    .selectFrom('patients')
    .select(sql<number>`count(*)::int`.as('patients'))
    .where('agency_id', '=', agencyId)
    .executeTakeFirstOrThrow();
  if (patients > 0) {
    console.error(`reusing ${agencyId} (${patients} patients)`);
    return agencyId;
  }
  console.error(
    `seeding ${agencyId} as a ${size} demo agency${size === 'large' ? ' (about 4 minutes on PostgreSQL)' : ''}`,
  );
  const started = Date.now();
  const seeded = await seedDemoAgency(db, { agencyId, size });
  console.error(
    `seeded ${agencyId}: ${seeded.rows.patients} patients in ${Math.round((Date.now() - started) / 1000)} s`,
  );
  return agencyId;
}

async function agencyFixture(db: Kysely<DB>, config: Config, size: DemoSize): Promise<AgencyFixture> {
  const agencyId = await ensureSeeded(db, size);
  const { zip_code: zip } = await db
    .selectFrom('agency_service_zips')
    .select('zip_code')
    .where('agency_id', '=', agencyId)
    .orderBy('zip_code')
    .limit(1)
    .executeTakeFirstOrThrow();
  const { patient_id: patientId } = await db
    .selectFrom('coverages')
    .select('patient_id')
    .where('agency_id', '=', agencyId)
    .orderBy('patient_id')
    .limit(1)
    .executeTakeFirstOrThrow();
  const sign = await benchIntegration(db, config, agencyId);
  return { agencyId, token: await reusedToken(sign, `the token of ${agencyId}`), zip, patientId };
}

/**
 * What autovacuum keeps true of a production database and not of a freshly seeded one: the visibility map that
 * lets counts be index-only scans, and the statistics the planner estimates with. Takes seconds when nothing changed.
 */
async function vacuumAnalyze(db: Kysely<DB>): Promise<void> {
  const started = Date.now();
  await sql`vacuum (analyze)`.execute(db);
  console.error(`vacuum (analyze) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Seeds (first run) or reuses the agencies the selected specs need; runs before the service starts. */
export async function prepareClinical(
  db: Kysely<DB>,
  config: Config,
  specs: ClinicalSpec[],
): Promise<Partial<Record<DemoSize, AgencyFixture>>> {
  const fixtures: Partial<Record<DemoSize, AgencyFixture>> = {};
  for (const size of new Set(specs.map((s) => s.agency))) fixtures[size] = await agencyFixture(db, config, size);
  await vacuumAnalyze(db);
  return fixtures;
}
