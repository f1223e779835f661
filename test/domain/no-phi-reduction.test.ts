import t from 'tap';
import { reduceForNoPhi, type HandleLookup } from '../../src/domain/no-phi-reduction.js';
import { noPhiPlans, operations } from '../../src/generated/contract.js';
import type { PseudonymKind } from '../../src/shared/ids.js';

const asOf = new Date('2026-11-22T12:00:00Z');

/** Handles made from the ids, counting the lookups. */
function lookups() {
  const calls: { kind: PseudonymKind; ids: string[] }[] = [];
  const lookup: HandleLookup = async (kind, ids) => {
    calls.push({ kind, ids });
    return new Map(ids.map((id) => [id, `H(${id})`]));
  };
  return { calls, lookup };
}

const episode = { id: 'ep_1', type: 'home_health', status: 'active', start_date: '2026-03-04', end_date: null };
const patient = {
  id: 'pat_1',
  mrn: 'MRN-1',
  first_name: 'Ada',
  middle_name: null,
  last_name: 'Lovelace',
  suffix: null,
  display_name: 'Ada Lovelace',
  dob: '1951-12-31',
  birth_year: 1951,
  age: '74',
  gender: 'female',
  status: 'active',
  service_line: 'home_health',
  office_id: 'off_1',
  current_episode: episode,
  created_at: '2026-03-04T10:11:12.345Z',
  updated_at: '2026-05-06T07:08:09.000Z',
};

t.test('the plan of each pseudonymized operation comes from the contract', async (t) => {
  t.equal(operations.getPatient.noPhiSchema, 'PatientResponse');
  t.equal(operations.getHealth.noPhiSchema, null, 'allowed operations have none');
  t.equal(operations.createReferral.noPhiSchema, null, 'denied operations have none');
  t.same(noPhiPlans.Task.fields.title, { reduce: 'withheld', empty: '' }, 'a required string is withheld as ""');
  t.same(noPhiPlans.Task.fields.description, { reduce: 'withheld', empty: null });
});

t.test('a list: one pass, one handle lookup for the whole page, the handler result left as it was', async (t) => {
  const { calls, lookup } = lookups();
  const body = {
    data: [patient, { ...patient, id: 'pat_2', current_episode: null }, { ...patient }],
    meta: { total: 3, next_cursor: 'c' },
  };
  const before = JSON.stringify(body);
  const reduced = (await reduceForNoPhi(body, 'PatientListResponse', lookup, asOf)) as typeof body;
  t.same(calls, [{ kind: 'patient', ids: ['pat_1', 'pat_2', 'pat_1'] }]);
  t.same(reduced.data[0], {
    id: 'H(pat_1)',
    mrn: null,
    first_name: null,
    middle_name: null,
    last_name: null,
    suffix: null,
    display_name: null,
    dob: null,
    birth_year: null,
    age: '75',
    gender: 'female',
    status: 'active',
    service_line: 'home_health',
    office_id: 'off_1',
    current_episode: { ...episode, start_date: '2026-01-01' },
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });
  t.equal(reduced.data[1].current_episode, null);
  t.same(reduced.meta, body.meta, 'unplanned parts are kept');
  t.equal(JSON.stringify(body), before, 'the handler result is not changed');
});

t.test('no handle to look up: no lookup', async (t) => {
  const { calls, lookup } = lookups();
  const reduced = await reduceForNoPhi({ data: { ...patient, id: null } }, 'PatientResponse', lookup, asOf);
  t.same(calls, []);
  t.match(reduced, { data: { id: null, first_name: null } });
});

t.test('nested schemas, arrays, empty values by type, ZIP, birth dates and categories', async (t) => {
  const { lookup } = lookups();
  const holder = {
    relationship_to_insured: '01',
    first_name: 'Bo',
    middle_name: null,
    last_name: 'Lee',
    suffix: null,
    dob: '1936-12-31',
    gender: 'male',
    address: { line1: '1 Main St', line2: null, city: 'Boston', state: 'MA', zip_code: '02110-1234' },
  };
  const intake = {
    id: 'int_1',
    patient_id: 'pat_9',
    service_line: 'Home Health ',
    custom_data: { a: 'x' },
    notes: 'free',
    document_ids: ['doc_1'],
    diagnoses: [
      { code: 'I50.9', description: 'Heart failure', is_primary: true },
      { code: 'E11.9', is_primary: false },
    ],
    insurance: [{ plan_name: 'Plan', policy_number: 'P1', effective_date: '2020-07-23', policy_holder: holder }],
  };
  const { data } = (await reduceForNoPhi({ data: intake }, 'IntakeResponse', lookup, asOf)) as {
    data: Record<string, unknown>;
  };
  t.match(data, {
    patient_id: 'H(pat_9)',
    service_line: 'other',
    custom_data: {},
    notes: null,
    document_ids: ['doc_1'],
  });
  t.same(
    data.diagnoses,
    [
      { code: 'I50.9', description: '', is_primary: true },
      { code: 'E11.9', is_primary: false },
    ],
    'an absent description stays absent',
  );
  t.match(data.insurance, [{ plan_name: null, policy_number: null, effective_date: '2020-01-01' }]);
  t.same(
    (data.insurance as Record<string, unknown>[])[0].policy_holder,
    {
      relationship_to_insured: '01',
      first_name: null,
      middle_name: null,
      last_name: null,
      suffix: null,
      dob: null,
      gender: 'male',
      address: { line1: null, line2: null, city: null, state: 'MA', zip_code: '021' },
    },
    'born 90 years before the current year: no birth year',
  );
  const { data: referral } = (await reduceForNoPhi(
    { data: { referral_type: ' ROC', service_line: 'hospice' } },
    'ReferralResponse',
    lookup,
    asOf,
  )) as { data: object };
  t.same(referral, { referral_type: 'roc', service_line: 'hospice' }, 'known categories are kept, normalized');
});

t.test('a conditional handle: a task names a patient by handle, other resources by id', async (t) => {
  const { calls, lookup } = lookups();
  const task = (type: string, id: string) => ({
    data: { id: 'task_1', title: 'Call', description: null, due_date: '2026-07-23', related_resource: { type, id } },
  });
  t.same(await reduceForNoPhi(task('patient', 'pat_1'), 'TaskResponse', lookup, asOf), {
    data: {
      id: 'task_1',
      title: '',
      description: null,
      due_date: '2026-01-01',
      related_resource: { type: 'patient', id: 'H(pat_1)' },
    },
  });
  t.same(
    ((await reduceForNoPhi(task('visit', 'visit_1'), 'TaskResponse', lookup, asOf)) as ReturnType<typeof task>).data
      .related_resource,
    { type: 'visit', id: 'visit_1' },
  );
  t.equal(calls.length, 1, 'the visit needed no lookup');
});

t.test('handles of several kinds: one lookup per kind', async (t) => {
  const { calls, lookup } = lookups();
  const order = {
    id: 'ord_1',
    patient_id: 'pat_1',
    physician_id: 'phy_1',
    physician_name: 'Dr. X',
    sent_at: '2026-07-23T13:37:11.000Z',
  };
  const reduced = await reduceForNoPhi({ data: [order] }, 'PhysicianOrderListResponse', lookup, asOf);
  t.same(reduced, {
    data: [
      {
        id: 'H(ord_1)',
        patient_id: 'H(pat_1)',
        physician_id: 'H(phy_1)',
        physician_name: null,
        sent_at: '2026-01-01T00:00:00.000Z',
      },
    ],
  });
  t.same(calls.map((c) => c.kind).sort(), ['patient', 'physician', 'physician_order']);
});
