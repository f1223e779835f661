import type { components } from '../generated/openapi.js';
import { resourceNotFound, type Handler } from './handler.js';
import { ageLabel, birthYear } from '../domain/deidentify.js';
import { patientIdFilter, phiView, policyHolderFor, type PhiView } from './phi-view.js';
import { findPatientDetail, listPatientSummaries, type PatientDetailRow, type PatientSummaryRow } from '../db/repositories/patients.js';
import type { ChartCoverage, ChartEpisode, PolicyHolderJson } from '../db/tables/clinical.js';

type Schemas = components['schemas'];

function displayName(p: { first_name: string; middle_name: string | null; last_name: string; suffix: string | null }): string {
  return [p.first_name, p.middle_name, p.last_name, p.suffix].filter(Boolean).join(' ');
}

function episode(view: PhiView, e: ChartEpisode): Schemas['Episode'] {
  return { id: e.id, type: e.type, status: e.status, start_date: view.date(e.start_date), end_date: view.date(e.end_date) };
}

const isActive = (e: ChartEpisode) => e.status === 'active';

function summary(view: PhiView, row: PatientSummaryRow): Schemas['PatientSummary'] {
  const asOf = new Date();
  const current = row.episodes.find(isActive);
  return {
    id: view.patientId(row.id)!,
    mrn: view.identifying(row.mrn),
    first_name: view.identifying(row.first_name),
    middle_name: view.identifying(row.middle_name),
    last_name: view.identifying(row.last_name),
    suffix: view.identifying(row.suffix),
    display_name: view.identifying(displayName(row)),
    dob: view.identifying(row.dob),
    birth_year: view.noPhi ? birthYear(row.dob, asOf) : row.dob === null ? null : Number(row.dob.slice(0, 4)),
    age: ageLabel(row.dob, asOf),
    gender: row.gender,
    status: row.status,
    service_line: row.service_line,
    office_id: row.office_id,
    current_episode: current ? episode(view, current) : null,
    created_at: view.instant(row.created_at),
    updated_at: view.instant(row.updated_at),
  };
}

function phones(view: PhiView, row: PatientDetailRow): Schemas['Phone'][] {
  if (view.noPhi) return [];
  const numbers = [
    { number: row.primary_phone, type: 'primary' as const },
    { number: row.alt_phone, type: 'alternate' as const },
  ];
  return numbers.flatMap(({ number, type }) => (number ? [{ number, type, preferred: row.preferred_phone === type }] : []));
}

function address(view: PhiView, a: Schemas['Address']): Schemas['Address'] {
  return { line1: view.identifying(a.line1), line2: view.identifying(a.line2), city: view.identifying(a.city), state: a.state, zip_code: view.zip(a.zip_code ?? null) };
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
    address: { line1: c.insured_address_line_1, line2: c.insured_address_line_2, city: c.insured_city, state: c.insured_state, zip_code: c.insured_zip_code },
  };
}

function coverage(view: PhiView, c: ChartCoverage): Schemas['Coverage'] {
  return {
    id: c.id,
    payor_id: c.payor_id,
    payor_name: c.payor_name,
    plan_name: c.plan_name,
    policy_number: view.identifying(c.policy_number),
    group_number: view.identifying(c.group_number),
    effective_date: view.date(c.effective_date),
    termination_date: view.date(c.termination_date),
    coverage_order: c.coverage_order,
    is_primary: c.coverage_order === 0,
    policy_holder: policyHolderFor(view, storedPolicyHolder(c)),
  };
}

export const listPatients: Handler<'listPatients'> = async (ctx) => {
  const { status, service_line, office_id, updated_since } = ctx.query;
  const { rows, meta } = await listPatientSummaries(ctx.db, ctx.principal.agencyId, { status, service_line, office_id, updated_since }, ctx.query, ctx.cursors);
  const view = await phiView(ctx, rows.map((r) => r.id));
  ctx.audit.resourceIds = rows.map((r) => r.id);
  return { data: rows.map((row) => summary(view, row)), meta };
};

export const getPatient: Handler<'getPatient'> = async (ctx) => {
  const agencyId = ctx.principal.agencyId;
  const id = (await patientIdFilter(ctx, ctx.params.id))!;
  const row = await findPatientDetail(ctx.db, agencyId, id);
  if (!row) throw resourceNotFound('patient', ctx.params.id);
  const view = await phiView(ctx, [id]);
  ctx.audit.resourceIds = [id];
  const coordinates = row.latitude === null || row.longitude === null ? null : { latitude: row.latitude, longitude: row.longitude };
  return {
    data: {
      ...summary(view, row),
      phones: phones(view, row),
      address: address(view, { line1: row.address_line_1, line2: row.address_line_2, city: row.city, state: row.state, zip_code: row.zip_code }),
      coordinates: view.identifying(coordinates),
      coverages: row.coverages.map((c) => coverage(view, c)),
      episodes: row.episodes.map((e) => episode(view, e)),
      primary_physician_id: row.primary_physician_id,
    },
  };
};
