import t from 'tap';
import { editDistance, meantFields, nearMissWarnings } from '../../src/domain/intake/near-miss-fields.js';

const fields = [
  'service_line',
  'patient_name',
  'patient_zip_code',
  'zip_code',
  'patient_dob',
  'patient_phone',
  'patient_alt_phone',
  'notes',
  'payor_id',
  'referral_date',
  'referral_type',
];

t.test('edit distance counts inserts, deletes, substitutions and swapped neighbours', async (t) => {
  t.equal(editDistance('kitten', 'sitting'), 3);
  t.equal(editDistance('pateint', 'patient'), 1, 'a swap is one edit');
  t.equal(editDistance('', 'abc'), 3);
  t.equal(editDistance('same', 'same'), 0);
});

t.test('the field a misspelt name meant', async (t) => {
  t.same(meantFields('patient_zipcode', fields), ['patient_zip_code'], 'a missing separator');
  t.same(meantFields('patientZipCode', fields), ['patient_zip_code'], 'camel case');
  t.same(meantFields('Patient-DOB', fields), ['patient_dob'], 'case and dashes');
  t.same(meantFields('pateint_phone', fields), ['patient_phone'], 'swapped letters');
  t.same(meantFields('referal_date', fields), ['referral_date'], 'a letter missing');
  t.same(meantFields('referral_typo', fields), ['referral_type'], 'one letter wrong');
  t.same(meantFields('payer_id', fields), ['payor_id']);
  t.same(meantFields('note', fields), ['notes'], 'one edit on a short name');
});

t.test('names far from every field are not guesses', async (t) => {
  t.same(meantFields('crm_id', fields), [], "a sender's own property");
  t.same(meantFields('priority_flag', fields), []);
  t.same(meantFields('zip', fields), [], 'too short to guess from');
  t.same(meantFields('phone', fields), [], 'two edits from nothing');
});

t.test('warnings name each near miss and the field meant; known fields and far names give none', async (t) => {
  const body = {
    service_line: 'hospice',
    patient_zipcode: '02110',
    patient_phone: '617-555-0100',
    crm_id: 'X-1',
    referal_type: 'soc',
  };
  t.same(nearMissWarnings(body, fields), [
    'Unknown field "patient_zipcode" was stored as sent but not read as any field; did you mean "patient_zip_code"? The field meant counts as missing.',
    'Unknown field "referal_type" was stored as sent but not read as any field; did you mean "referral_type"? The field meant counts as missing.',
  ]);
  t.same(nearMissWarnings({ service_line: 'hospice' }, fields), []);
});

t.test('a name equally close to two fields names both', async (t) => {
  t.same(nearMissWarnings({ patient_xphone: '1' }, ['patient_phone', 'patient_xphones']), [
    'Unknown field "patient_xphone" was stored as sent but not read as any field; did you mean "patient_phone" or "patient_xphones"? The field meant counts as missing.',
  ]);
});
