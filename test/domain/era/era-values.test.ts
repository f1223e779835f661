import t from 'tap';
import { formatCents, parseCents, parseDate } from '../../../src/domain/era/era-values.js';

t.test('X12 amounts to cents', async (t) => {
  const cases: [string, number | null][] = [
    ['150000.00', 15000000],
    ['-1.27', -127],
    ['220', 22000],
    ['.5', 50],
    ['0', 0],
    ['-0.00', 0],
    ['12.3', 1230],
    ['12.300', 1230],
    ['12.345', null],
    ['', null],
    ['-', null],
    ['.', null],
    ['1,000.00', null],
    ['8O.00', null],
    ['+5', null],
    ['1e3', null],
  ];
  for (const [text, cents] of cases) t.equal(parseCents(text), cents, JSON.stringify(text));
});

t.test('cents to the contract money string', async (t) => {
  t.same([0, 5, -5, 127, -127, 15000000, 2058_00].map(formatCents), [
    '0.00',
    '0.05',
    '-0.05',
    '1.27',
    '-1.27',
    '150000.00',
    '2058.00',
  ]);
});

t.test('CCYYMMDD dates that exist on the calendar', async (t) => {
  t.equal(parseDate('20261104'), '2026-11-04');
  t.equal(parseDate('20240229'), '2024-02-29', 'leap day');
  for (const bad of ['20250229', '20002316', '20261301', '2026110', '261104', '2026-11-04', ''])
    t.equal(parseDate(bad), null, bad);
});
