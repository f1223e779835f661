import { components, element, X12Error, type Delimiters, type Segment } from './x12-segments.js';
import {
  ADJUSTMENT_GROUPS,
  CLAIM_STATUSES,
  formatCents,
  isAdjustmentGroup,
  isClaimStatusCode,
  isPaymentMethod,
  parseCents,
  parseDate,
  REVERSAL,
  SEQUESTRATION_CARC,
  type AdjustmentGroup,
  type ClaimStatus,
  type ClaimStatusCode,
  type PaymentMethod,
} from './era-values.js';

/**
 * The 005010X221A1 (835) loop grammar over a stream of segments: the envelope (ISA/GS/ST ... SE/GE/IEA with their
 * counts and control numbers), the header (BPR, TRN, DTM), 1000A payer, 1000B payee, 2000 LX, 2100 CLP, 2110 SVC and
 * PLB. It emits a payment when its header is read, each claim when it is complete, and the payment's end once it
 * balances, so that a caller can write a file of any size as it goes.
 */

const IMPLEMENTATION = '005010X221A1';

interface EraInterchange {
  controlNumber: string;
  senderId: string;
  receiverId: string;
}

interface EraParty {
  name: string;
  /** N104 (payer: else REF*2U); null when the file gives none. */
  id: string | null;
}

export interface EraPayment {
  /** ST02. */
  transactionControlNumber: string;
  index: number;
  line: number;
  creditDebit: 'C' | 'D';
  /** BPR02, unsigned as sent; BPR03 says which way it goes. */
  amountCents: number;
  method: PaymentMethod;
  /** BPR16. */
  paymentDate: string;
  /** TRN02: the check or EFT trace number, whole. */
  traceNumber: string;
  /** TRN03: the payer's id that the trace number is unique within. */
  traceOriginator: string;
  /** DTM*405. */
  productionDate: string | null;
  payer: EraParty;
  payee: EraParty;
}

interface ClaimAdjustment {
  group: AdjustmentGroup;
  reason: string;
  amountCents: number;
}

export interface EraClaim {
  /** 1-based order of the claim in its payment. */
  position: number;
  index: number;
  line: number;
  patientControlNumber: string;
  statusCode: ClaimStatusCode;
  status: ClaimStatus;
  chargedCents: number;
  paidCents: number;
  /** CLP05, else the sum of the PR adjustments. */
  patientResponsibilityCents: number;
  filingIndicator: string | null;
  payerClaimNumber: string | null;
  /** For a reversal (CLP02 22), its own CLP07; for a correction, REF*F8 or the reversal just before it of the same claim. */
  originalPayerClaimNumber: string | null;
  patient: { lastName: string | null; firstName: string | null; middleName: string | null; memberId: string | null };
  serviceDateFrom: string | null;
  serviceDateTo: string | null;
  /** Claim and service-line CAS amounts summed per group and reason, in order of appearance. */
  adjustments: ClaimAdjustment[];
  adjustmentCents: number;
  /** AMT*AU; else the sum of the lines' AMT*B6 when every line has one; else charged minus the CO, PI and CR adjustments other than sequestration. */
  allowedCents: number;
  /** Charged minus paid minus adjustments: 0 on a balanced claim. */
  varianceCents: number;
}

export interface ProviderAdjustment {
  /** 1-based order among the payment's PLB adjustments. */
  position: number;
  providerId: string;
  fiscalPeriodDate: string;
  /** PLB03-1: WO, L6, FB, 72, CS, ... */
  reasonCode: string;
  /** PLB03-2, the payer's reference (often a claim number); null when absent. */
  reference: string | null;
  /** Positive reduces the payment, negative adds to it. */
  amountCents: number;
}

export interface PaymentTotals {
  claimCount: number;
  chargedCents: number;
  allowedCents: number;
  paidCents: number;
  adjustmentCents: number;
  patientResponsibilityCents: number;
  varianceCents: number;
  byGroup: Record<AdjustmentGroup, number>;
  providerAdjustmentCents: number;
}

