import type { GovernedQuery, QueryColumn } from '../queries/governed-query.js';
import type { QueryTokenRow } from './query-token-repository.js';

type TemplateType = 'power-query' | 'office-script';

interface TemplateSource {
  token: QueryTokenRow;
  query: GovernedQuery<any>;
  /** The service's absolute public base URL (TOKEN_ISSUER). */
  baseUrl: string;
}

/** Rows per request of a template: the route's maximum, so a refresh makes as few requests as it can. */
const TEMPLATE_PAGE_SIZE = 1000;

const M_TYPES: Record<QueryColumn['type'], string> = {
  string: 'type text',
  integer: 'Int64.Type',
  number: 'type number',
  boolean: 'type logical',
  date: 'type date',
  'date-time': 'type datetimezone',
};

/** An M text literal: quotes doubled, one line. */
const mText = (value: string) => `"${value.replace(/"/g, '""').replace(/[\r\n]+/g, ' ')}"`;
/** A comment line's text: nothing that ends the comment early. */
const commentText = (value: string) => value.replace(/[\r\n]+/g, ' ').replace(/\*\//g, '* /');

function runPath(query: GovernedQuery<any>): string {
  return `api/v1/ext/queries/${encodeURIComponent(query.id)}/run`;
}

function header({ token, query, baseUrl }: TemplateSource, prefix: string): string[] {
  return [
    `${prefix} Governed query ${query.id}: ${commentText(query.title)}.`,
    `${prefix} ${commentText(query.description)}`,
    `${prefix} Query token ${token.id} ("${commentText(token.name)}"), ${token.phi_mode}, expires ${token.expires_at.toISOString()}.`,
    `${prefix} Parameters, fixed by the token: ${commentText(JSON.stringify(token.parameters))}.`,
    `${prefix} Service: ${commentText(baseUrl)}. Every refresh loads every row, following nextCursor to the last page.`,
  ];
}

/**
 * Power Query M for Excel's Get Data > Blank Query. The request is described by four bindings (BaseUrl, RelativePath,
 * RequestHeaders, RequestBody) that FetchPage hands to Web.Contents as they are; List.Generate follows nextCursor.
 */
function powerQuery(source: TemplateSource): string {
  const { query, baseUrl } = source;
  const types = query.columns.map((c) => `{${mText(c.name)}, ${M_TYPES[c.type]}}`).join(', ');
  const names = query.columns.map((c) => mText(c.name)).join(', ');
  return [
    ...header(source, '//'),
    '//',
    '// Before the first refresh: Home > Manage Parameters > New Parameter, Name QueryToken, Type Text, Current Value',
    "// the token's secret (qt_...), shown once when the token was created. Keep it in that parameter: a web request",
    "// that reads a worksheet cell trips Excel's privacy firewall (Formula.Firewall). When Excel asks how to connect",
    '// to the service, choose Anonymous: the token travels in the Authorization header below.',
    'let',
    `    BaseUrl = ${mText(baseUrl.replace(/\/+$/, ''))},`,
    `    RelativePath = ${mText(runPath(query))},`,
    `    PageSize = ${TEMPLATE_PAGE_SIZE},`,
    '    RequestHeaders = [#"Authorization" = "Bearer " & QueryToken, #"Content-Type" = "application/json", #"svc-contract-version" = "2"],',
    '    RequestBody = (cursor as nullable text) as record => if cursor = null then [limit = PageSize] else [limit = PageSize, cursor = cursor],',
    '    FetchPage = (cursor as nullable text) as record =>',
    '        let',
    '            Response = Web.Contents(BaseUrl, [RelativePath = RelativePath, Headers = RequestHeaders, Content = Json.FromValue(RequestBody(cursor)), ManualStatusHandling = {400, 401, 402, 403, 404, 409, 429, 500, 501, 503, 504}]),',
    '            Status = Value.Metadata(Response)[Response.Status],',
    '            Answer = Json.Document(Response),',
    '            Failure = if Value.Is(Answer[error], type record) then Answer[error][code] & ": " & Answer[error][message] else Answer[code] & ": " & Record.FieldOrDefault(Answer, "user_message", Answer[error])',
    '        in',
    '            if Status = 200 then Answer[data] else error Error.Record("Query failed (HTTP " & Text.From(Status) & ")", Failure),',
    '    Pages = List.Generate(() => FetchPage(null), (page) => page <> null, (page) => if page[nextCursor] = null then null else FetchPage(page[nextCursor])),',
    '    Rows = List.Combine(List.Transform(Pages, each [rows])),',
    `    Loaded = Table.FromRecords(Rows, {${names}}, MissingField.UseNull),`,
    `    Typed = Table.TransformColumnTypes(Loaded, {${types}})`,
    'in',
    '    Typed',
    '',
  ].join('\n');
}

const TS_CELL_TYPES = 'string | number | boolean | null';

/** A worksheet name from the token's name: at most 31 characters, none of those Excel refuses. */
function sheetName(token: QueryTokenRow): string {
  return (
    token.name
      .replace(/[\\/?*[\]:]/g, ' ')
      .trim()
      .slice(0, 31) || token.query_id.slice(0, 31)
  );
}

/** An Office Script (Excel on the web > Automate > New Script): fetches every page from the browser into one sheet. */
function officeScript(source: TemplateSource): string {
  const { token, query, baseUrl } = source;
  const url = `${baseUrl.replace(/\/+$/, '')}/${runPath(query)}`;
  return [
    ...header(source, '//'),
    '//',
    "// Paste the token's secret (qt_...), shown once when the token was created, into QUERY_TOKEN below, then Run.",
    '// The script calls the service from the browser; the service answers CORS for query tokens from Office origins.',
    '',
    'const QUERY_TOKEN = "PASTE_QUERY_TOKEN_HERE";',
    `const RUN_URL = ${JSON.stringify(url)};`,
    `const PAGE_SIZE = ${TEMPLATE_PAGE_SIZE};`,
    `const SHEET_NAME = ${JSON.stringify(sheetName(token))};`,
    `const COLUMNS: string[] = ${JSON.stringify(query.columns.map((c) => c.name))};`,
    '',
    `type Cell = ${TS_CELL_TYPES};`,
    'interface QueryPage {',
    '  data: { rows: { [column: string]: Cell }[]; nextCursor: string | null };',
    '}',
    'interface RequestBody {',
    '  limit: number;',
    '  cursor?: string;',
    '}',
    '',
    'async function fetchPage(cursor: string | null): Promise<QueryPage> {',
    '  const body: RequestBody = { limit: PAGE_SIZE };',
    '  if (cursor !== null) body.cursor = cursor;',
    '  const response = await fetch(RUN_URL, {',
    '    method: "POST",',
    '    headers: { "Authorization": "Bearer " + QUERY_TOKEN, "Content-Type": "application/json", "svc-contract-version": "2" },',
    '    body: JSON.stringify(body),',
    '  });',
    '  if (!response.ok) throw new Error("Query failed (HTTP " + response.status + "): " + (await response.text()));',
    '  return (await response.json()) as QueryPage;',
    '}',
    '',
    'async function main(workbook: ExcelScript.Workbook): Promise<void> {',
    '  const values: (string | number | boolean)[][] = [COLUMNS];',
    '  let cursor: string | null = null;',
    '  do {',
    '    const page = await fetchPage(cursor);',
    '    for (const row of page.data.rows) values.push(COLUMNS.map((column) => row[column] ?? ""));',
    '    cursor = page.data.nextCursor;',
    '  } while (cursor !== null);',
    '  const sheet = workbook.getWorksheet(SHEET_NAME) ?? workbook.addWorksheet(SHEET_NAME);',
    '  sheet.getRange().clear();',
    '  sheet.getRangeByIndexes(0, 0, values.length, COLUMNS.length).setValues(values);',
    '}',
    '',
  ].join('\n');
}

export function excelTemplate(type: TemplateType, source: TemplateSource): string {
  return type === 'power-query' ? powerQuery(source) : officeScript(source);
}

export function templateFileName(token: QueryTokenRow, type: TemplateType): string {
  const stem =
    token.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || token.query_id;
  return `${stem}.${type === 'power-query' ? 'pq' : 'ts'}`;
}
