import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.js';
import type { CommandStore, EventOutbox } from '../db/tenant-store.js';
import { runPlatformCommand } from '../platform-commands/platform-command.js';
import type { PayorType } from '../db/tables/agency-directory.js';
import { importEraFile, textSource } from '../resources/remittances/era-import.js';
import { interchangeText, type WrittenClaim, type WrittenPayment } from './era-835-writer.js';
import { Random } from './random.js';

/**
 * A few weeks of ERA payments for the demo agency, written as the payers' 835 files and imported through the admin
 * import's own path: weekly Medicare ACH payments (CO-45, sequestration CO-253, a denial, a reversal and its
 * correction, interest and a recoupment at provider level), a Medicare Advantage check with patient responsibility,
 * and a recoupment-only debit. Claims bill the agency's own patients, so most match; one misspelled name and one
 * unknown account show the other match results. Older payments are moved along to posted and reconciled.
 */

const DAY_MS = 86_400_000;
const PAYEE = { name: 'DEMO HOME HEALTH', npi: '1234567893' };
const MEDICARE = { name: 'MEDICARE HOME HEALTH MAC', id: '11001', originator: '1111111111' };
const ADVANTAGE = { name: 'SUMMIT SENIOR ADVANTAGE', id: 'SSA77', originator: '1620345678' };

interface Billed {
  id: string;
  mrn: string;
  firstName: string;
  lastName: string;
  memberId: string | null;
}

const day = (now: Date, days: number) => new Date(now.getTime() + days * DAY_MS).toISOString().slice(0, 10);
const upper = (name: string) => name.normalize('NFKD').replace(/\p{M}/gu, '').toUpperCase();

/** Home-health patients whose primary coverage is of `types`, in MRN order. */
async function billedPatients(store: CommandStore, types: PayorType[], count: number): Promise<Billed[]> {
  const rows = await store
    .lookupFrom('patients')
    .innerJoin('coverages', (join) =>
      join.on(store.ofAgency('coverages')).onRef('coverages.patient_id', '=', 'patients.id'),
    )
    .innerJoin('payors', (join) => join.on(store.ofAgency('payors')).onRef('payors.id', '=', 'coverages.payor_id'))
    .select(['patients.id', 'patients.mrn', 'patients.first_name', 'patients.last_name', 'coverages.policy_number'])
    .where('patients.service_line', '=', 'home_health')
    .where('patients.mrn', 'is not', null)
    .where('coverages.coverage_order', '=', 0)
    .where('payors.payor_type', 'in', types)
    .orderBy('patients.mrn')
    .limit(count)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    mrn: r.mrn!,
    firstName: upper(r.first_name),
    lastName: upper(r.last_name),
    memberId: r.policy_number,
  }));
}

/** A 30-day home health period paid by Medicare: the allowed amount less 2% sequestration. */
function medicareClaim(rng: Random, patient: Billed, from: string, claimNumber: string): WrittenClaim {
  const allowed = rng.int(1_650_00, 2_650_00);
  const charged = Math.round((allowed * rng.int(125, 160)) / 10_000) * 100;
  const sequestration = Math.round(allowed * 0.02);
  const to = new Date(Date.parse(from) + 29 * DAY_MS).toISOString().slice(0, 10);
  return {
    pcn: `${patient.mrn}-${from.slice(2, 4)}${from.slice(5, 7)}`,
    statusCode: '1',
    chargedCents: charged,
    paidCents: allowed - sequestration,
    payerClaimNumber: claimNumber,
    filingIndicator: 'MA',
    patient: { lastName: patient.lastName, firstName: patient.firstName, memberId: patient.memberId },
    from,
    to,
    allowedCents: allowed,
    adjustments: [
      ['CO', '45', charged - allowed],
      ['CO', '253', sequestration],
    ],
  };
}

function denied(claim: WrittenClaim): WrittenClaim {
  return {
    ...claim,
    statusCode: '4',
    paidCents: 0,
    allowedCents: undefined,
    adjustments: [['CO', '50', claim.chargedCents]],
  };
}

/** The reversal of an earlier payment of `claim` and its correction, paid a little more. */
function reversed(claim: WrittenClaim, correctionNumber: string): WrittenClaim[] {
  const reversal: WrittenClaim = {
    ...claim,
    statusCode: '22',
    chargedCents: -claim.chargedCents,
    paidCents: -claim.paidCents,
    allowedCents: undefined,
    adjustments: claim.adjustments.map(([, reason, cents]) => ['CR', reason, -cents]),
  };
  const allowed = claim.allowedCents! + 84_00;
  const sequestration = Math.round(allowed * 0.02);
  const correction: WrittenClaim = {
    ...claim,
    payerClaimNumber: correctionNumber,
    originalClaimNumber: claim.payerClaimNumber,
    paidCents: allowed - sequestration,
    allowedCents: allowed,
    adjustments: [
      ['CO', '45', claim.chargedCents - allowed],
      ['CO', '253', sequestration],
    ],
  };
  return [reversal, correction];
}