export type EraEvent =
  | { type: 'interchange'; interchange: EraInterchange }
  | { type: 'payment'; payment: EraPayment }
  | { type: 'claim'; claim: EraClaim }
  | { type: 'payment-end'; payment: EraPayment; providerAdjustments: ProviderAdjustment[]; totals: PaymentTotals };

type State = 'start' | 'interchange' | 'group' | 'header' | 'payer' | 'payee' | 'lx' | 'claim' | 'service' | 'plb';

/** Segments each 835 loop may hold after its first (anything else there is out of order). */
const LOOP_SEGMENTS: Partial<Record<State, readonly string[]>> = {
  header: ['NTE', 'TRN', 'CUR', 'REF', 'DTM'],
  payer: ['N3', 'N4', 'REF', 'PER'],
  payee: ['N3', 'N4', 'REF', 'RDM'],
  lx: ['TS3', 'TS2'],
  claim: ['CAS', 'NM1', 'MIA', 'MOA', 'REF', 'DTM', 'PER', 'AMT', 'QTY'],
  service: ['DTM', 'CAS', 'REF', 'AMT', 'QTY', 'LQ'],
};

/** What may start a new loop from each state. */
const NEXT_LOOPS: Partial<Record<State, readonly string[]>> = {
  payee: ['LX', 'PLB', 'SE'],
  lx: ['CLP'],
  claim: ['SVC', 'CLP', 'LX', 'PLB', 'SE'],
  service: ['SVC', 'CLP', 'LX', 'PLB', 'SE'],
  plb: ['PLB', 'SE'],
};

const EXPECTED: Record<State, string> = {
  start: 'ISA',
  interchange: 'GS or IEA',
  group: 'ST or GE',
  header: 'BPR first, then TRN, DTM or N1*PR',
  payer: 'N3, N4, REF, PER or N1*PE',
  payee: 'N3, N4, REF, LX, PLB or SE',
  lx: 'TS3, TS2 or CLP',
  claim: 'a 2100 segment (CAS, NM1, REF, DTM, AMT ...), SVC, CLP, LX, PLB or SE',
  service: 'a 2110 segment (DTM, CAS, REF, AMT ...), SVC, CLP, LX, PLB or SE',
  plb: 'PLB or SE',
};

/** Adjustments that reduce the allowance: contractual, payer initiated, and their reversal (CR mirrors the original's). */
const ALLOWANCE_GROUPS: readonly AdjustmentGroup[] = ['CO', 'PI', 'CR'];

const emptyByGroup = (): Record<AdjustmentGroup, number> =>
  Object.fromEntries(ADJUSTMENT_GROUPS.map((g) => [g, 0])) as Record<AdjustmentGroup, number>;

/** A claim's segments as they arrive, finished into an EraClaim when the next loop begins. */
class ClaimBuilder {
  readonly adjustments = new Map<string, ClaimAdjustment>();
  patient: EraClaim['patient'] = { lastName: null, firstName: null, middleName: null, memberId: null };
  insuredMemberId: string | null = null;
  statementFrom: string | null = null;
  statementTo: string | null = null;
  serviceDates: string[] = [];
  correctedClaimNumber: string | null = null;
  coverageCents: number | null = null;
  lines = 0;
  linesAllowedCents = 0;
  linesWithAllowed = 0;

  constructor(
    readonly clp: Segment,
    readonly position: number,
    readonly values: {
      pcn: string;
      statusCode: ClaimStatusCode;
      chargedCents: number;
      paidCents: number;
      patientResponsibilityCents: number | null;
    },
  ) {}

  adjust(group: AdjustmentGroup, reason: string, amountCents: number): void {
    const key = `${group}-${reason}`;
    const kept = this.adjustments.get(key);
    if (kept) kept.amountCents += amountCents;
    else this.adjustments.set(key, { group, reason, amountCents });
  }

