/** One record of a CSV file and the line it starts on (1-based), for messages that point into the file. */
export interface CsvRecord {
  line: number;
  fields: string[];
}

/** A file that is not RFC 4180 CSV, with the line where reading stopped. */
export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'CsvSyntaxError';
  }
}

/**
 * Reads RFC 4180 CSV: comma-separated fields, CRLF or LF line ends, fields in double quotes may hold commas, line
 * breaks and doubled quotes (""). A byte order mark is dropped and blank lines are skipped (hand-edited files end in
 * them). A quote inside an unquoted field, text after a closing quote and an unterminated quoted field are refused.
 */
export function readCsv(text: string): CsvRecord[] {
  const input = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const records: CsvRecord[] = [];
  let line = 1;
  let index = 0;
  while (index < input.length) {
    if (input[index] === '\n' || (input[index] === '\r' && input[index + 1] === '\n')) {
      index = skipLineEnd(input, index);
      line++;
      continue;
    }
    const start = line;
    const fields: string[] = [];
    for (;;) {
      const field = readField(input, index, line);
      fields.push(field.value);
      ({ index, line } = field);
      if (input[index] === ',') {
        index++;
        continue;
      }
      break;
    }
    index = skipLineEnd(input, index);
    line++;
    records.push({ line: start, fields });
  }
  return records;
}

function skipLineEnd(input: string, index: number): number {
  if (input[index] === '\r' && input[index + 1] === '\n') return index + 2;
  return index + 1;
}

function readField(input: string, index: number, line: number): { value: string; index: number; line: number } {
  if (input[index] === '"') return readQuoted(input, index + 1, line);
  let end = index;
  while (end < input.length && input[end] !== ',' && input[end] !== '\n' && input[end] !== '\r') {
    if (input[end] === '"')
      throw new CsvSyntaxError(
        line,
        'a double quote inside an unquoted field; quote the whole field and double the quote ("")',
      );
    end++;
  }
  if (input[end] === '\r' && input[end + 1] !== '\n')
    throw new CsvSyntaxError(line, 'a carriage return that does not end a line');
  return { value: input.slice(index, end), index: end, line };
}

function readQuoted(input: string, index: number, startLine: number): { value: string; index: number; line: number } {
  let value = '';
  let line = startLine;
  for (let i = index; i < input.length; i++) {
    const char = input[i];
    if (char === '"') {
      if (input[i + 1] === '"') {
        value += '"';
        i++;
        continue;
      }
      const next = input[i + 1];
      if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
        throw new CsvSyntaxError(
          line,
          `text after the closing quote of a field${line === startLine ? '' : ` opened on line ${startLine}`}`,
        );
      }
      return { value, index: i + 1, line };
    }
    if (char === '\n') line++;
    value += char;
  }
  throw new CsvSyntaxError(startLine, 'a quoted field is never closed');
}
