import { resourceNotFound, type Handler } from '../handler.js';
import { findIntakeDetail, listIntakeSummaries } from './intake-repository.js';
import { intakeDetail, intakeSummary } from './intake-view.js';
import { referralDocumentIds } from '../referrals/referral-repository.js';

export const listIntakes: Handler<'listIntakes'> = async (ctx) => {
  const { query, store } = ctx;
  const { rows, meta } = await listIntakeSummaries(store, query, query, ctx.cursors);
  return { data: rows.map(intakeSummary), meta };
};

export const getIntake: Handler<'getIntake'> = async (ctx) => {
  const { store, params } = ctx;
  const row = await findIntakeDetail(store, params.id);
  if (!row) throw resourceNotFound('intake', params.id);
  const documentIds = await referralDocumentIds(store, row.referral_id);
  return { data: intakeDetail(row, documentIds) };
};
