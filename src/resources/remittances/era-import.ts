import { createHash } from 'node:crypto';
import type { CommandStore } from '../../db/tenant-store.js';
import { normalizeNameKey } from '../../db/patient-match-keys.js';
import { randomId } from '../../shared/ids.js';
import { SegmentReader, X12Error, type Segment } from '../../domain/era/x12-segments.js';
import {
  Era835Reader,
  type EraClaim,
  type EraEvent,
  type EraPayment,
  type PaymentTotals,
  type ProviderAdjustment,
} from '../../domain/era/era-835.js';
import { formatCents } from '../../domain/era/era-values.js';
import { matchClaim, mrnCandidates, type CandidatePatient, type ClaimMatch } from '../../domain/era/claim-match.js';
import {
  coverageHolders,
  finishFile,
  finishRemittance,
  findByTrace,
  findFileByContent,
  findRemittance,
  insertAllocations,
  insertFile,
  insertRemittance,
  patientsByMrn,
} from './remittance-repository.js';
import { remittanceView } from './remittance-view.js';

/** An 835 to import: its name, its content's digest and size, and its text in chunks (read once). */
export interface EraSource {
  name: string;
  sha256: string;
  byteSize: number;
  chunks(): AsyncIterable<string>;
}

export interface EraImportProgress {
  bytes: number;
  byteSize: number;
  claims: number;
}

export interface EraImportResult {
  /** already_imported: this very file was imported before, and nothing was added. */
  outcome: 'imported' | 'already_imported';
  eraFileId: string;
  fileName: string;
  payments: number;
  claims: number;
  /** Of this import; absent when the file was already imported. */
  providerAdjustments?: number;
  /** Claims per match status, of this import; absent when the file was already imported. */
  matches?: Record<ClaimMatch['status'], number>;
}

/** A refused file: nothing of it was written. The message names the segment, its position and line when the file is at fault. */
export class EraImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EraImportError';
  }
}

/** Claims written (and matched) together: one lookup and one insert per batch keeps memory flat on any file size. */
const BATCH = 500;

/** Text in memory (the demo seed, tests; a file on disk is src/admin/era-file.ts's). */
export function textSource(name: string, text: string): EraSource {
  return {
    name,
    sha256: createHash('sha256').update(text).digest('hex'),
    byteSize: Buffer.byteLength(text),
    async *chunks() {
      yield text;
    },
  };
}

/** The claims of a batch, matched to the agency's patients and written. */
class AllocationBatch {
  private claims: EraClaim[] = [];
  readonly matches: Record<ClaimMatch['status'], number> = { matched: 0, partially_matched: 0, unmatched: 0 };

  constructor(private readonly store: CommandStore) {}

  async add(remittanceId: string, claim: EraClaim): Promise<void> {
    this.claims.push(claim);
    if (this.claims.length >= BATCH) await this.flush(remittanceId);
  }

  async flush(remittanceId: string): Promise<void> {
    const claims = this.claims;
    if (claims.length === 0) return;
    this.claims = [];
    const matches = await this.match(claims);
    await insertAllocations(
      this.store,
      claims.map((claim, i) => {
        this.matches[matches[i].status]++;
        return allocationRow(remittanceId, claim, matches[i]);
      }),
    );
  }

  private async match(claims: EraClaim[]): Promise<ClaimMatch[]> {
    const memberIds = claims.flatMap((c) => (c.patient.memberId ? [c.patient.memberId] : []));
    const [patients, holders] = await Promise.all([
      patientsByMrn(
        this.store,
        claims.flatMap((c) => mrnCandidates(c.patientControlNumber)),
      ),
      coverageHolders(this.store, memberIds),
    ]);
    const holdersOf = new Map<string, string[]>();
    for (const h of holders)
      holdersOf.set(h.policy_number!, [...(holdersOf.get(h.policy_number!) ?? []), h.patient_id]);
    const byMrn = new Map(patients.map((p) => [p.mrn!, p]));
    return claims.map((claim) => {
      const memberId = claim.patient.memberId;
      const holding = memberId ? (holdersOf.get(memberId) ?? []) : [];
      const patient = mrnCandidates(claim.patientControlNumber)
        .map((mrn) => byMrn.get(mrn))
        .find(Boolean);
      const candidate: CandidatePatient | undefined = patient && {
        id: patient.id,
        lastNameKey: patient.match_last_name,
        policyNumbers: holding.includes(patient.id) && memberId ? [memberId] : [],
      };
      const lastNameKey = claim.patient.lastName ? normalizeNameKey(claim.patient.lastName) : null;
      return matchClaim(
        { patientControlNumber: claim.patientControlNumber, lastNameKey, memberId },
        candidate,
        holding,
      );
    });
  }
}

