import type { FastifyReply, FastifyRequest } from 'fastify';
import { importEraAs } from '../../admin/era.js';
import { bytesSource } from '../../admin/era-file.js';
import type { OperatorRunBy } from '../../admin/operator-command.js';
import { importMeasuresAs } from '../../admin/quality.js';
import { isStorableText } from '../../domain/storable-text.js';
import type { Person } from '../../identity/mcp-authorization/people.js';
import { listImports } from '../../resources/quality/hhvbp-repository.js';
import { listFiles } from '../../resources/remittances/remittance-repository.js';
import {
  doneNotices,
  type DoneWord,
  refusalOf,
  pageError,
  actorOf,
  formFile,
  formText,
  needs,
  readStore,
  render,
  viewerOf,
  type ConsoleContext,
  type ConsoleSection,
  type UploadedFile,
  uploadName,
} from '../console-context.js';
import { mayIn } from '../console-roles.js';
import type { Html } from '../html.js';
import type { Notice } from '../layout.js';
import { eraFileResult, hhvbpImportResult } from './import-reads.js';
import { eraResultPage, hhvbpResultPage, IMPORTS_PATH, importsPage, type MeasureFields } from './import-pages.js';

const DONE = doneNotices({
  imported: 'Imported. This is what the file held.',
  already_imported: 'This very file was imported before: nothing was added. This is what it held.',
  measures: 'Imported the HHVBP measures: they are the year’s current figures now.',
});

/** A refusal of the form itself (not of the file): shown on the imports page, nothing imported. */
class FormRefusal extends Error {}

/** An import runs as the person: the admin CLI's operator command with actor user:<id>, and the deployment's outbox. */
const asThePerson = (ctx: ConsoleContext, person: Person): OperatorRunBy => ({
  actor: actorOf(person),
  outbox: ctx.services.outbox,
});

function chosenFile(request: FastifyRequest, what: string): UploadedFile {
  const file = formFile(request, 'file');
  if (!file || uploadName(file) === '') throw new FormRefusal(`Choose ${what} to import.`);
  if (!isStorableText(uploadName(file))) throw new FormRefusal('The file’s name holds characters that are not text.');
  return file;
}

function optionalNumber(raw: string, what: string): number | undefined {
  if (raw.trim() === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new FormRefusal(`${what} must be a number, got "${raw}".`);
  return value;
}

function measureFields(request: FastifyRequest): MeasureFields {
  return {
    performanceYear: formText(request, 'performance_year'),
    officialTps: formText(request, 'official_tps'),
    officialAdjustment: formText(request, 'official_adjustment'),
  };
}

function measureInput(request: FastifyRequest) {
  const fields = measureFields(request);
  const year = Number(fields.performanceYear);
  if (!Number.isSafeInteger(year) || year < 2000)
    throw new FormRefusal(`The performance year must be a year, got "${fields.performanceYear}".`);
  const file = chosenFile(request, 'a measure file (CSV)');
  return {
    performanceYear: year,
    csv: file.content.toString('utf8'),
    sourceFile: uploadName(file),
    officialTotalPerformanceScore: optionalNumber(fields.officialTps, 'The official total performance score'),
    officialPaymentAdjustmentPercent: optionalNumber(fields.officialAdjustment, 'The official payment adjustment'),
  };
}

async function showImports(
  ctx: ConsoleContext,
  request: FastifyRequest,
  reply: FastifyReply,
  notice?: Notice,
  status = 200,
) {
  const viewer = viewerOf(request);
  const store = readStore(ctx, viewer.person);
  const [files, imports] = await Promise.all([listFiles(store), listImports(store)]);
  const fields = notice ? measureFields(request) : { performanceYear: '', officialTps: '', officialAdjustment: '' };
  const body = importsPage(viewer, mayIn(viewer.person.role, 'administer'), { files, imports }, fields);
  return render(request, reply, 'Imports', body, notice, status);
}

/**
 * Runs an import and answers with its result page, or with the imports page saying why nothing was imported: the
 * form's own refusal, or the importer's (whose message names the segment and line, or the row and column).
 */
async function importing(
  ctx: ConsoleContext,
  request: FastifyRequest,
  reply: FastifyReply,
  run: () => Promise<{ path: string; done: DoneWord<typeof DONE> }>,
) {
  try {
    const { path, done } = await run();
    return DONE.redirect(reply, path, done);
  } catch (err) {
    if (err instanceof FormRefusal)
      return showImports(ctx, request, reply, { kind: 'refused', text: err.message }, 400);
    return showImports(ctx, request, reply, refusalOf(err), 422);
  }
}

function resultRoute<T>(
  ctx: ConsoleContext,
  read: (store: ReturnType<typeof readStore>, id: string) => Promise<T | undefined>,
  page: (result: T) => Html,
  title: string,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const { id } = request.params as { id: string };
    const result = await read(readStore(ctx, viewerOf(request).person), id);
    if (!result) throw pageError(404, 'There is no such import in this agency.');
    return render(request, reply, title, page(result), DONE.of(request));
  };
}

/**
 * Imports of the agency's files: an 835 (remittances) and an HHVBP measure file, uploaded by an administrator and run
 * by the admin CLI's importers as that person; the result of each, and the history of both, for everyone.
 */
export const importsSection: ConsoleSection = {
  nav: { path: IMPORTS_PATH, label: 'Imports', capability: 'read' },
  register(scope, ctx) {
    scope.get('/imports', async (request, reply) => showImports(ctx, request, reply));
    scope.get('/imports/era/:id', resultRoute(ctx, eraFileResult, eraResultPage, 'Imported 835 file'));
    scope.get('/imports/hhvbp/:id', resultRoute(ctx, hhvbpImportResult, hhvbpResultPage, 'HHVBP import'));

    scope.post('/imports/era', { preHandler: needs('administer') }, async (request, reply) =>
      importing(ctx, request, reply, async () => {
        const { person } = viewerOf(request);
        const file = chosenFile(request, 'an 835 file');
        const source = bytesSource(uploadName(file), file.content);
        const result = await importEraAs(ctx.db, person.agencyId, asThePerson(ctx, person), source);
        return { path: `${IMPORTS_PATH}/era/${result.eraFileId}`, done: result.outcome };
      }),
    );

    scope.post('/imports/hhvbp', { preHandler: needs('administer') }, async (request, reply) =>
      importing(ctx, request, reply, async () => {
        const { person } = viewerOf(request);
        const result = await importMeasuresAs(ctx.db, person.agencyId, asThePerson(ctx, person), measureInput(request));
        return { path: `${IMPORTS_PATH}/hhvbp/${result.importId}`, done: 'measures' as const };
      }),
    );
  },
};