function advantageClaim(rng: Random, patient: Billed, from: string, claimNumber: string): WrittenClaim {
  const charged = rng.int(9, 16) * 100_00;
  const allowed = Math.round(charged * 0.62);
  const copay = rng.pick([0, 20_00, 40_00]);
  const deductible = rng.chance(0.3) ? 50_00 : 0;
  const to = new Date(Date.parse(from) + 13 * DAY_MS).toISOString().slice(0, 10);
  const adjustments: [string, string, number][] = [['CO', '45', charged - allowed]];
  if (deductible) adjustments.push(['PR', '1', deductible]);
  if (copay) adjustments.push(['PR', '3', copay]);
  return {
    pcn: `${patient.mrn}-${from.slice(2, 4)}${from.slice(5, 7)}`,
    statusCode: '1',
    chargedCents: charged,
    paidCents: allowed - copay - deductible,
    patientResponsibilityCents: copay + deductible,
    payerClaimNumber: claimNumber,
    filingIndicator: '16',
    patient: { lastName: patient.lastName, firstName: patient.firstName, memberId: patient.memberId },
    from,
    to,
    adjustments,
  };
}

function payment(
  controlNumber: string,
  payer: WrittenPayment['payer'],
  method: WrittenPayment['method'],
  paymentDate: string,
  trace: string,
  claims: WrittenClaim[],
  plb: WrittenPayment['providerAdjustments'] = [],
): WrittenPayment {
  const production = day(new Date(paymentDate), -2);
  return {
    controlNumber,
    method,
    paymentDate,
    productionDate: production,
    traceNumber: trace,
    payer,
    payee: PAYEE,
    claims: () => claims,
    providerAdjustments: plb,
  };
}

function demoPayments(
  rng: Random,
  medicare: Billed[],
  advantage: Billed[],
  now: Date,
): { file: string; payments: WrittenPayment[]; date: string }[] {
  const period = (days: number) => `${day(now, days).slice(0, 8)}01`;
  const weeks = [-21, -14, -7];
  let claimNumber = 22261_000_000;
  const next = () => String(++claimNumber);
  const perWeek = Math.max(1, Math.floor(medicare.length / weeks.length));
  const files = weeks.map((offset, week) => {
    const claims = medicare
      .slice(week * perWeek, (week + 1) * perWeek)
      .map((p) => medicareClaim(rng, p, period(offset - 40), next()));
    const plb: WrittenPayment['providerAdjustments'] = [];
    if (week === 0 && claims.length > 1) claims[1] = denied(claims[1]);
    if (week === 1 && claims.length > 0) {
      claims.push(...reversed(medicareClaim(rng, medicare[week * perWeek], period(offset - 70), next()), next()));
      plb.push(['L6', claims[0].payerClaimNumber, -rng.int(3_00, 19_99)]);
    }
    if (week === 2) plb.push(['WO', next(), rng.int(120_00, 380_00)]);
    const date = day(now, offset);
    return {
      file: `medicare-era-${date}.835`,
      date,
      payments: [
        payment(
          '0001',
          MEDICARE,
          'ACH',
          date,
          `EFT${date.replaceAll('-', '')}${String(week + 1).padStart(4, '0')}`,
          claims,
          plb,
        ),
      ],
    };
  });
  const advantageClaims = advantage.map((p) => advantageClaim(rng, p, period(-35), next()));
  if (advantageClaims.length > 1)
    advantageClaims[0].patient = {
      ...advantageClaims[0].patient,
      lastName: `${advantageClaims[0].patient.lastName}E`,
      memberId: `X${rng.digits(9)}`,
    };
  if (advantageClaims.length > 2) {
    const stranger = advantageClaims[1];
    stranger.pcn = `W${rng.digits(7)}-${stranger.pcn.split('-')[1]}`;
    stranger.patient = { ...stranger.patient, memberId: `X${rng.digits(9)}` };
  }
  const checkDate = day(now, -10);
  files.push({
    file: `summit-advantage-era-${checkDate}.835`,
    date: checkDate,
    payments: [payment('2001', ADVANTAGE, 'CHK', checkDate, `00${rng.digits(8)}`, advantageClaims)],
  });
  const recoupDate = day(now, -3);
  files.push({
    file: `medicare-era-${recoupDate}.835`,
    date: recoupDate,
    payments: [
      payment(
        '0001',
        MEDICARE,
        'ACH',
        recoupDate,
        `EFT${recoupDate.replaceAll('-', '')}0009`,
        [],
        [['WO', next(), rng.int(90_00, 240_00)]],
      ),
    ],
  });
  return files;
}

/** Imports the demo's 835 files for the agency, then moves the older payments along as an agency's posting would. */
export async function seedEra(
  trx: Transaction<DB>,
  agencyId: string,
  now: Date,
  outbox: EventOutbox | undefined,
): Promise<void> {
  const rng = new Random('demo-era');
  let control = 4700;
  const command = {
    agencyId,
    operation: 'seedDemoEra',
    actor: 'demo-seed',
    resourceType: 'remittance',
    phiMode: 'phi',
    outbox,
  } as const;
  await runPlatformCommand(trx, command, async (store) => {
    const medicare = await billedPatients(store, ['medicare'], 18);
    const advantage = await billedPatients(store, ['medicare_advantage'], 6);
    const imported: string[] = [];
    for (const { file, payments, date } of demoPayments(rng, medicare, advantage, now)) {
      const text = interchangeText(
        { sender: payments[0].payer.id, receiver: 'DEMOHOMEHEALTH', date, controlNumber: ++control },
        payments,
      );
      imported.push((await importEraFile(store, textSource(file, text))).eraFileId);
    }
    const moved = async (eraFileId: string, status: 'posted' | 'reconciled') =>
      store.updateTable('remittances').set({ status, updated_at: now }).where('era_file_id', '=', eraFileId).execute();
    await moved(imported[0], 'reconciled');
    await moved(imported[1], 'posted');
  });
}
