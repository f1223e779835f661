import { access } from 'node:fs/promises';
import { AdminError, describe, requiredOption, unreadable, type Commands } from './command.js';
import {
  EraImportError,
  importEraFile,
  type EraImportProgress,
  type EraImportResult,
  type EraSource,
} from '../resources/remittances/era-import.js';
import { listFiles } from '../resources/remittances/remittance-repository.js';
import { fileSource } from './era-file.js';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { asOperator, asOperatorOn, type OperatorCommand, type OperatorRunBy } from './operator-command.js';

const BAR_WIDTH = 30;

const ERA_FILES: Omit<OperatorCommand, 'operation'> = { resourceType: 'remittance', phiMode: 'phi' };

/** A progress bar on stderr, redrawn at most every 100 ms; only on a terminal, and never with --json. */
function progressBar(): { update(progress: EraImportProgress): void; done(): void } {
  let drawn = 0;
  let shown = false;
  const draw = ({ bytes, byteSize, claims }: EraImportProgress) => {
    const share = byteSize === 0 ? 1 : Math.min(1, bytes / byteSize);
    const filled = Math.round(share * BAR_WIDTH);
    process.stderr.write(
      `\r[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${String(Math.round(share * 100)).padStart(3)}%  ${claims.toLocaleString('en-US')} claims`,
    );
    shown = true;
  };
  return {
    update(progress) {
      const now = Date.now();
      if (now - drawn < 100 && progress.bytes < progress.byteSize) return;
      drawn = now;
      draw(progress);
    },
    done() {
      if (shown) process.stderr.write('\n');
    },
  };
}

function importOutput(agencyId: string, result: EraImportResult) {
  const json = {
    outcome: result.outcome,
    agency_id: agencyId,
    era_file_id: result.eraFileId,
    file_name: result.fileName,
    payments: result.payments,
    claims: result.claims,
    ...(result.providerAdjustments === undefined ? {} : { provider_adjustments: result.providerAdjustments }),
    ...(result.matches === undefined
      ? {}
      : {
          matched: result.matches.matched,
          partially_matched: result.matches.partially_matched,
          unmatched: result.matches.unmatched,
        }),
  };
  const headline =
    result.outcome === 'already_imported'
      ? `${result.fileName} was already imported (era_file_id ${result.eraFileId}): nothing was added.`
      : 'Imported the ERA file.';
  return { json, text: `${headline}\n${describe(json)}` };
}

/**
 * Imports an 835 into the agency as the operator command `era import` runs it (one transaction with its audit record;
 * a refused file is a one-line AdminError and nothing is written): the CLI's operator, or a person of the console.
 */
export function importEraAs(
  db: Kysely<DB>,
  agencyId: string,
  by: OperatorRunBy,
  source: EraSource,
  progress?: (progress: EraImportProgress) => void,
): Promise<EraImportResult> {
  return asOperatorOn(
    db,
    agencyId,
    { ...ERA_FILES, operation: 'importEraFile', ...by },
    (store) => importEraFile(store, source, progress),
    { errors: [EraImportError] },
  );
}

export const eraCommands: Commands = {
  import: {
    usage:
      'era import --agency ID FILE.835   (X12 835 005010X221A1 remittances; atomic; the same file again adds nothing)',
    options: { agency: { type: 'string' } },
    positionals: true,
    async run(ctx) {
      const { options, positionals = [], progress } = ctx;
      const agencyId = requiredOption(options, 'agency');
      if (positionals.length !== 1) throw new AdminError('give exactly one 835 file after the options');
      const [path] = positionals;
      try {
        await access(path);
      } catch (err) {
        throw unreadable(path, err);
      }
      const bar = options.json !== true && progress ? progressBar() : undefined;
      try {
        const source = await fileSource(path);
        const result = await importEraAs(ctx.db, agencyId, { outbox: ctx.outbox }, source, bar?.update);
        return importOutput(agencyId, result);
      } finally {
        bar?.done();
      }
    },
  },
  files: {
    usage: 'era files --agency ID   (every imported 835 file, newest first)',
    options: { agency: { type: 'string' } },
    async run(ctx) {
      const files = (await asOperator(ctx, { ...ERA_FILES, operation: 'listEraFiles' }, listFiles)).map((row) => ({
        era_file_id: row.id,
        file_name: row.file_name,
        interchange_control_number: row.interchange_control_number,
        payments: row.payment_count,
        claims: row.claim_count,
        imported_at: row.created_at.toISOString(),
      }));
      return {
        json: { files },
        text: files.length === 0 ? 'No ERA files.' : files.map((file) => describe(file)).join('\n\n'),
      };
    },
  },
};
