import t from 'tap';
import { matchClaim, mrnCandidates, type CandidatePatient } from '../../../src/domain/era/claim-match.js';

const hartwell: CandidatePatient = { id: 'pat_1', lastNameKey: 'hartwell', policyNumbers: ['1EG4TE5MK73'] };
const claim = (memberId: string | null, lastNameKey: string | null) => ({
  patientControlNumber: 'M0100001-261001',
  memberId,
  lastNameKey,
});

t.test('the control number names a patient by MRN, whole or before its claim suffix', async (t) => {
  t.same(mrnCandidates('M0100001-261001'), ['M0100001-261001', 'M0100001']);
  t.same(mrnCandidates('M0100001'), ['M0100001']);
  t.same(mrnCandidates('-261001'), ['-261001'], 'a leading dash is no suffix');
});

t.test('matched: the MRN and the member id or last name agree', async (t) => {
  t.same(matchClaim(claim('1EG4TE5MK73', 'someone else'), hartwell, ['pat_1']), {
    status: 'matched',
    patientId: 'pat_1',
  });
  t.same(matchClaim(claim('OTHER', 'hartwell'), hartwell, []), { status: 'matched', patientId: 'pat_1' });
  t.same(matchClaim(claim(null, 'hartwell'), hartwell, []), { status: 'matched', patientId: 'pat_1' });
});

t.test('partially_matched: one identifier alone', async (t) => {
  t.same(
    matchClaim(claim('OTHER', 'okafor'), hartwell, []),
    { status: 'partially_matched', patientId: 'pat_1' },
    'MRN only',
  );
  t.same(
    matchClaim(claim('1EG4TE5MK73', 'hartwell'), undefined, ['pat_9']),
    { status: 'partially_matched', patientId: 'pat_9' },
    'member id only',
  );
  t.same(
    matchClaim(claim('1EG4TE5MK73', null), undefined, ['pat_9', 'pat_9']),
    { status: 'partially_matched', patientId: 'pat_9' },
    'two coverages of one patient',
  );
});

t.test('unmatched: nothing points at one patient', async (t) => {
  t.same(matchClaim(claim(null, 'hartwell'), undefined, []), { status: 'unmatched', patientId: null });
  t.same(
    matchClaim(claim('SHARED', null), undefined, ['pat_2', 'pat_3']),
    { status: 'unmatched', patientId: null },
    'a member id two patients hold',
  );
});
