import t from 'tap';
import {
  cellProblem,
  fieldProblems,
  rowProblems,
  servedValues,
  type CollectionField,
} from '../../../src/domain/working-collections/fields.js';

const field = (type: CollectionField['type'], options?: string[]): CollectionField => ({
  id: 'f',
  label: 'F',
  type,
  ...(options ? { options } : {}),
});

t.test('each type takes its values and nothing else; null (an empty cell) fits every field', async (t) => {
  const cases: [CollectionField, unknown[], unknown[]][] = [
    [field('text'), ['', 'Call payer'], [3, true]],
    [field('number'), [0, -2.5, 98], ['98', Number.POSITIVE_INFINITY, Number.NaN]],
    [field('money'), ['1250.00', '0.99', '-35.10'], ['1250', '1250.5', '1,250.00', '01.00', 1250, '12.345']],
    [
      field('date'),
      ['2026-02-28', '2024-02-29'],
      ['2026-02-30', '2025-02-29', '2026-13-01', '2026-1-5', '2026-02-28T00:00:00Z'],
    ],
    [field('boolean'), [true, false], ['true', 0]],
    [field('choice', ['Coding', 'Eligibility']), ['Coding'], ['coding', 'Timely filing', 1]],
    [field('patient_reference'), ['pat_0123'], ['', '  ', 12]],
    [field('order_reference'), ['ord_77'], ['', false]],
  ];
  for (const [f, fits, misfits] of cases) {
    t.equal(cellProblem(f, null), null, `${f.type}: null`);
    for (const value of fits) t.equal(cellProblem(f, value), null, `${f.type} takes ${JSON.stringify(value)}`);
    for (const value of misfits) t.match(cellProblem(f, value), /expected/, `${f.type} refuses ${String(value)}`);
  }
});

t.test('field definitions: unique ids, labels, options on choice fields only', async (t) => {
  t.same(
    fieldProblems([
      { id: 'a', label: 'A', type: 'text' },
      { id: 'b', label: 'B', type: 'choice', options: ['x', 'y'] },
    ]),
    [],
  );
  t.same(
    fieldProblems([
      { id: 'a', label: 'A', type: 'text' },
      { id: 'a', label: ' ', type: 'number', options: ['1'] },
      { id: 'c', label: 'C', type: 'choice' },
      { id: 'd', label: 'D', type: 'choice', options: ['x', 'x'] },
    ]),
    [
      'field id a is used twice',
      'field a has no label',
      'field a is number, so it takes no options',
      'choice field c has no options',
      'choice field d lists an option twice',
    ],
  );
});

const FIELDS: CollectionField[] = [
  { id: 'patient', label: 'Patient', type: 'patient_reference' },
  { id: 'amount', label: 'Amount', type: 'money' },
  { id: 'appealed', label: 'Appealed', type: 'boolean' },
];

t.test('a row to store: unknown fields and misfits are named', async (t) => {
  t.same(rowProblems(FIELDS, { patient: 'pat_1', amount: '10.00' }), []);
  t.same(rowProblems(FIELDS, { patient: 'pat_1', amount: 10, colour: 'red' }), [
    'amount (money) holds 10; expected dollars as a decimal string with cents, such as "1250.00"',
    'colour is not a field of the collection',
  ]);
});

t.test('a row as served: every field in order, null when empty, a stored misfit withheld and named', async (t) => {
  const served = servedValues(FIELDS, { amount: 1250, patient: 'pat_1', retired_field: 'x' });
  t.same(served, { values: { patient: 'pat_1', amount: null, appealed: null }, misfits: ['amount'] });
  t.same(Object.keys(served.values), ['patient', 'amount', 'appealed']);
});
