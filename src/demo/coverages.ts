import type { PayorType } from '../db/tables/agency-directory.js';
import type { Gender, RelationshipToInsured, ServiceLine } from '../db/tables/tenant-row.js';
import type { PendingCoverageJson } from '../resources/intakes/intake-tables.js';
import { addDays, isoDay } from './calendar.js';
import type { Chart } from './charts.js';
import type { Draft } from './drafts.js';
import { birthDate, firstName } from './people.js';
import type { Random, Weights } from './random.js';
import type { PayorRef, ReferenceData } from './reference-data.js';

export type CoverageDraft = Draft<'coverages'> & { id: string };

const PRIMARY_PAYOR: Record<ServiceLine, Weights<PayorType>> = {
  home_health: { medicare: 55, medicare_advantage: 25, medicaid: 8, managed_medicaid: 4, commercial: 8 },
  // Hospice is paid by Original Medicare even for Medicare Advantage members.
  hospice: { medicare: 85, medicaid: 8, managed_medicaid: 2, commercial: 5 },
  private_duty: { private_pay: 50, medicaid: 20, managed_medicaid: 10, commercial: 20 },
};

const SECONDARY_PAYOR = { medicaid: 40, commercial: 60 };

/** Coverage through someone else's plan, by X12 1069 code. */
const OTHER_HOLDER: Weights<Exclude<RelationshipToInsured, '18'>> = {
  '01': 65,
  '53': 10,
  '19': 5,
  '20': 10,
  G8: 7,
  '21': 3,
};

const MBI_LETTERS = 'ACDEFGHJKMNPQRTUVWXY';

/** Same layout as a Medicare Beneficiary Identifier (letters without S, L, O, I, B, Z); synthetic. */
function mbi(rng: Random): string {
  const letter = () => rng.pick([...MBI_LETTERS]);
  const either = () => (rng.chance(0.5) ? letter() : String(rng.int(0, 9)));
  const digit = () => String(rng.int(0, 9));
  return [
    String(rng.int(1, 9)),
    letter(),
    either(),
    digit(),
    letter(),
    either(),
    digit(),
    letter(),
    letter(),
    digit(),
    digit(),
  ].join('');
}

function memberNumbers(rng: Random, payor: PayorRef): { policy_number: string | null; group_number: string | null } {
  if (payor.type === 'private_pay') return { policy_number: null, group_number: null };
  if (payor.type === 'medicare') return { policy_number: mbi(rng), group_number: null };
  if (payor.type === 'medicaid')
    return { policy_number: `${rng.pick(['MC', 'MA', 'MD'])}${rng.digits(8)}`, group_number: null };
  const initials =
    payor.name
      .match(/\b[A-Z]/g)
      ?.join('')
      .slice(0, 3) ?? 'MBR';
  return { policy_number: `${initials}${rng.digits(9)}`, group_number: rng.digits(6) };
}

function payorOf(rng: Random, reference: ReferenceData, weights: Weights<PayorType>): PayorRef {
  const type = rng.weighted(weights);
  return rng.pick(reference.payors.filter((p) => p.type === type));
}

/** Primary coverage, and for a third of patients on a public primary a Medicaid or supplemental secondary. */
export function buildCoverages(rng: Random, reference: ReferenceData, chart: Chart): CoverageDraft[] {
  const primary = payorOf(rng, reference, PRIMARY_PAYOR[chart.line]);
  const payors = [primary];
  if (primary.type !== 'private_pay' && rng.chance(0.35)) payors.push(payorOf(rng, reference, SECONDARY_PAYOR));
  return payors.map((payor, coverage_order) => coverageRow(rng, chart, payor, coverage_order));
}

