import type { GovernedQuery } from './governed-query.js';
import { activeCensus } from './census.js';
import { intakeConversionBySource, referralsBySource } from './referral-sources.js';
import { visitsMissedOrLate } from './visit-timeliness.js';
import { remittanceVarianceByPayer } from './remittance-variance.js';
import { awaitingSignatureOrders, unsignedOrdersByPhysician } from './unsigned-orders.js';

/** The governed queries approved in this deployment, in catalog order. */
export const GOVERNED_QUERIES: readonly GovernedQuery<any>[] = [
  activeCensus,
  referralsBySource,
  intakeConversionBySource,
  visitsMissedOrLate,
  unsignedOrdersByPhysician,
  awaitingSignatureOrders,
  remittanceVarianceByPayer,
];
