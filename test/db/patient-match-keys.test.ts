import t from 'tap';
import { normalizeNameKey, normalizePhoneKey, patientMatchKeys } from '../../src/db/patient-match-keys.js';

t.test('names compare without case, accents or stray spaces', async (t) => {
  t.equal(normalizeNameKey('  José  María '), 'jose maria');
  t.equal(normalizeNameKey('NGUYỄN'), 'nguyen');
  t.equal(normalizeNameKey("O'Brien"), "o'brien", 'punctuation is part of the name');
});

t.test('phones compare as their ten national digits', async (t) => {
  t.equal(normalizePhoneKey('+1 (614) 555-0142'), '6145550142');
  t.equal(normalizePhoneKey('614.555.0142'), '6145550142');
  t.equal(normalizePhoneKey(''), null);
  t.equal(normalizePhoneKey(null), null);
});

t.test('a patient row gets all three keys', async (t) => {
  t.same(patientMatchKeys({ first_name: 'Zoë', last_name: 'Muñoz', primary_phone: '419-555-0128' }), {
    match_last_name: 'munoz',
    match_first_name: 'zoe',
    match_phone: '4195550128',
  });
});
