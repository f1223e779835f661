import type { components } from '../../generated/openapi.js';
import type { RelationshipToInsured } from '../../db/tables/tenant-row.js';
import type { PendingCoverageJson, PolicyHolderJson } from '../../resources/intakes/intake-tables.js';
import { invalidInput } from '../../shared/platform-error.js';

type InsuranceObject = components['schemas']['InsuranceObject'];

interface InsuranceFields {
  insurance?: string | InsuranceObject;
  insurance_name?: string;
  payor_id?: string;
}

export interface PendingInsurance {
  coverages: PendingCoverageJson[];
  /** `policy_holder_name` when a dependent's coverage came without the holder's first and last name. */
  missing: string[];
}

/** X12 element 1069 by name; the codes themselves are accepted too. */
const RELATIONSHIP_CODES: Record<string, RelationshipToInsured> = {
  self: '18',
  spouse: '01',
  child: '19',
  employee: '20',
  life_partner: '53',
  other: 'G8',
  unknown: '21',
};
const CODES = new Set<string>(Object.values(RELATIONSHIP_CODES));
const SELF: RelationshipToInsured = '18';

const invalid = (field: string, message: string) => invalidInput(`insurance.${field}`, message);

const clean = (text: string | undefined) => text?.trim() || null;

/** A code (18, 01, 19, 20, 53, G8, 21; any case) or its name (self, spouse, child, employee, life partner, other, unknown). */
function relationshipCode(value: string): RelationshipToInsured {
  const code = value.trim().toUpperCase();
  if (CODES.has(code)) return code as RelationshipToInsured;
  const byName =
    RELATIONSHIP_CODES[
      value
        .trim()
        .toLowerCase()
        .replace(/[\s-]+/g, '_')
    ];
  if (byName) return byName;
  const accepted = Object.entries(RELATIONSHIP_CODES)
    .map(([name, c]) => `${c} ${name}`)
    .join(', ');
  throw invalid(
    'relationship_to_insured',
    `relationship_to_insured "${value}" is not an X12 1069 relationship; send a code or its name: ${accepted}.`,
  );
}

/** coverage_order 0 is primary; either one is derived from the other, and the two must agree when both are sent. */
function coverageOrder({ coverage_order: order, is_primary: primary }: InsuranceObject): number {
  if (order !== undefined && primary !== undefined && (order === 0) !== primary) {
    throw invalid(
      'is_primary',
      `is_primary ${primary} contradicts coverage_order ${order} (0 is primary); send one of the two.`,
    );
  }
  return order ?? (primary === false ? 1 : 0);
}

const HOLDER_FIELDS = [
  'insured_first_name',
  'insured_last_name',
  'insured_middle_name',
  'insured_suffix',
  'insured_dob',
  'insured_gender',
  'insured_address_line_1',
  'insured_address_line_2',
  'insured_city',
  'insured_state',
  'insured_zip_code',
] as const;

/** Present for coverage through someone else's plan, or when any policy-holder field was sent. */
function policyHolder(insurance: InsuranceObject): PolicyHolderJson | null {
  const relationship =
    insurance.relationship_to_insured === undefined ? null : relationshipCode(insurance.relationship_to_insured);
  const sentHolder = HOLDER_FIELDS.some((field) => insurance[field] !== undefined);
  if (!sentHolder && (relationship === null || relationship === SELF)) return null;
  return {
    relationship_to_insured: relationship,
    first_name: clean(insurance.insured_first_name),
    middle_name: clean(insurance.insured_middle_name),
    last_name: clean(insurance.insured_last_name),
    suffix: clean(insurance.insured_suffix),
    dob: insurance.insured_dob ?? null,
    gender: insurance.insured_gender ?? null,
    address: {
      line1: clean(insurance.insured_address_line_1),
      line2: clean(insurance.insured_address_line_2),
      city: clean(insurance.insured_city),
      state: insurance.insured_state?.toUpperCase() ?? null,
      zip_code: clean(insurance.insured_zip_code),
    },
  };
}

function coverage(planName: string | null, payorId: string | null, order = 0): PendingCoverageJson {
  return {
    payor_id: payorId,
    plan_name: planName,
    other_insurance_name: null,
    policy_number: null,
    group_number: null,
    effective_date: null,
    termination_date: null,
    coverage_order: order,
    policy_holder: null,
    policy_holder_confirmed: false,
  };
}

/** The referral's top-level payor_id is the primary coverage's payor; an insurance object may not name another. */
function coveragePayor(insurance: InsuranceObject, order: number, primaryPayorId: string | undefined): string | null {
  if (order !== 0 || !primaryPayorId) return insurance.payor_id ?? null;
  if (insurance.payor_id && insurance.payor_id !== primaryPayorId) {
    throw invalid(
      'payor_id',
      `insurance.payor_id ${insurance.payor_id} disagrees with payor_id ${primaryPayorId}, the primary coverage's payor.`,
    );
  }
  return primaryPayorId;
}

function fromObject(insurance: InsuranceObject, fields: InsuranceFields): PendingCoverageJson {
  const { effective_date: effective, termination_date: termination } = insurance;
  if (effective && termination && termination < effective) {
    throw invalid('termination_date', `termination_date ${termination} is before effective_date ${effective}.`);
  }
  const order = coverageOrder(insurance);
  return {
    ...coverage(clean(fields.insurance_name), coveragePayor(insurance, order, fields.payor_id), order),
    other_insurance_name: clean(insurance.other_insurance_name),
    policy_number: clean(insurance.policy_number),
    group_number: clean(insurance.group_number),
    effective_date: effective ?? null,
    termination_date: termination ?? null,
    policy_holder: policyHolder(insurance),
  };
}

function isDependentWithoutHolderName({ policy_holder: holder }: PendingCoverageJson): boolean {
  return (
    holder !== null &&
    holder.relationship_to_insured !== null &&
    holder.relationship_to_insured !== SELF &&
    !(holder.first_name && holder.last_name)
  );
}

/** From the plain fields: a bare insurance string (or insurance_name) is the plan name, payor_id its payor. */
function primaryFromFields(fields: InsuranceFields): PendingCoverageJson[] {
  const planName =
    (typeof fields.insurance === 'string' ? clean(fields.insurance) : null) ?? clean(fields.insurance_name);
  return planName || fields.payor_id ? [coverage(planName, fields.payor_id ?? null)] : [];
}

/** An insurance object sent as secondary next to a top-level payor_id: that payor is the primary coverage. */
function withObject(insurance: InsuranceObject, fields: InsuranceFields): PendingCoverageJson[] {
  const sent = fromObject(insurance, fields);
  return sent.coverage_order > 0 && fields.payor_id ? [coverage(null, fields.payor_id), sent] : [sent];
}

/** The insurance rule: coverage as sent, pending a reviewer's confirmation (never written to the chart here). */
export function pendingInsurance(fields: InsuranceFields): PendingInsurance {
  const coverages =
    typeof fields.insurance === 'object' ? withObject(fields.insurance, fields) : primaryFromFields(fields);
  return { coverages, missing: coverages.some(isDependentWithoutHolderName) ? ['policy_holder_name'] : [] };
}
