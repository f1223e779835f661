import t from 'tap';
import { readDelimiters, SegmentReader, type X12Error, type Segment } from '../../../src/domain/era/x12-segments.js';

/** ISA with `*` elements, `^` repetition, `:` components and `~` segments: exactly 106 characters. */
const ISA =
  'ISA*00*          *00*          *ZZ*PAYER          *ZZ*AGENCY         *261102*0930*^*00501*000004721*0*P*:~';

function readAll(text: string, chunkSize = text.length): Segment[] {
  const reader = new SegmentReader();
  const segments: Segment[] = [];
  for (let i = 0; i < text.length; i += chunkSize) segments.push(...reader.push(text.slice(i, i + chunkSize)));
  reader.end();
  return segments;
}

t.test('the delimiters are read from the fixed-width ISA', async (t) => {
  t.equal(ISA.length, 106);
  t.same(readDelimiters(ISA), { element: '*', component: ':', repetition: '^', segment: '~' });
  const pipes = ISA.replaceAll('*', '|').replace(':~', '>\n');
  t.same(
    readDelimiters(pipes),
    { element: '|', component: '>', repetition: '^', segment: '\n' },
    'a line break may itself be the terminator',
  );
  t.equal(
    readDelimiters(ISA.replace('*^*', '*U*')).repetition,
    null,
    'ISA11 U (version 00401) declares no repetition separator',
  );
});

t.test('a bad ISA is refused with what is wrong', async (t) => {
  t.throws(() => readDelimiters('GS*HP*X~'), /bad ISA: an X12 file begins with the ISA segment/);
  t.throws(() => readDelimiters(ISA.slice(0, 90)), /the ISA segment is 106 characters long; the file ends after 90/);
  const narrow = ISA.replace('PAYER          ', 'PAYER         ').replace('AGENCY         ', 'AGENCY          ');
  t.equal(narrow.length, 106);
  t.throws(() => readDelimiters(narrow), /bad ISA: ISA06 must be 15 characters wide; it is "PAYER {9}"/);
  t.throws(
    () => readDelimiters(ISA.replace('*P*:~', '*P:~~')),
    /bad ISA: ISA has 16 elements of fixed width; 15 were found/,
  );
  t.throws(() => readDelimiters(ISA.replace(':~', '::')), /must be distinct punctuation/);
});

t.test('segments and elements, numbered and with the line each starts on', async (t) => {
  const segments = readAll(
    `${ISA}\r\nGS*HP*PAYER*AGENCY*20261102*0930*1*X*005010X221A1~\r\nST*835*0001~CLP*A1*1*100.00*80.00~\n`,
  );
  t.same(
    segments.map((s) => [s.id, s.index, s.line]),
    [
      ['ISA', 1, 1],
      ['GS', 2, 2],
      ['ST', 3, 3],
      ['CLP', 4, 3],
    ],
  );
  t.same(
    segments[3].elements,
    ['CLP', 'A1', '1', '100.00', '80.00'],
    'elements[n] is the element the standard numbers n',
  );
});

t.test('chunk boundaries anywhere give the same segments (CRLF, LF, none)', async (t) => {
  const body = ['GS*HP*P*A*20261102*0930*1*X*005010X221A1', 'ST*835*0001', 'SE*2*0001', 'GE*1*1', 'IEA*1*000004721'];
  for (const [name, separator] of [
    ['CRLF', '~\r\n'],
    ['LF', '~\n'],
    ['none', '~'],
  ] as const) {
    const text = `\uFEFF${ISA.slice(0, -1)}${separator}${body.join(separator)}${separator}`;
    const whole = readAll(text).map((s) => [s.elements.join('*'), s.line]);
    for (const size of [1, 7, 105, 106, 107])
      t.same(
        readAll(text, size).map((s) => [s.elements.join('*'), s.line]),
        whole,
        `${name}, chunks of ${size}`,
      );
    t.equal(whole.length, 6);
  }
});

t.test('a truncated file is refused at its last, unterminated segment', async (t) => {
  const error = t.throws(() => readAll(`${ISA}\nGS*HP*P*A*20261102*0930*1*X*005010X221A1~\nCLP*A1*1*100`)) as X12Error;
  t.match(error, { name: 'X12Error', at: { index: 3, line: 3 } });
  t.match(
    error.message,
    /segment 3 \(CLP\), line 3: the file ends inside a segment \(truncated\): "CLP\*A1\*1\*100" has no segment terminator "~"/,
  );
  t.throws(() => readAll(''), /the file is empty/);
  t.throws(() => readAll('ISA*00*short~'), /the ISA segment is 106 characters long/);
  t.throws(() => readAll(`${ISA}\nG$*HP~`), /segment 2 \(G\$\*HP\), line 2: "G\$" is not a segment id/);
});

t.test('a character text cannot hold is refused at its segment, element and line, shown as U+FFFD', async (t) => {
  const file = (clp: string, n1 = 'N1*PR*PAYER') =>
    `${ISA}\nGS*HP*P*A*20261102*0930*1*X*005010X221A1~\nST*835*0001~\n${n1}~\n${clp}~\n`;
  for (const size of [1, 106, 1000]) {
    const nul = t.throws(() => readAll(file('CLP*A1*1*100.00*80.00**MA*PC\u00001'), size)) as X12Error;
    t.match(nul, { name: 'X12Error', at: { index: 5, line: 5 } });
    t.equal(
      nul.message,
      'segment 5 (CLP*A1*1*100.00*80.00**MA*PC\uFFFD1), line 5: CLP07 holds U+0000 (a NUL byte), which is not text: the file is damaged or not X12',
      `chunks of ${size}`,
    );
  }
  t.throws(() => readAll(file('CLP*A1*1*100.00*80.00', 'N1*PR*PAYER \uDE00')), {
    message:
      'segment 4 (N1*PR*PAYER \uFFFD), line 4: N102 holds U+DE00 (an unpaired UTF-16 surrogate), which is not text: the file is damaged or not X12',
  });
  t.equal(
    readAll(file('CLP*A1*1*100.00*80.00', 'N1*PR*PAYER \u{1F600}'))[3].elements[2],
    'PAYER \u{1F600}',
    'a surrogate pair is a character like any other',
  );
  t.throws(() => readAll(file('\u0000CLP*A1*1*100.00*80.00')), {
    message: /^segment 5 \(\uFFFDCLP\*A1.*\), line 5: the segment id holds U\+0000/,
  });
  t.throws(() => readAll(ISA.replace('PAYER ', 'PAYER\u0000')), {
    message: /^segment 1 \(ISA\*00\*.*\*PAYER\uFFFD.*\), line 1: ISA06 holds U\+0000/,
  });
  t.throws(() => readAll(`${ISA.slice(0, -1)}\u0000GS*HP\u0000`), {
    message:
      /^segment 1 \(ISA\*00\*.*\), line 1: bad ISA: the segment terminator is U\+0000 \(a NUL byte\), which is not text/,
  });
});
