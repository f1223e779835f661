import t from 'tap';
import { contractChangelog } from '../../src/docs/changelog.js';
import { readProjectFile } from '../../src/project-files.js';

const source = JSON.parse(readProjectFile('openapi.json'));

t.test('the changelog is written from the marks and tables of the document', async (t) => {
  const doc = {
    components: {
      schemas: {
        Patient: {
          properties: {
            display_name: { type: 'string', 'x-svc-v1-name': 'full_name' },
            birth_year: { type: 'integer', 'x-svc-since': '2' },
            id: { type: 'string' },
          },
        },
        CreateRequest: { properties: { zip: { type: 'string', deprecated: true, 'x-svc-successor': 'zip_code' } } },
      },
    },
    'x-svc-contract-versions': [
      {
        version: '1',
        manifest_version: '1.4.0',
        status: 'deprecated',
        deprecated_at: '2026-07-25T00:00:00Z',
        successor: '2',
        sunset: '2027-06-30T00:00:00Z',
      },
      { version: '2', manifest_version: '2.1.0', status: 'current', deprecated_at: null, successor: null },
    ],
    'x-svc-request-shapes': {
      createThing: [
        { shape: '2026-01-01', status: 'deprecated', successor: '2026-05-01', sunset: null, description: 'Thin.' },
      ],
    },
  };
  const text = contractChangelog(doc);
  t.match(text, '## Version 2 (manifest 2.1.0): current');
  t.match(text, '- `Patient.birth_year`');
  t.match(text, '- `Patient.full_name` is now `display_name`');
  t.notMatch(text, 'Patient.id');
  t.match(text, '## Version 1 (manifest 1.4.0): deprecated since 2026-07-25, successor version 2, sunset 2027-06-30');
  t.match(text, '- `createThing` shape 2026-01-01: Thin (deprecated, successor 2026-05-01, no sunset date)');
  t.match(text, '- `CreateRequest.zip` is deprecated: send `zip_code` instead');
  t.ok(text.indexOf('## Version 2') < text.indexOf('## Version 1'), 'newest version first');
});

t.test('the changelog of openapi.json names what version 2 added and renamed, and the referral shapes', async (t) => {
  const text = contractChangelog(source);
  t.match(text, '`PatientSummary.full_name` is now `display_name`');
  t.match(text, '`PatientSummary.birth_year`');
  t.match(text, 'deprecated since 2026-07-25, successor version 2, no sunset date set');
  t.match(text, '`createReferral` shape 2026-04-01: Thin create (deprecated, successor 2026-08-19, no sunset date)');
  t.match(text, '`ReferralCreateRequest.zip_code` is deprecated: send `patient_zip_code` instead');
});