  finish(previous: EraClaim | null): EraClaim {
    const { pcn, statusCode, chargedCents, paidCents } = this.values;
    const adjustments = [...this.adjustments.values()];
    const sum = (list: ClaimAdjustment[]) => list.reduce((total, a) => total + a.amountCents, 0);
    const adjustmentCents = sum(adjustments);
    const contractual = sum(
      adjustments.filter((a) => ALLOWANCE_GROUPS.includes(a.group) && a.reason !== SEQUESTRATION_CARC),
    );
    const linesAllowed = this.lines > 0 && this.linesWithAllowed === this.lines ? this.linesAllowedCents : null;
    const payerClaimNumber = element(this.clp, 7) || null;
    const sortedDates = [...this.serviceDates].sort();
    return {
      position: this.position,
      index: this.clp.index,
      line: this.clp.line,
      patientControlNumber: pcn,
      statusCode,
      status: CLAIM_STATUSES[statusCode],
      chargedCents,
      paidCents,
      patientResponsibilityCents:
        this.values.patientResponsibilityCents ?? sum(adjustments.filter((a) => a.group === 'PR')),
      filingIndicator: element(this.clp, 6) || null,
      payerClaimNumber,
      originalPayerClaimNumber:
        statusCode === REVERSAL
          ? payerClaimNumber
          : (this.correctedClaimNumber ??
            (previous?.statusCode === REVERSAL && previous.patientControlNumber === pcn
              ? previous.payerClaimNumber
              : null)),
      patient: { ...this.patient, memberId: this.insuredMemberId ?? this.patient.memberId },
      serviceDateFrom: this.statementFrom ?? sortedDates[0] ?? null,
      serviceDateTo: this.statementTo ?? (sortedDates.length > 1 ? sortedDates.at(-1)! : null),
      adjustments,
      adjustmentCents,
      allowedCents: this.coverageCents ?? linesAllowed ?? chargedCents - contractual,
      varianceCents: chargedCents - paidCents - adjustmentCents,
    };
  }
}

/** One ST/SE transaction while it is read. */
class PaymentBuilder {
  segments = 1;
  bpr: Segment | null = null;
  trn: Segment | null = null;
  productionDate: string | null = null;
  payer: EraParty | null = null;
  payerIdRef: string | null = null;
  payee: EraParty | null = null;
  payment: EraPayment | null = null;
  claim: ClaimBuilder | null = null;
  lastClaim: EraClaim | null = null;
  readonly providerAdjustments: ProviderAdjustment[] = [];
  readonly totals: PaymentTotals = {
    claimCount: 0,
    chargedCents: 0,
    allowedCents: 0,
    paidCents: 0,
    adjustmentCents: 0,
    patientResponsibilityCents: 0,
    varianceCents: 0,
    byGroup: emptyByGroup(),
    providerAdjustmentCents: 0,
  };

  constructor(readonly st: Segment) {}

  count(claim: EraClaim): void {
    const t = this.totals;
    t.claimCount++;
    t.chargedCents += claim.chargedCents;
    t.allowedCents += claim.allowedCents;
    t.paidCents += claim.paidCents;
    t.adjustmentCents += claim.adjustmentCents;
    t.patientResponsibilityCents += claim.patientResponsibilityCents;
    t.varianceCents += claim.varianceCents;
    for (const a of claim.adjustments) t.byGroup[a.group] += a.amountCents;
  }
}

/** Reads one file's segments in order; `accept` returns what each segment completed. */
export class Era835Reader {
  private state: State = 'start';
  private isa: Segment | null = null;
  private gs: Segment | null = null;
  private groups = 0;
  private transactions = 0;
  private current: PaymentBuilder | null = null;
  private interchanges = 0;

  constructor(private readonly delimiters: Delimiters) {}