function coverageRow(rng: Random, chart: Chart, payor: PayorRef, coverage_order: number): CoverageDraft {
  const { patient } = chart;
  const throughSomeoneElse = (payor.type === 'commercial' || payor.type === 'medicare_advantage') && rng.chance(0.35);
  // An old secondary the referral still lists, ended before the referral.
  const ended =
    coverage_order > 0 ? rng.maybe(0.08, () => addDays(chart.timeline.referredAt, -rng.int(30, 400))) : null;
  const asOf = ended ?? chart.timeline.referredAt;
  return {
    id: rng.id('cov'),
    patient_id: patient.id,
    payor_id: payor.id,
    plan_name: payor.type === 'medicare' ? 'Medicare Part A' : payor.name,
    ...memberNumbers(rng, payor),
    effective_date:
      payor.type === 'medicare'
        ? medicareStart(patient.dob ?? null, asOf)
        : `${asOf.getUTCFullYear() - rng.int(1, 6)}-01-01`,
    termination_date: ended && isoDay(ended),
    coverage_order,
    relationship_to_insured: throughSomeoneElse ? rng.weighted(OTHER_HOLDER) : '18',
    ...(throughSomeoneElse ? policyHolder(rng, chart) : {}),
    created_at: patient.created_at,
    updated_at: patient.created_at,
  };
}

/** Medicare starts the month a person turns 65; younger beneficiaries qualified through disability. */
function medicareStart(dob: string | null, asOf: Date): string {
  const at65 = dob ? `${Number(dob.slice(0, 4)) + 65}-${dob.slice(5, 7)}-01` : null;
  return at65 && at65 <= isoDay(asOf) ? at65 : `${asOf.getUTCFullYear() - 2}-01-01`;
}

function policyHolder(rng: Random, chart: Chart): Partial<CoverageDraft> {
  const { patient } = chart;
  const holderGender: Gender = patient.gender === 'female' ? 'male' : 'female';
  return {
    insured_first_name: firstName(rng, holderGender),
    insured_middle_name: null,
    insured_last_name: patient.last_name,
    insured_suffix: null,
    insured_dob: birthDate(rng, chart.timeline.referredAt, 45, 90),
    insured_gender: holderGender,
    insured_address_line_1: patient.address_line_1,
    insured_address_line_2: patient.address_line_2,
    insured_city: patient.city,
    insured_state: patient.state,
    insured_zip_code: patient.zip_code,
  };
}

/**
 * The coverages as the referral sent them, awaiting (or past) the reviewer's confirmation. With
 * `holderNameMissing`, a dependent coverage arrives without the policy holder's name, as the intake allows.
 */
export function pendingCoverages(
  coverages: CoverageDraft[],
  confirmed: boolean,
  holderNameMissing: boolean,
): PendingCoverageJson[] {
  return coverages.map((c) => ({
    payor_id: c.payor_id ?? null,
    plan_name: c.plan_name ?? null,
    other_insurance_name: null,
    policy_number: c.policy_number ?? null,
    group_number: c.group_number ?? null,
    effective_date: c.effective_date ?? null,
    termination_date: c.termination_date ?? null,
    coverage_order: c.coverage_order,
    policy_holder:
      c.relationship_to_insured && c.relationship_to_insured !== '18'
        ? {
            relationship_to_insured: c.relationship_to_insured,
            first_name: holderNameMissing ? null : (c.insured_first_name ?? null),
            middle_name: null,
            last_name: holderNameMissing ? null : (c.insured_last_name ?? null),
            suffix: null,
            dob: c.insured_dob ?? null,
            gender: c.insured_gender ?? null,
            address: {
              line1: c.insured_address_line_1 ?? null,
              line2: c.insured_address_line_2 ?? null,
              city: c.insured_city ?? null,
              state: c.insured_state ?? null,
              zip_code: c.insured_zip_code ?? null,
            },
          }
        : null,
    policy_holder_confirmed: confirmed,
  }));
}

export function hasDependentCoverage(coverages: CoverageDraft[]): boolean {
  return coverages.some((c) => c.relationship_to_insured && c.relationship_to_insured !== '18');
}