function allocationRow(remittanceId: string, claim: EraClaim, match: ClaimMatch) {
  return {
    id: randomId('alc_', 12),
    remittance_id: remittanceId,
    position: claim.position,
    patient_control_number: claim.patientControlNumber,
    claim_status_code: claim.statusCode,
    payer_claim_number: claim.payerClaimNumber,
    original_payer_claim_number: claim.originalPayerClaimNumber,
    claim_filing_indicator: claim.filingIndicator,
    patient_last_name: claim.patient.lastName,
    patient_first_name: claim.patient.firstName,
    patient_middle_name: claim.patient.middleName,
    member_id: claim.patient.memberId,
    patient_id: match.patientId,
    match_status: match.status,
    service_date_from: claim.serviceDateFrom,
    service_date_to: claim.serviceDateTo,
    charged_amount: formatCents(claim.chargedCents),
    allowed_amount: formatCents(claim.allowedCents),
    paid_amount: formatCents(claim.paidCents),
    adjustment_amount: formatCents(claim.adjustmentCents),
    patient_responsibility_amount: formatCents(claim.patientResponsibilityCents),
    variance_amount: formatCents(claim.varianceCents),
    adjustment_codes: JSON.stringify(
      claim.adjustments.map((a) => ({ group: a.group, reason: a.reason, amount: formatCents(a.amountCents) })),
    ),
  };
}

function totalsRow(totals: PaymentTotals) {
  return {
    claim_count: totals.claimCount,
    charged_amount: formatCents(totals.chargedCents),
    allowed_amount: formatCents(totals.allowedCents),
    paid_amount: formatCents(totals.paidCents),
    adjustment_amount: formatCents(totals.adjustmentCents),
    patient_responsibility_amount: formatCents(totals.patientResponsibilityCents),
    variance_amount: formatCents(totals.varianceCents),
    adjustments_by_group: JSON.stringify(
      Object.fromEntries(Object.entries(totals.byGroup).map(([group, cents]) => [group, formatCents(cents)])),
    ),
    provider_adjustment_amount: formatCents(totals.providerAdjustmentCents),
    updated_at: new Date(),
  };
}

function providerAdjustmentRows(remittanceId: string, adjustments: ProviderAdjustment[]) {
  return adjustments.map((a) => ({
    remittance_id: remittanceId,
    position: a.position,
    provider_id: a.providerId,
    fiscal_period_date: a.fiscalPeriodDate,
    reason_code: a.reasonCode,
    reference: a.reference,
    amount: formatCents(a.amountCents),
  }));
}

/** One file's import in a transaction: its events written as they come, and a remittance.received per payment. */
class EraFileImport {
  private readonly segments = new SegmentReader();
  private reader: Era835Reader | undefined;
  private lastSegment: Segment | null = null;
  private readonly batch: AllocationBatch;
  private remittanceId: string | null = null;
  private fileWritten = false;
  readonly eraFileId = randomId('eraf_', 12);
  payments = 0;
  claims = 0;
  providerAdjustments = 0;

  constructor(
    private readonly store: CommandStore,
    private readonly source: EraSource,
  ) {
    this.batch = new AllocationBatch(store);
  }

  get matches() {
    return this.batch.matches;
  }

  async read(onProgress?: (progress: EraImportProgress) => void): Promise<void> {
    let bytes = 0;
    for await (const chunk of this.source.chunks()) {
      bytes += Buffer.byteLength(chunk);
      for (const segment of this.segments.push(chunk)) await this.accept(segment);
      onProgress?.({ bytes, byteSize: this.source.byteSize, claims: this.claims });
    }
    this.segments.end();
    if (!this.reader) throw new X12Error('the file holds no segment', null);
    this.reader.end(this.lastSegment);
    await finishFile(this.store, this.eraFileId, { payment_count: this.payments, claim_count: this.claims });
  }