  accept(segment: Segment): EraEvent[] {
    const events: EraEvent[] = [];
    if (this.current) this.current.segments++;
    switch (segment.id) {
      case 'ISA':
        this.expect(segment, 'start');
        this.isa = segment;
        this.groups = 0;
        this.state = 'interchange';
        events.push({
          type: 'interchange',
          interchange: {
            controlNumber: element(segment, 13),
            senderId: element(segment, 6).trim(),
            receiverId: element(segment, 8).trim(),
          },
        });
        break;
      case 'IEA':
        this.expect(segment, 'interchange');
        this.checkCount(segment, 1, this.groups, 'functional groups (GS)');
        this.checkControl(segment, 2, this.isa!, 13);
        this.interchanges++;
        this.state = 'start';
        break;
      case 'GS':
        this.expect(segment, 'interchange');
        this.checkGroup(segment);
        this.gs = segment;
        this.groups++;
        this.transactions = 0;
        this.state = 'group';
        break;
      case 'GE':
        this.expect(segment, 'group');
        this.checkCount(segment, 1, this.transactions, 'transaction sets (ST)');
        this.checkControl(segment, 2, this.gs!, 6);
        this.state = 'interchange';
        break;
      case 'ST':
        this.expect(segment, 'group');
        if (element(segment, 1) !== '835')
          throw this.error(
            segment,
            `this is a ${element(segment, 1)} transaction set; only 835 (health care claim payment/advice) is imported`,
          );
        this.current = new PaymentBuilder(segment);
        this.transactions++;
        this.state = 'header';
        break;
      case 'SE':
        this.inTransaction(segment);
        events.push(...this.endPayment(segment));
        break;
      default:
        this.inTransaction(segment);
        events.push(...this.transactionSegment(segment));
    }
    return events;
  }

  /** The end of the file: every envelope must be closed. */
  end(last: Segment | null): void {
    if (this.state === 'start' && this.interchanges > 0) return;
    const open = this.current
      ? `transaction ST*835*${element(this.current.st, 2)} has no SE`
      : this.state === 'group'
        ? 'functional group GS has no GE'
        : this.state === 'interchange'
          ? 'interchange ISA has no IEA'
          : 'the file holds no interchange';
    throw new X12Error(
      `the file ends early after this segment: ${open} (missing SE, GE or IEA)`,
      last && { index: last.index, line: last.line, segment: last.id },
    );
  }

  private error(segment: Segment, reason: string): X12Error {
    return X12Error.at(segment, reason, this.delimiters);
  }

  private expect(segment: Segment, state: State): void {
    if (this.state !== state)
      throw this.error(segment, `${segment.id} is out of order here: expected ${EXPECTED[this.state]}`);
  }

  private inTransaction(segment: Segment): void {
    if (!this.current)
      throw this.error(segment, `${segment.id} is out of order here: expected ${EXPECTED[this.state]}`);
  }

  private checkCount(segment: Segment, n: number, actual: number, what: string): void {
    const declared = element(segment, n);
    if (declared !== String(actual))
      throw this.error(
        segment,
        `${segment.id}${String(n).padStart(2, '0')} says ${declared || 'nothing'} ${what}; there are ${actual}`,
      );
  }

  private checkControl(segment: Segment, n: number, opening: Segment, m: number): void {
    const closing = element(segment, n);
    const opened = element(opening, m);
    if (closing !== opened)
      throw this.error(
        segment,
        `${segment.id}${String(n).padStart(2, '0')} control number ${closing} does not match ${opening.id}${String(m).padStart(2, '0')} ${opened}`,
      );
  }

  private checkGroup(segment: Segment): void {
    if (element(segment, 1) !== 'HP')
      throw this.error(
        segment,
        `GS01 is ${element(segment, 1)}; an 835 group is HP (health care claim payment/advice)`,
      );
    const version = element(segment, 8);
    if (!version.startsWith('005010X221'))
      throw this.error(segment, `GS08 is version ${version}; the importer reads ${IMPLEMENTATION}`);
  }

