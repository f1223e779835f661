import type { GovernedQuery } from './governed-query.js';
import { activeCensus, censusSummary } from './census.js';
import { intakeConversionBySource, referralsBySource } from './referral-sources.js';
import { referralPipeline } from './referral-pipeline.js';
import { visitsMissedOrLate } from './visit-timeliness.js';
import { visitStatusByYear } from './visit-status.js';
import { remittanceTotals, remittanceVarianceByPayer } from './remittance-variance.js';
import { awaitingSignatureOrders, unsignedOrdersByPhysician } from './unsigned-orders.js';

/** The governed queries approved in this deployment, in catalog order. */
export const GOVERNED_QUERIES: readonly GovernedQuery<any>[] = [
  activeCensus,
  censusSummary,
  referralsBySource,
  intakeConversionBySource,
  referralPipeline,
  visitsMissedOrLate,
  visitStatusByYear,
  unsignedOrdersByPhysician,
  awaitingSignatureOrders,
  remittanceVarianceByPayer,
  remittanceTotals,
];
