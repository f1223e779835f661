import type { listFiles } from '../../resources/remittances/remittance-repository.js';
import type { HhvbpImportRow } from '../../resources/quality/hhvbp-repository.js';
import { formatCents, parseCents } from '../../domain/era/era-values.js';
import { supportedPerformanceYears } from '../../domain/hhvbp/measure-sets.js';
import { html, type Html } from '../html.js';
import { instant } from '../instant.js';
import { CONSOLE_PATH, csrfField, type Viewer } from '../layout.js';
import type { EraFileResult, HhvbpImportResult } from './import-reads.js';

type EraFileRow = Awaited<ReturnType<typeof listFiles>>[number];

export const IMPORTS_PATH = `${CONSOLE_PATH}/imports`;

/** What an administrator typed into the HHVBP form, given back with a refusal so that only the file is chosen again. */
export interface MeasureFields {
  performanceYear: string;
  officialTps: string;
  officialAdjustment: string;
}

const WAIT_NOTE = html`<p class="muted">The import runs to its end before the page answers: a large file takes some seconds, while your browser shows the page loading. A file is imported whole or not at all.</p>`;

function eraForm(viewer: Viewer): Html {
  return html`<h2>Import an 835 (ERA)</h2>
<form method="post" action="${IMPORTS_PATH}/era" enctype="multipart/form-data" class="stack">${csrfField(viewer)}
<label for="era_file">835 file (X12 005010X221A1)</label><input id="era_file" name="file" type="file" accept=".835,.txt,.edi,.x12" required>
<button type="submit">Import the 835</button></form>`;
}

function hhvbpForm(viewer: Viewer, fields: MeasureFields): Html {
  const years = supportedPerformanceYears();
  return html`<h2>Import HHVBP measures</h2>
<form method="post" action="${IMPORTS_PATH}/hhvbp" enctype="multipart/form-data" class="stack">${csrfField(viewer)}
<label for="performance_year">Performance year (${years.join(', ')})</label><input id="performance_year" name="performance_year" type="number" min="2000" step="1" value="${fields.performanceYear}" required>
<label for="hhvbp_file">Measure file (CSV)</label><input id="hhvbp_file" name="file" type="file" accept=".csv,text/csv" required>
<label for="official_tps">Official total performance score (optional, 0 to 100)</label><input id="official_tps" name="official_tps" type="text" inputmode="decimal" value="${fields.officialTps}">
<label for="official_adjustment">Official payment adjustment percent (optional)</label><input id="official_adjustment" name="official_adjustment" type="text" inputmode="decimal" value="${fields.officialAdjustment}">
<button type="submit">Import the measures</button></form>`;
}

function eraHistory(files: readonly EraFileRow[]): Html {
  if (files.length === 0) return html`<h2>835 files imported</h2><p>No 835 file has been imported.</p>`;
  return html`<h2>835 files imported</h2><table><caption>835 files, newest first</caption>
<thead><tr><th scope="col">Imported</th><th scope="col">File</th><th scope="col" class="number">Payments</th><th scope="col" class="number">Claims</th></tr></thead>
<tbody>${files.map(
    (file) =>
      html`<tr><td>${instant(file.created_at)}</td><td><a href="${IMPORTS_PATH}/era/${file.id}">${file.file_name}</a></td><td class="number">${file.payment_count}</td><td class="number">${file.claim_count}</td></tr>`,
  )}</tbody></table>`;
}

function hhvbpHistory(imports: readonly HhvbpImportRow[]): Html {
  if (imports.length === 0) return html`<h2>HHVBP imports</h2><p>No HHVBP measure file has been imported.</p>`;
  return html`<h2>HHVBP imports</h2><table><caption>HHVBP imports, by performance year, newest first</caption>
<thead><tr><th scope="col">Imported</th><th scope="col">Performance year</th><th scope="col">File</th><th scope="col">Cohort</th><th scope="col">Current</th></tr></thead>
<tbody>${imports.map(
    (row) =>
      html`<tr><td>${instant(row.created_at)}</td><td>${row.performance_year}</td><td><a href="${IMPORTS_PATH}/hhvbp/${row.id}">${row.source_file}</a></td><td>${row.cohort}</td><td>${row.superseded_at ? html`replaced ${instant(row.superseded_at)}` : 'yes'}</td></tr>`,
  )}</tbody></table>`;
}

