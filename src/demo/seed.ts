import { setImmediate } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { CommandStore, EventOutbox } from '../db/tenant-store.js';
import { runPlatformCommand, UnknownAgencyError } from '../platform-commands/platform-command.js';
import { webhookOutbox } from '../events/outbox.js';
import { buildChart, type Chart } from './charts.js';
import { buildCoverages } from './coverages.js';
import { DemoSeedError } from './errors.js';
import { DraftWriter, emptyDrafts, type Drafts, type SeededTable } from './drafts.js';
import { outOfAreaZips } from './geography.js';
import { Random, type Weights } from './random.js';
import {
  addReferral,
  chartDecision,
  chartLead,
  outOfAreaLead,
  resumptionDecision,
  type ReferralIds,
} from './referrals.js';
import { buildReferenceData } from './reference-data.js';
import { prepareServiceArea } from './service-area.js';
import { buildTask, type TaskSubject } from './tasks.js';
import { buildPhysicianOrders } from './physician-orders.js';
import { buildVisits, staffByOffice, visitWindow, type VisitContext } from './visits.js';
import { seedHhvbp } from './hhvbp.js';
import { seedEra } from './era.js';
import { workingCollectionDrafts } from './working-collections.js';

export { DemoSeedError };

export type DemoSize = 'small' | 'large';

interface SeedOptions {
  agencyId: string;
  size: DemoSize;
  /** Dates are generated relative to it; defaults to DEMO_REFERENCE_NOW so repeated seeds match row for row. */
  now?: Date;
  /** Where the seeded imports' events go (remittance.received); default: the webhooks outbox, which services.ts configures. */
  outbox?: EventOutbox;
}

export interface SeedSummary {
  agencyId: string;
  size: DemoSize;
  now: string;
  /** Branch offices added to a one-office agency (its service ZIPs were spread across them). */
  officesCreated: number;
  rows: Record<SeededTable, number>;
}

export const DEMO_REFERENCE_NOW = new Date('2026-11-16T19:00:00Z');

const PATIENTS: Record<DemoSize, number> = { small: 300, large: 100_000 };
/** Charts generated and written together, so memory stays flat for the large agency. */
const CHUNK = 1_000;
const OUT_OF_AREA_LEADS_PER_CHART = 0.05;
const TASKS_PER_CHART = 0.6;
const YIELD_EVERY = 20;

/**
 * Fills an empty agency with a synthetic, realistic book of business in one transaction. The generator's
 * seed is the size alone and its ids are keyed by the agency, so two agencies seeded alike hold the same rows
 * under ids of their own (an id names one agency's resource only), and an agency is always seeded with the same ids.
 */
export async function seedDemoAgency(db: Kysely<DB>, options: SeedOptions): Promise<SeedSummary> {
  const { agencyId, size } = options;
  const now = options.now ?? DEMO_REFERENCE_NOW;
  const patients = PATIENTS[size];
  const outbox = options.outbox ?? webhookOutbox;
  const command = {
    agencyId,
    operation: 'seedDemoAgency',
    actor: 'demo-seed',
    resourceType: null,
    phiMode: 'phi',
    outbox,
  } as const;
  try {
    return await db.transaction().execute((trx) =>
      runPlatformCommand(trx, command, async (store) => {
        await claimEmptyAgency(store);
        store.auditDetails({ size });
        const rng = new Random(`demo-agency:${size}`, agencyId);
        const area = await prepareServiceArea(store, rng, now);
        const { data: reference, drafts } = buildReferenceData(rng, now, area, patients);
        const writer = new DraftWriter(store);
        await writer.write(drafts);
        const ctx: VisitContext = {
          rng,
          now,
          area,
          reference,
          staff: staffByOffice(reference.clinicians),
          window: visitWindow(now),
        };
        await writeCharts(store, ctx, writer, patients);
        // The imports are platform commands of their own, each with its audit record, in this transaction.
        await seedHhvbp(trx, agencyId, size, outbox);
        await seedEra(trx, agencyId, now, outbox);
        await writer.write(await workingCollectionDrafts(store, patients, now, reference));
        return { agencyId, size, now: now.toISOString(), officesCreated: area.officesCreated, rows: writer.rows };
      }),
    );
  } catch (err) {
    if (err instanceof UnknownAgencyError) throw new DemoSeedError(`Agency ${agencyId} does not exist`);
    throw err;
  }
}

