import { resourceNotFound, type Handler } from '../handler.js';
import { findPatientDetail, listPatientSummaries } from './patient-repository.js';
import { patientDetail, patientSummary } from './patient-view.js';

export const listPatients: Handler<'listPatients'> = async (ctx) => {
  const { status, service_line, office_id, updated_since } = ctx.query;
  const { rows, meta } = await listPatientSummaries(
    ctx.store,
    { status, service_line, office_id, updated_since },
    ctx.query,
    ctx.cursors,
  );
  return { data: rows.map(patientSummary), meta };
};

export const getPatient: Handler<'getPatient'> = async (ctx) => {
  const row = await findPatientDetail(ctx.store, ctx.params.id);
  if (!row) throw resourceNotFound('patient', ctx.params.id);
  return { data: patientDetail(row) };
};