  private async accept(segment: Segment): Promise<void> {
    this.reader ??= new Era835Reader(this.segments.delimiters!);
    this.lastSegment = segment;
    for (const event of this.reader.accept(segment)) await this.write(event);
  }

  private async write(event: EraEvent): Promise<void> {
    switch (event.type) {
      case 'interchange':
        if (this.fileWritten) return;
        this.fileWritten = true;
        return insertFile(this.store, {
          id: this.eraFileId,
          file_name: this.source.name,
          sha256: this.source.sha256,
          byte_size: this.source.byteSize,
          interchange_control_number: event.interchange.controlNumber,
          sender_id: event.interchange.senderId,
          receiver_id: event.interchange.receiverId,
        });
      case 'payment':
        return this.startPayment(event.payment);
      case 'claim':
        this.claims++;
        return this.batch.add(this.remittanceId!, event.claim);
      case 'payment-end':
        await this.batch.flush(this.remittanceId!);
        this.providerAdjustments += event.providerAdjustments.length;
        await finishRemittance(
          this.store,
          this.remittanceId!,
          totalsRow(event.totals),
          providerAdjustmentRows(this.remittanceId!, event.providerAdjustments),
        );
        return this.store.emit({
          type: 'remittance.received',
          data: remittanceView((await findRemittance(this.store, this.remittanceId!))!),
        });
    }
  }

  private async startPayment(payment: EraPayment): Promise<void> {
    const earlier = await findByTrace(this.store, payment.traceOriginator, payment.traceNumber);
    if (earlier) {
      const where = `segment ${payment.index} (ST*835*${payment.transactionControlNumber}), line ${payment.line}`;
      const from =
        earlier.era_file_id === this.eraFileId
          ? 'earlier in this same file'
          : `from ${earlier.file_name} (era_file_id ${earlier.era_file_id}, imported ${earlier.created_at.toISOString()})`;
      throw new EraImportError(
        `${where}: duplicate payment: payer ${payment.traceOriginator} trace number ${payment.traceNumber} was already imported ${from}`,
      );
    }
    this.remittanceId = randomId('rem_', 12);
    this.payments++;
    await insertRemittance(this.store, {
      id: this.remittanceId,
      era_file_id: this.eraFileId,
      transaction_control_number: payment.transactionControlNumber,
      payer_name: payment.payer.name,
      payer_id: payment.payer.id,
      payee_name: payment.payee.name,
      payee_id: payment.payee.id,
      trace_originator: payment.traceOriginator,
      trace_number: payment.traceNumber,
      credit_debit: payment.creditDebit,
      payment_amount: formatCents(payment.amountCents),
      payment_method: payment.method,
      payment_date: payment.paymentDate,
      production_date: payment.productionDate,
    });
  }
}

/**
 * Imports an 835 into the store's agency, in its command: written as a whole or refused as a whole (EraImportError,
 * naming the segment, its position and line). The same file again adds nothing, events included. Each payment's
 * remittance.received goes through the command's outbox, committed with the payment or not at all. The admin
 * command, the demo seed and the bench run it through runPlatformCommand.
 */
export async function importEraFile(
  store: CommandStore,
  source: EraSource,
  onProgress?: (progress: EraImportProgress) => void,
): Promise<EraImportResult> {
  // Imports of one agency run one after another, so two imports of one file cannot both pass the checks below.
  await store.lockAgency();
  const imported = await findFileByContent(store, source.sha256);
  if (imported) {
    return {
      outcome: 'already_imported',
      eraFileId: imported.id,
      fileName: imported.file_name,
      payments: imported.payment_count,
      claims: imported.claim_count,
    };
  }
  const file = new EraFileImport(store, source);
  try {
    await file.read(onProgress);
  } catch (err) {
    if (err instanceof X12Error)
      throw new EraImportError(`${source.name} was not imported (nothing was written): ${err.message}`);
    if (err instanceof EraImportError)
      throw new EraImportError(`${source.name} was not imported (nothing was written): ${err.message}`);
    throw err;
  }
  return {
    outcome: 'imported',
    eraFileId: file.eraFileId,
    fileName: source.name,
    payments: file.payments,
    claims: file.claims,
    providerAdjustments: file.providerAdjustments,
    matches: file.matches,
  };
}