/** Chunk by chunk: while one chunk is being written, the next is generated. */
async function writeCharts(
  store: CommandStore,
  ctx: VisitContext,
  writer: DraftWriter,
  patients: number,
): Promise<void> {
  const farZips = outOfAreaZips(new Set(ctx.area.zips.map((z) => z.zip)));
  let writing: Promise<void> = Promise.resolve();
  for (let first = 0; first < patients; first += CHUNK) {
    const chunk = await buildChunk(ctx, { first, last: Math.min(first + CHUNK, patients), farZips });
    await writing;
    writing = writer.write(chunk).then(async () => {
      if (first === 0) await analyze(store, Object.keys(chunk));
    });
    // Awaited on the next turn; until then this keeps a failure from being reported as unhandled.
    writing.catch(() => undefined);
  }
  await writing;
}

async function claimEmptyAgency(store: CommandStore): Promise<void> {
  // The row lock makes a second seed of the same agency wait, then see the first one's patients.
  await store.lockAgency();
  const patient = await store.lookupFrom('patients').select('id').limit(1).executeTakeFirst();
  if (patient)
    throw new DemoSeedError(
      `Agency ${store.agencyId} already has patients; demo data is only seeded into an empty agency`,
    );
}

/**
 * Statistics for tables that were empty until this transaction. Without them the planner cannot tell the
 * (agency_id, id) key from the other agency_id-first indexes, and may check every foreign key through an
 * index that scans the whole agency: quadratic time over a large seed.
 */
async function analyze(store: CommandStore, tables: string[]): Promise<void> {
  await sql`analyze ${sql.join(tables.map((table) => sql.table(table)))}`.execute(
    store.unscoped('statistics are kept per table, for every agency'),
  );
}

/**
 * Charts first..last and their share of out-of-area leads. Yields to the event loop every few charts so
 * the previous chunk's inserts keep going meanwhile: PostgreSQL writes while this process generates.
 */
async function buildChunk(
  ctx: VisitContext,
  range: { first: number; last: number; farZips: string[] },
): Promise<Drafts> {
  const chunk = emptyDrafts();
  for (let index = range.first; index < range.last; index++) {
    addChart(ctx, chunk, index);
    if (index % YIELD_EVERY === 0) await setImmediate();
  }
  const leads = range.farZips.length > 0 ? Math.round((range.last - range.first) * OUT_OF_AREA_LEADS_PER_CHART) : 0;
  for (let n = 0; n < leads; n++) {
    const { lead, decision } = outOfAreaLead(ctx, range.farZips);
    addReferral(ctx, chunk, lead, decision);
  }
  return chunk;
}

/** A chart with its coverages, referral(s), intake(s), visits and maybe a task. */
function addChart(ctx: VisitContext, drafts: Drafts, index: number): void {
  const { rng, reference } = ctx;
  const chart = buildChart(ctx, index);
  const coverages = buildCoverages(rng, reference, chart);
  const decision = chartDecision(rng, chart);
  drafts.patients.push(chart.patient);
  drafts.episodes.push(...chart.episodes);
  // Coverage reaches the chart once a reviewer confirms it; until then it waits on the intake.
  if (decision.intakeStatus === 'accepted' || decision.intakeStatus === 'admitted') drafts.coverages.push(...coverages);
  const lead = chartLead(chart, coverages);
  const referral = addReferral(ctx, drafts, lead, decision);
  const resumption = resumptionDecision(chart);
  if (resumption) addReferral(ctx, drafts, { ...lead, referredAt: resumption.referredAt }, resumption.decision);
  const visits = buildVisits(ctx, chart);
  drafts.visits.push(...visits);
  drafts.physician_orders.push(...buildPhysicianOrders(ctx, chart));
  if (rng.chance(TASKS_PER_CHART)) drafts.tasks.push(buildTask(ctx, taskSubject(ctx, chart, referral, visits)));
}

const TASK_SUBJECTS: Weights<TaskSubject['type']> = { patient: 40, referral: 15, intake: 20, visit: 25 };
const TASK_SUBJECTS_WITHOUT_VISITS: Weights<TaskSubject['type']> = { patient: 40, referral: 15, intake: 20 };

function taskSubject(
  ctx: VisitContext,
  chart: Chart,
  referral: ReferralIds,
  visits: { id: string; created_at?: Date | string }[],
): TaskSubject {
  const since = chart.patient.created_at;
  const about = ctx.rng.weighted(visits.length > 0 ? TASK_SUBJECTS : TASK_SUBJECTS_WITHOUT_VISITS);
  if (about === 'visit') {
    const visit = ctx.rng.pick(visits);
    return { type: 'visit', id: visit.id, since: new Date(visit.created_at ?? since) };
  }
  const id = about === 'patient' ? chart.patient.id : about === 'referral' ? referral.referralId : referral.intakeId;
  return { type: about, id, since };
}
