import t from 'tap';
import { ageLabel, birthYear, lastFour, dateToYear, instantToYear, zip3 } from '../../src/domain/deidentify.js';

const asOf = new Date('2026-11-22T12:00:00Z');

t.test('dates reduce to the year', async (t) => {
  t.equal(dateToYear('2026-03-04'), '2026-01-01');
  t.equal(instantToYear(new Date('2025-12-31T23:00:00Z')), '2025-01-01T00:00:00.000Z');
  t.equal(dateToYear(null), null);
  t.equal(instantToYear(null), null);
});

t.test('ages over 89 are grouped as 90+ and their birth year withheld', async (t) => {
  t.equal(ageLabel('1936-11-22', asOf), '90+', 'turns 90 today');
  t.equal(ageLabel('1936-11-23', asOf), '89', 'still 89 until tomorrow');
  t.equal(birthYear('1936-11-23', asOf), 1936);
  t.equal(birthYear('1930-01-01', asOf), null);
  t.equal(ageLabel(null, asOf), null);
});

t.test('ZIP codes keep three digits, or 000 in sparse areas', async (t) => {
  t.equal(zip3('02110-1234'), '021');
  t.equal(zip3('03601'), '000');
  t.equal(zip3('12'), null);
});

t.test('check and trace numbers keep the last four characters', async (t) => {
  t.equal(lastFour('1234567890'), '****7890');
  t.equal(lastFour(null), null);
});
