import { resourceNotFound, type Handler } from '../handler.js';
import { findIntakeDetail, listIntakeSummaries } from './intake-repository.js';
import { intakeDetail, intakeSummary } from './intake-view.js';
import { referralDocumentIds } from '../referrals/referral-repository.js';
import { patientIdFilter } from '../phi-view.js';

export const listIntakes: Handler<'listIntakes'> = async (ctx) => {
  const { query, store } = ctx;
  const filters = { ...query, patient_id: await patientIdFilter(store, query.patient_id) };
  const { rows, meta } = await listIntakeSummaries(store, filters, query, ctx.cursors);
  return { data: rows.map(intakeSummary), meta };
};

export const getIntake: Handler<'getIntake'> = async (ctx) => {
  const { store, params } = ctx;
  const row = await findIntakeDetail(store, params.id);
  if (!row) throw resourceNotFound('intake', params.id);
  const documentIds = await referralDocumentIds(store, row.referral_id);
  return { data: intakeDetail(row, documentIds) };
};
