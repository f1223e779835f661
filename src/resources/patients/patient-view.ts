import type { components } from '../../generated/openapi.js';
import { ageLabel } from '../../domain/deidentify.js';
import type { PatientDetailRow, PatientSummaryRow } from './patient-repository.js';
import type { ChartCoverage, ChartEpisode } from './patient-tables.js';
import type { PolicyHolderJson } from '../intakes/intake-tables.js';

type Schemas = components['schemas'];

function displayName(p: {
  first_name: string;
  middle_name: string | null;
  last_name: string;
  suffix: string | null;
}): string {
  return [p.first_name, p.middle_name, p.last_name, p.suffix].filter(Boolean).join(' ');
}

function episode(e: ChartEpisode): Schemas['Episode'] {
  return { id: e.id, type: e.type, status: e.status, start_date: e.start_date, end_date: e.end_date };
}

const isActive = (e: ChartEpisode) => e.status === 'active';

export function patientSummary(row: PatientSummaryRow): Schemas['PatientSummary'] {
  const current = row.episodes.find(isActive);
  return {
    id: row.id,
    mrn: row.mrn,
    first_name: row.first_name,
    middle_name: row.middle_name,
    last_name: row.last_name,
    suffix: row.suffix,
    display_name: displayName(row),
    dob: row.dob,
    birth_year: row.dob === null ? null : Number(row.dob.slice(0, 4)),
    age: ageLabel(row.dob, new Date()),
    gender: row.gender,
    status: row.status,
    service_line: row.service_line,
    office_id: row.office_id,
    current_episode: current ? episode(current) : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function phones(row: PatientDetailRow): Schemas['Phone'][] {
  const numbers = [
    { number: row.primary_phone, type: 'primary' as const },
    { number: row.alt_phone, type: 'alternate' as const },
  ];
  return numbers.flatMap(({ number, type }) =>
    number ? [{ number, type, preferred: row.preferred_phone === type }] : [],
  );
}

/** The stored holder of a coverage held through someone else; none when the patient is the insured. */
function storedPolicyHolder(c: ChartCoverage): PolicyHolderJson | null {
  const self = c.relationship_to_insured === null || c.relationship_to_insured === '18';
  if (self && !c.insured_last_name) return null;
  return {
    relationship_to_insured: c.relationship_to_insured,
    first_name: c.insured_first_name,
    middle_name: c.insured_middle_name,
    last_name: c.insured_last_name,
    suffix: c.insured_suffix,
    dob: c.insured_dob,
    gender: c.insured_gender,
    address: {
      line1: c.insured_address_line_1,
      line2: c.insured_address_line_2,
      city: c.insured_city,
      state: c.insured_state,
      zip_code: c.insured_zip_code,
    },
  };
}

function coverage(c: ChartCoverage): Schemas['Coverage'] {
  return {
    id: c.id,
    payor_id: c.payor_id,
    payor_name: c.payor_name,
    plan_name: c.plan_name,
    policy_number: c.policy_number,
    group_number: c.group_number,
    effective_date: c.effective_date,
    termination_date: c.termination_date,
    coverage_order: c.coverage_order,
    is_primary: c.coverage_order === 0,
    policy_holder: storedPolicyHolder(c),
  };
}

export function patientDetail(row: PatientDetailRow): Schemas['PatientDetail'] {
  return {
    ...patientSummary(row),
    phones: phones(row),
    address: {
      line1: row.address_line_1,
      line2: row.address_line_2,
      city: row.city,
      state: row.state,
      zip_code: row.zip_code,
    },
    coordinates:
      row.latitude === null || row.longitude === null ? null : { latitude: row.latitude, longitude: row.longitude },
    coverages: row.coverages.map(coverage),
    episodes: row.episodes.map(episode),
    primary_physician_id: row.primary_physician_id,
  };
}