  private transactionSegment(segment: Segment): EraEvent[] {
    const payment = this.current!;
    const { id } = segment;
    if (this.state === 'header' && payment.bpr === null) {
      if (id !== 'BPR') throw this.error(segment, `${id} is out of order here: an 835 begins with BPR`);
      payment.bpr = segment;
      return [];
    }
    if (this.state === 'header' && id === 'N1') return this.startPayer(segment, payment);
    if (this.state === 'payer' && id === 'N1') return this.startPayee(segment, payment);
    if (LOOP_SEGMENTS[this.state]?.includes(id)) return this.loopSegment(segment, payment);
    if (NEXT_LOOPS[this.state]?.includes(id)) return this.nextLoop(segment, payment);
    throw this.error(segment, `${id} is out of order here: expected ${EXPECTED[this.state]}`);
  }

  private startPayer(segment: Segment, payment: PaymentBuilder): EraEvent[] {
    if (element(segment, 1) !== 'PR')
      throw this.error(segment, `the first N1 of an 835 is the payer, N1*PR; this one is N1*${element(segment, 1)}`);
    if (!payment.trn)
      throw this.error(segment, 'the 835 header has no TRN (reassociation trace number) before the payer');
    payment.payer = { name: element(segment, 2), id: element(segment, 4) || null };
    this.state = 'payer';
    return [];
  }

  private startPayee(segment: Segment, payment: PaymentBuilder): EraEvent[] {
    if (element(segment, 1) !== 'PE')
      throw this.error(segment, `the N1 after the payer is the payee, N1*PE; this one is N1*${element(segment, 1)}`);
    payment.payee = { name: element(segment, 2), id: element(segment, 4) || null };
    this.state = 'payee';
    return [];
  }

  private loopSegment(segment: Segment, payment: PaymentBuilder): EraEvent[] {
    const { id } = segment;
    const qualifier = element(segment, 1);
    if (this.state === 'header') {
      if (id === 'TRN') payment.trn = segment;
      if (id === 'DTM' && qualifier === '405') payment.productionDate = this.date(segment, 2);
    } else if (this.state === 'payer') {
      if (id === 'REF' && qualifier === '2U') payment.payerIdRef = element(segment, 2) || null;
    } else if (this.state === 'claim' || this.state === 'service') {
      this.claimSegment(segment, payment.claim!);
    }
    return [];
  }

  private claimSegment(segment: Segment, claim: ClaimBuilder): void {
    const { id } = segment;
    const qualifier = element(segment, 1);
    const inService = this.state === 'service';
    if (id === 'CAS') {
      this.adjustments(segment, claim);
    } else if (id === 'DTM') {
      if (!inService && qualifier === '232') claim.statementFrom = this.date(segment, 2);
      else if (!inService && qualifier === '233') claim.statementTo = this.date(segment, 2);
      else if (inService && ['472', '150', '151'].includes(qualifier)) claim.serviceDates.push(this.date(segment, 2));
    } else if (id === 'NM1' && qualifier === 'QC') {
      claim.patient = {
        lastName: element(segment, 3) || null,
        firstName: element(segment, 4) || null,
        middleName: element(segment, 5) || null,
        memberId: element(segment, 9) || null,
      };
    } else if (id === 'NM1' && qualifier === 'IL') {
      claim.insuredMemberId = element(segment, 9) || null;
    } else if (id === 'REF' && !inService && qualifier === 'F8') {
      claim.correctedClaimNumber = element(segment, 2) || null;
    } else if (id === 'AMT' && !inService && qualifier === 'AU') {
      claim.coverageCents = this.amount(segment, 2);
    } else if (id === 'AMT' && inService && qualifier === 'B6') {
      claim.linesAllowedCents += this.amount(segment, 2);
      claim.linesWithAllowed++;
    }
  }

