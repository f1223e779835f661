import { formatCents } from '../domain/era/era-values.js';

/**
 * Writes synthetic X12 835 (005010X221A1) files as payers send them, for the demo seed and the bench: the envelope with
 * its counts and control numbers, and each payment's BPR02 computed from its claims and provider-level adjustments.
 */

export interface WrittenClaim {
  /** CLP01: the agency's patient control number. */
  pcn: string;
  statusCode: string;
  chargedCents: number;
  paidCents: number;
  patientResponsibilityCents?: number;
  payerClaimNumber: string;
  filingIndicator: string;
  patient: { lastName: string; firstName: string; memberId: string | null };
  from: string;
  to: string;
  /** Claim-level CAS: [group, reason, cents]. */
  adjustments: [string, string, number][];
  /** REF*F8 of a correction. */
  originalClaimNumber?: string;
  allowedCents?: number;
}

export interface WrittenPayment {
  controlNumber: string;
  method: 'ACH' | 'CHK' | 'NON';
  /** YYYY-MM-DD. */
  paymentDate: string;
  productionDate: string;
  traceNumber: string;
  payer: { name: string; id: string; originator: string };
  payee: { name: string; npi: string };
  /** Called twice: once for BPR02, once to write them, so that a payment of any size streams. */
  claims: () => Iterable<WrittenClaim>;
  /** PLB pairs: [reason, reference, cents]. */
  providerAdjustments: [string, string, number][];
}

interface WrittenInterchange {
  sender: string;
  receiver: string;
  /** YYYY-MM-DD. */
  date: string;
  controlNumber: number;
}

const compact = (date: string) => date.replaceAll('-', '');
const money = formatCents;

function claimSegments(claim: WrittenClaim): string[] {
  const { patient } = claim;
  const responsibility = claim.patientResponsibilityCents === undefined ? '' : money(claim.patientResponsibilityCents);
  const cas = new Map<string, string[]>();
  for (const [group, reason, cents] of claim.adjustments)
    cas.set(group, [...(cas.get(group) ?? []), reason, money(cents), '']);
  return [
    `CLP*${claim.pcn}*${claim.statusCode}*${money(claim.chargedCents)}*${money(claim.paidCents)}*${responsibility}*${claim.filingIndicator}*${claim.payerClaimNumber}*32*1`,
    ...[...cas].map(([group, triplets]) => `CAS*${group}*${triplets.join('*').replace(/\*+$/, '')}`),
    `NM1*QC*1*${patient.lastName}*${patient.firstName}****${patient.memberId ? `MI*${patient.memberId}` : ''}`.replace(
      /\*+$/,
      '',
    ),
    ...(claim.originalClaimNumber ? [`REF*F8*${claim.originalClaimNumber}`] : []),
    `DTM*232*${compact(claim.from)}`,
    `DTM*233*${compact(claim.to)}`,
    ...(claim.allowedCents === undefined ? [] : [`AMT*AU*${money(claim.allowedCents)}`]),
  ];
}

/** One ST/SE transaction, segment by segment (without terminators). */
function* paymentSegments(payment: WrittenPayment): Generator<string> {
  let paid = 0;
  for (const claim of payment.claims()) paid += claim.paidCents;
  const amount = paid - payment.providerAdjustments.reduce((sum, [, , cents]) => sum + cents, 0);
  const bank =
    payment.method === 'ACH' ? 'CCP*01*011000015*DA*123456789*1111111111**01*021000021*DA*987654321' : '**********';
  const header = [
    `ST*835*${payment.controlNumber}`,
    `BPR*I*${money(Math.abs(amount))}*${amount < 0 ? 'D' : 'C'}*${payment.method}*${bank}*${compact(payment.paymentDate)}`,
    `TRN*1*${payment.traceNumber}*${payment.payer.originator}`,
    `DTM*405*${compact(payment.productionDate)}`,
    `N1*PR*${payment.payer.name}*XV*${payment.payer.id}`,
    `N1*PE*${payment.payee.name}*XX*${payment.payee.npi}`,
  ];
  let count = header.length;
  yield* header;
  let first = true;
  for (const claim of payment.claims()) {
    if (first) {
      count++;
      yield 'LX*1';
      first = false;
    }
    for (const segment of claimSegments(claim)) {
      count++;
      yield segment;
    }
  }
  if (payment.providerAdjustments.length > 0) {
    count++;
    yield `PLB*${payment.payee.npi}*${payment.paymentDate.slice(0, 4)}1231*${payment.providerAdjustments.map(([reason, reference, cents]) => `${reason}:${reference}*${money(cents)}`).join('*')}`;
  }
  yield `SE*${count + 1}*${payment.controlNumber}`;
}

/** A whole file, `~` and a line break after each segment, as payers send them. */
export function* interchangeLines(
  interchange: WrittenInterchange,
  payments: Iterable<WrittenPayment>,
): Generator<string> {
  const control = String(interchange.controlNumber).padStart(9, '0');
  const date = compact(interchange.date);
  yield `ISA*00*          *00*          *ZZ*${interchange.sender.padEnd(15)}*ZZ*${interchange.receiver.padEnd(15)}*${date.slice(2)}*0800*^*00501*${control}*0*P*:~\n`;
  yield `GS*HP*${interchange.sender}*${interchange.receiver}*${date}*0800*${interchange.controlNumber}*X*005010X221A1~\n`;
  let transactions = 0;
  for (const payment of payments) {
    transactions++;
    for (const segment of paymentSegments(payment)) yield `${segment}~\n`;
  }
  yield `GE*${transactions}*${interchange.controlNumber}~\n`;
  yield `IEA*1*${control}~\n`;
}

export function interchangeText(interchange: WrittenInterchange, payments: Iterable<WrittenPayment>): string {
  return [...interchangeLines(interchange, payments)].join('');
}
