import t from 'tap';
import { patientName } from '../../src/domain/intake/patient-name.js';
import { parseServiceAddress, serviceZip } from '../../src/domain/intake/service-address.js';
import { pendingInsurance } from '../../src/domain/intake/coverage.js';
import { requestShapeOf, deprecationsOf, additionalFields } from '../../src/domain/intake/request-shape.js';
import { identityOf } from '../../src/domain/intake/identity.js';

const parts = (patient_name: string) => {
  const { first_name, middle_name, last_name, suffix } = patientName({ patient_name });
  return [first_name, middle_name, last_name, suffix];
};

t.test('patient_name is split "First Middle Last" or "Last, First Middle", with a trailing suffix', async (t) => {
  t.same(parts('Ada Lovelace'), ['Ada', null, 'Lovelace', null]);
  t.same(parts('  Mary  Ann   Smith '), ['Mary', 'Ann', 'Smith', null]);
  t.same(parts('John Smith Jr'), ['John', null, 'Smith', 'Jr']);
  t.same(parts('John Smith, III'), ['John', null, 'Smith', 'III']);
  t.same(parts('Smith, John Adam'), ['John', 'Adam', 'Smith', null]);
  t.same(parts('De La Cruz, Maria'), ['Maria', null, 'De La Cruz', null]);
  t.same(parts('Smith Sr., John'), ['John', null, 'Smith', 'Sr.']);
  t.same(parts('Smith, John, Jr.'), ['John', null, 'Smith', 'Jr.']);
  t.same(parts('Jr Smith'), ['Jr', null, 'Smith', null], 'a two-word name has no suffix');
  for (const unsplittable of ['Cher', 'Smith,', ', John', 'A, B, C']) {
    t.throws(
      () => patientName({ patient_name: unsplittable }),
      { code: 'PLATFORM_INVALID_INPUT', details: { field: 'patient_name' } },
      unsplittable,
    );
  }
});

t.test('patient_address: street lines, city, state and ZIP of a US address', async (t) => {
  t.same(parseServiceAddress('12 Elm St, Apt 3, Springfield, OH 45501'), {
    address_line_1: '12 Elm St',
    address_line_2: 'Apt 3',
    city: 'Springfield',
    state: 'OH',
    zip_code: '45501',
  });
  t.same(parseServiceAddress('12 Elm St, Springfield oh 45501-1234'), {
    address_line_1: '12 Elm St',
    address_line_2: null,
    city: 'Springfield',
    state: 'OH',
    zip_code: '45501-1234',
  });
  t.same(parseServiceAddress('Springfield, OH 45501'), {
    address_line_1: 'Springfield',
    address_line_2: null,
    city: null,
    state: 'OH',
    zip_code: '45501',
  });
  t.same(
    parseServiceAddress('100 Main St 45501'),
    { address_line_1: '100 Main St', address_line_2: null, city: null, state: null, zip_code: '45501' },
    'St is not a state',
  );
  t.same(parseServiceAddress('Rural Route 2'), {
    address_line_1: 'Rural Route 2',
    address_line_2: null,
    city: null,
    state: null,
    zip_code: null,
  });
  t.equal(parseServiceAddress('  '), null);
  t.equal(parseServiceAddress(undefined), null);
});

t.test('service ZIP: patient_zip_code, else zip_code, else the address; blank counts as absent', async (t) => {
  const address = parseServiceAddress('1 A St, Town, OH 45501');
  t.match(serviceZip({ patient_zip_code: '43215', zip_code: '10001' }, address), {
    zip5: '43215',
    source: 'patient_zip_code',
  });
  t.match(serviceZip({ patient_zip_code: ' ', zip_code: '10001-2222' }, address), {
    zip_code: '10001-2222',
    zip5: '10001',
    source: 'zip_code',
  });
  t.match(serviceZip({}, address), { zip5: '45501', source: 'patient_address' });
  t.equal(serviceZip({}, null), null);
});

t.test('insurance: plan name from the bare string or insurance_name; nothing sent, no coverage', async (t) => {
  t.match(pendingInsurance({ insurance_name: 'Medicaid' }).coverages, [
    { plan_name: 'Medicaid', payor_id: null, coverage_order: 0 },
  ]);
  t.match(pendingInsurance({ insurance: ' ', insurance_name: 'Medicaid' }).coverages, [{ plan_name: 'Medicaid' }]);
  t.same(pendingInsurance({ insurance: ' ' }).coverages, []);
  t.match(pendingInsurance({ insurance: { insured_first_name: 'Al' } }).coverages, [
    { policy_holder: { relationship_to_insured: null, first_name: 'Al' } },
  ]);
  t.same(
    pendingInsurance({ insurance: { insured_first_name: 'Al' } }).missing,
    [],
    'without a relationship it is not known to be a dependent',
  );
  t.same(pendingInsurance({ insurance: { relationship_to_insured: '01', insured_first_name: 'Al' } }).missing, [
    'policy_holder_name',
  ]);
});

t.test('request shape: the earliest shape whose fields cover the body; extra properties do not count', async (t) => {
  t.equal(
    requestShapeOf({ service_line: 'hospice', patient_name: 'A B', zip_code: '10001', something_else: 1 }),
    '2026-04-01',
  );
  t.equal(requestShapeOf({ service_line: 'hospice', patient_name: 'A B', patient_dob: '1950-01-01' }), '2026-08-19');
  t.same(deprecationsOf({ service_line: 'hospice', patient_zip_code: '10001' }, '2026-08-19'), []);
  t.same(
    additionalFields({ service_line: 'x', insurance: 'Plan', a: 1 }),
    { a: 1 },
    'a bare insurance string has no extra keys',
  );
});

t.test('identity key: normalized names and phone, dob as sent; no key without dob or phone digits', async (t) => {
  const name = patientName({ patient_first_name: ' José ', patient_last_name: 'NGUYỄN' });
  t.same(identityOf(name, '1940-01-01', '1-614-555-0142'), {
    match_last_name: 'nguyen',
    match_first_name: 'jose',
    dob: '1940-01-01',
    match_phone: '6145550142',
  });
  t.equal(identityOf(name, undefined, '6145550142'), null);
  t.equal(identityOf(name, '1940-01-01', 'n/a'), null);
});