  /** CAS: a group code, then up to six reason, amount, quantity triplets. */
  private adjustments(segment: Segment, claim: ClaimBuilder): void {
    const group = element(segment, 1);
    if (!isAdjustmentGroup(group))
      throw this.error(
        segment,
        `CAS01 "${group}" is not a claim adjustment group code (${ADJUSTMENT_GROUPS.join(', ')})`,
      );
    let triplets = 0;
    for (let n = 2; n <= 17; n += 3) {
      const reason = element(segment, n);
      if (reason === '') continue;
      claim.adjust(group, reason, this.amount(segment, n + 1));
      triplets++;
    }
    if (triplets === 0) throw this.error(segment, 'CAS has a group code but no reason code and amount (CAS02, CAS03)');
  }

  private nextLoop(segment: Segment, payment: PaymentBuilder): EraEvent[] {
    const events: EraEvent[] = [];
    if (!payment.payment) events.push({ type: 'payment', payment: (payment.payment = this.paymentOf(payment)) });
    const { id } = segment;
    if (id === 'SVC') {
      payment.claim!.lines++;
      this.amount(segment, 2);
      this.amount(segment, 3);
      this.state = 'service';
      return events;
    }
    const claim = this.finishClaim(payment);
    if (claim) events.push({ type: 'claim', claim });
    if (id === 'LX') this.state = 'lx';
    else if (id === 'CLP') this.startClaim(segment, payment);
    else if (id === 'PLB') this.providerAdjustments(segment, payment);
    return events;
  }

  private finishClaim(payment: PaymentBuilder): EraClaim | null {
    if (!payment.claim) return null;
    const claim = payment.claim.finish(payment.lastClaim);
    payment.claim = null;
    payment.lastClaim = claim;
    payment.count(claim);
    return claim;
  }

  private startClaim(segment: Segment, payment: PaymentBuilder): void {
    const pcn = element(segment, 1);
    if (pcn === '') throw this.error(segment, 'CLP01 (patient control number) is empty');
    const statusCode = element(segment, 2);
    if (!isClaimStatusCode(statusCode))
      throw this.error(
        segment,
        `CLP02 "${statusCode}" is not a claim status code of ${IMPLEMENTATION} (${Object.keys(CLAIM_STATUSES).join(', ')})`,
      );
    const responsibility = element(segment, 5);
    payment.claim = new ClaimBuilder(segment, payment.totals.claimCount + 1, {
      pcn,
      statusCode,
      chargedCents: this.amount(segment, 3),
      paidCents: this.amount(segment, 4),
      patientResponsibilityCents: responsibility === '' ? null : this.amount(segment, 5),
    });
    this.state = 'claim';
  }

  /** PLB: provider id, fiscal period date, then up to six reason:reference composite and amount pairs. */
  private providerAdjustments(segment: Segment, payment: PaymentBuilder): void {
    const providerId = element(segment, 1);
    if (providerId === '') throw this.error(segment, 'PLB01 (provider identifier) is empty');
    const fiscalPeriodDate = this.date(segment, 2);
    let pairs = 0;
    for (let n = 3; n <= 13; n += 2) {
      if (element(segment, n) === '') continue;
      const [reasonCode, reference = ''] = components(segment, n, this.delimiters);
      if (reasonCode === '')
        throw this.error(segment, `PLB${String(n).padStart(2, '0')} has no adjustment reason code`);
      const amountCents = this.amount(segment, n + 1);
      payment.providerAdjustments.push({
        position: payment.providerAdjustments.length + 1,
        providerId,
        fiscalPeriodDate,
        reasonCode,
        reference: reference || null,
        amountCents,
      });
      payment.totals.providerAdjustmentCents += amountCents;
      pairs++;
    }
    if (pairs === 0) throw this.error(segment, 'PLB has no adjustment (PLB03 and PLB04)');
    this.state = 'plb';
  }

