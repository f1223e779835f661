import t from 'tap';
import {
  ageFromBirthYear,
  ageLabel,
  birthDateToYear,
  lastFour,
  dateToYear,
  instantToYear,
  zip3,
} from '../../src/domain/deidentify.js';

const asOf = new Date('2026-11-22T12:00:00Z');

t.test('dates reduce to the year', async (t) => {
  t.equal(dateToYear('2026-03-04'), '2026-01-01');
  t.equal(instantToYear(new Date('2025-12-31T23:00:00Z')), '2025-01-01T00:00:00.000Z');
  t.equal(dateToYear(null), null);
  t.equal(instantToYear(null), null);
});

t.test('a phi age is exact: it changes on the birthday', async (t) => {
  t.equal(ageLabel('1936-11-22', asOf), '90+', 'turns 90 today');
  t.equal(ageLabel('1936-11-23', asOf), '89', 'still 89 until tomorrow');
  t.equal(ageLabel(null, asOf), null);
});

t.test('a no_phi age comes from the birth year alone, so it never changes on the birthday', async (t) => {
  const dayBefore = new Date('2026-06-14T12:00:00Z');
  const dayAfter = new Date('2026-06-16T12:00:00Z');
  t.equal(ageFromBirthYear('1976-06-15', dayBefore), '50', 'the day before the 50th birthday');
  t.equal(ageFromBirthYear('1976-06-15', dayAfter), '50', 'the day after: the same');
  t.equal(ageFromBirthYear('1976-06-15', new Date('2026-12-31T23:59:59Z')), '50');
  t.equal(ageFromBirthYear('1976-06-15', new Date('2027-01-01T00:00:00Z')), '51', 'it moves on January 1 (UTC)');
  t.equal(ageFromBirthYear('1937-12-31', asOf), '89', 'born in 1937: 89 in 2026, whatever the day');
  t.equal(
    ageFromBirthYear('1936-12-31', asOf),
    '90+',
    'born in 1936: 90+ from January 1, 2026, though 89 until December 31',
  );
  t.equal(ageFromBirthYear(null, asOf), null);
});

t.test('a no_phi birth date is its year, withheld when the age reads 90+', async (t) => {
  t.equal(birthDateToYear('1951-12-31', asOf), '1951-01-01');
  t.equal(birthDateToYear('1937-01-01', asOf), '1937-01-01', 'born in 1937: kept all through 2026');
  t.equal(
    birthDateToYear('1936-12-31', asOf),
    null,
    'born in 1936: withheld all through 2026, before the birthday too',
  );
  t.equal(birthDateToYear('1936-12-31', new Date('2026-01-01T00:00:00Z')), null);
  t.equal(birthDateToYear(null, asOf), null);
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
