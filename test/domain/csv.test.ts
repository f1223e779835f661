import t from 'tap';
import { CsvSyntaxError, readCsv } from '../../src/domain/csv.js';

const fields = (text: string) => readCsv(text).map((record) => record.fields);

t.test('fields, CRLF and LF line ends, with or without a final line end', async (t) => {
  t.same(fields('a,b,c\r\n1,2,3\r\n'), [
    ['a', 'b', 'c'],
    ['1', '2', '3'],
  ]);
  t.same(fields('a,b\n1,2'), [
    ['a', 'b'],
    ['1', '2'],
  ]);
  t.same(fields('a,,\n'), [['a', '', '']], 'empty fields, a trailing comma included');
});

t.test('quoted fields hold commas, doubled quotes and line breaks (RFC 4180 2.5-2.7)', async (t) => {
  t.same(fields('"Smith, Jane","say ""hi""","line one\r\nline two"\r\nnext,row\r\n'), [
    ['Smith, Jane', 'say "hi"', 'line one\r\nline two'],
    ['next', 'row'],
  ]);
  t.same(fields('""\n'), [['']], 'an empty quoted field');
});

t.test('each record carries the line it starts on, so messages point into the file', async (t) => {
  const records = readCsv('h1,h2\n\n"multi\nline",x\nlast,y\n');
  t.same(
    records.map((r) => r.line),
    [1, 3, 5],
    'the blank line 2 is skipped; line 5 follows the two-line record',
  );
});

t.test('a byte order mark is dropped; blank lines are skipped', async (t) => {
  t.same(fields('\uFEFFid,name\n\n1,x\n\n'), [
    ['id', 'name'],
    ['1', 'x'],
  ]);
  t.same(fields(''), []);
});

t.test('malformed input is refused with its line', async (t) => {
  const refusal = (text: string) => {
    try {
      readCsv(text);
      return 'accepted';
    } catch (err) {
      t.ok(err instanceof CsvSyntaxError);
      return (err as Error).message;
    }
  };
  t.equal(refusal('a,b\n"open,c\nd\n'), 'line 2: a quoted field is never closed');
  t.equal(
    refusal('a,b\nx"y,z\n'),
    'line 2: a double quote inside an unquoted field; quote the whole field and double the quote ("")',
  );
  t.equal(refusal('a\n"quoted"tail,b\n'), 'line 2: text after the closing quote of a field');
  t.equal(refusal('a\rb\n'), 'line 1: a carriage return that does not end a line');
  t.equal(refusal('a\n"x\ny"z\n'), 'line 3: text after the closing quote of a field opened on line 2');
});