  private endPayment(se: Segment): EraEvent[] {
    const payment = this.current!;
    if (this.state === 'lx') throw this.error(se, 'LX has no claim (CLP) before SE');
    if (!['payee', 'claim', 'service', 'plb'].includes(this.state))
      throw this.error(se, `SE is out of order here: expected ${EXPECTED[this.state]}`);
    const events: EraEvent[] = [];
    if (!payment.payment) events.push({ type: 'payment', payment: (payment.payment = this.paymentOf(payment)) });
    const claim = this.finishClaim(payment);
    if (claim) events.push({ type: 'claim', claim });
    this.checkCount(se, 1, payment.segments, 'segments from ST to SE');
    this.checkControl(se, 2, payment.st, 2);
    this.checkBalance(payment);
    events.push({
      type: 'payment-end',
      payment: payment.payment,
      providerAdjustments: payment.providerAdjustments,
      totals: payment.totals,
    });
    this.current = null;
    this.state = 'group';
    return events;
  }

  /** BPR02 (signed by BPR03) must equal the claims' payments less the provider-level adjustments. */
  private checkBalance(builder: PaymentBuilder): void {
    const payment = builder.payment!;
    const { paidCents, providerAdjustmentCents } = builder.totals;
    const signed = payment.creditDebit === 'D' ? -payment.amountCents : payment.amountCents;
    const expected = paidCents - providerAdjustmentCents;
    if (signed === expected) return;
    throw this.error(
      builder.bpr!,
      `the payment does not balance: BPR02 is ${formatCents(signed)} but the claims paid ${formatCents(paidCents)} (sum of CLP04) less ${formatCents(providerAdjustmentCents)} of provider-level adjustments (sum of PLB amounts) is ${formatCents(expected)}`,
    );
  }

  private paymentOf(builder: PaymentBuilder): EraPayment {
    const bpr = builder.bpr!;
    const trn = builder.trn!;
    if (!builder.payee) throw this.error(bpr, 'the 835 has no payee (N1*PE) before its claims');
    const creditDebit = element(bpr, 3);
    if (creditDebit !== 'C' && creditDebit !== 'D')
      throw this.error(bpr, `BPR03 "${creditDebit}" is not C (credit) or D (debit)`);
    const method = element(bpr, 4);
    if (!isPaymentMethod(method))
      throw this.error(bpr, `BPR04 "${method}" is not a payment method (ACH, BOP, CHK, FWT, NON)`);
    const traceNumber = element(trn, 2);
    const traceOriginator = element(trn, 3);
    if (traceNumber === '' || traceOriginator === '')
      throw this.error(trn, 'TRN02 (check or EFT trace number) and TRN03 (payer identifier) are required');
    const amountCents = this.amount(bpr, 2);
    if (amountCents < 0)
      throw this.error(bpr, 'BPR02 is negative; BPR03 says whether the payment is a credit or a debit');
    return {
      transactionControlNumber: element(builder.st, 2),
      index: builder.st.index,
      line: builder.st.line,
      creditDebit,
      amountCents,
      method,
      paymentDate: this.paymentDate(builder),
      traceNumber,
      traceOriginator,
      productionDate: builder.productionDate,
      payer: { name: builder.payer!.name, id: builder.payer!.id ?? builder.payerIdRef },
      payee: builder.payee,
    };
  }

  /**
   * BPR16. A file that leaves it empty takes the production date (DTM*405): the TR3's own check examples put the date
   * in BPR15, and payers copy them.
   */
  private paymentDate(builder: PaymentBuilder): string {
    const bpr = builder.bpr!;
    if (element(bpr, 16) === '' && builder.productionDate) return builder.productionDate;
    return this.date(bpr, 16);
  }

  private amount(segment: Segment, n: number): number {
    const text = element(segment, n);
    const cents = parseCents(text);
    if (cents === null)
      throw this.error(
        segment,
        `${segment.id}${String(n).padStart(2, '0')} "${text}" is not an amount (digits, an optional sign and at most two decimal places)`,
      );
    return cents;
  }

  private date(segment: Segment, n: number): string {
    const text = element(segment, n);
    const date = parseDate(text);
    if (date === null)
      throw this.error(segment, `${segment.id}${String(n).padStart(2, '0')} "${text}" is not a date (CCYYMMDD)`);
    return date;
  }
}