export function importsPage(
  viewer: Viewer,
  mayImport: boolean,
  history: { files: readonly EraFileRow[]; imports: readonly HhvbpImportRow[] },
  fields: MeasureFields,
): Html {
  const forms = mayImport
    ? html`${WAIT_NOTE}${eraForm(viewer)}${hhvbpForm(viewer, fields)}`
    : html`<p>Administrators import 835 files and HHVBP measure files here; this is what was imported.</p>`;
  return html`${forms}${eraHistory(history.files)}${hhvbpHistory(history.imports)}`;
}

const money = (amounts: readonly string[]) => formatCents(amounts.reduce((sum, a) => sum + (parseCents(a) ?? 0), 0));

export function eraResultPage({ file, payments, matches }: EraFileResult): Html {
  const claims = (status: string) => matches.find((m) => m.match_status === status)?.claims ?? 0;
  const column = (name: 'payment_amount' | 'paid_amount' | 'adjustment_amount' | 'provider_adjustment_amount') =>
    money(payments.map((p) => p[name]));
  return html`<p><a href="${IMPORTS_PATH}">All imports</a></p>
<dl class="facts"><dt>File</dt><dd>${file.file_name}</dd><dt>Imported</dt><dd>${instant(file.created_at)}</dd><dt>Size</dt><dd>${file.byte_size.toLocaleString('en-US')} bytes</dd>
<dt>Interchange control number</dt><dd>${file.interchange_control_number}</dd><dt>Payments</dt><dd>${file.payment_count}</dd><dt>Claims</dt><dd>${file.claim_count}</dd>
<dt>Claims matched to a patient</dt><dd>${claims('matched')} matched, ${claims('partially_matched')} partially, ${claims('unmatched')} unmatched</dd></dl>
<table><caption>Payments of the file</caption>
<thead><tr><th scope="col">Payer</th><th scope="col">Trace number</th><th scope="col">Date</th><th scope="col">Method</th><th scope="col" class="number">Claims</th><th scope="col" class="number">Payment</th><th scope="col" class="number">Claims paid</th><th scope="col" class="number">Claim adjustments</th><th scope="col" class="number">Provider adjustments</th></tr></thead>
<tbody>${payments.map(
    (p) =>
      html`<tr><td>${p.payer_name}</td><td>${p.trace_number}</td><td>${p.payment_date}</td><td>${p.payment_method}</td><td class="number">${p.claim_count}</td><td class="number">${p.payment_amount}</td><td class="number">${p.paid_amount}</td><td class="number">${p.adjustment_amount}</td><td class="number">${p.provider_adjustment_amount}</td></tr>`,
  )}</tbody>
<tfoot><tr><th scope="row" colspan="4">Total</th><td class="number">${file.claim_count}</td><td class="number">${column('payment_amount')}</td><td class="number">${column('paid_amount')}</td><td class="number">${column('adjustment_amount')}</td><td class="number">${column('provider_adjustment_amount')}</td></tr></tfoot></table>`;
}

export function hhvbpResultPage({ imported, measures }: HhvbpImportResult): Html {
  const value = (v: string | null) => v ?? '—';
  return html`<p><a href="${IMPORTS_PATH}">All imports</a></p>
<dl class="facts"><dt>File</dt><dd>${imported.source_file}</dd><dt>Imported</dt><dd>${instant(imported.created_at)}</dd><dt>Performance year</dt><dd>${imported.performance_year}</dd>
<dt>Measure set</dt><dd>${imported.measure_set_id}</dd><dt>Cohort</dt><dd>${imported.cohort}</dd><dt>Measures</dt><dd>${measures.length}</dd>
<dt>Official total performance score</dt><dd>${value(imported.official_total_performance_score)}</dd><dt>Official payment adjustment percent</dt><dd>${value(imported.official_payment_adjustment_percent)}</dd>
<dt>Current</dt><dd>${imported.superseded_at ? html`no: replaced by a later import of the year on ${instant(imported.superseded_at)}` : 'yes, the year’s current import'}</dd></dl>
<table><caption>Measures of the import</caption>
<thead><tr><th scope="col">Measure</th><th scope="col" class="number">Row</th><th scope="col" class="number">Agency value</th><th scope="col" class="number">Achievement threshold</th><th scope="col" class="number">Benchmark</th><th scope="col" class="number">Baseline</th></tr></thead>
<tbody>${measures.map(
    (m) =>
      html`<tr><td>${m.measure_id}</td><td class="number">${m.source_row}</td><td class="number">${value(m.agency_value)}</td><td class="number">${m.achievement_threshold}</td><td class="number">${m.benchmark}</td><td class="number">${value(m.baseline_value)}</td></tr>`,
  )}</tbody></table>`;
}
