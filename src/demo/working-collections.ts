import type { CommandStore } from '../db/tenant-store.js';
import type { CollectionVisibility } from '../resources/working-collections/working-collection-tables.js';
import {
  fieldProblems,
  rowProblems,
  type CellValue,
  type CollectionField,
} from '../domain/working-collections/fields.js';
import { addDays, isoDay, laterThan, pastStamps } from './calendar.js';
import { emptyDrafts, type Drafts } from './drafts.js';
import { Random } from './random.js';
import { scaled, type ReferenceData, type UserRef } from './reference-data.js';

/**
 * The agency's working collections: two shared agency-wide, one shared with the agency's integrations (those that
 * exist when it is seeded) as editors, one shared with a colleague only, one personal; their rows refer to patients.
 */

interface Sources {
  rng: Random;
  now: Date;
  reference: ReferenceData;
  patientIds: string[];
  /** The agency's orders awaiting a signature, for the rows that are about one. */
  awaitingOrders: { order: string; patient: string }[];
}

interface CollectionSpec {
  name: string;
  purpose: string;
  visibility: CollectionVisibility;
  owner: (reference: ReferenceData) => UserRef;
  /** Users it is shared with (editors visibility); the agency's extensions are added where `withExtensions`. */
  editors?: (reference: ReferenceData) => UserRef[];
  withExtensions?: boolean;
  fields: CollectionField[];
  /** Rows per 1,000 patients, and at least. */
  rows: { perThousand: number; floor: number };
  /** Each row is about an order awaiting a signature (and its patient), not only a patient. */
  aboutOrders?: boolean;
  row: (sources: Sources) => Record<string, CellValue>;
}

const PATIENT: CollectionField = { id: 'patient', label: 'Patient', type: 'patient_reference' };

const dollars = (rng: Random, min: number, max: number) => `${rng.int(min, max)}.${rng.digits(2)}`;
const recentDay = (s: Sources, days: number) => isoDay(addDays(s.now, -s.rng.int(1, days)));
const pick = (s: Sources, options: CollectionField) => s.rng.pick(options.options!);

const DENIAL_REASON: CollectionField = {
  id: 'reason',
  label: 'Denial reason',
  type: 'choice',
  options: ['Authorization missing', 'Eligibility', 'Coding', 'Timely filing', 'Documentation'],
};
const AUDIT_FINDING: CollectionField = {
  id: 'finding',
  label: 'Finding',
  type: 'choice',
  options: ['No findings', 'Missing signature', 'Late documentation', 'Plan of care mismatch'],
};
const CALL_PRIORITY: CollectionField = {
  id: 'priority',
  label: 'Priority',
  type: 'choice',
  options: ['high', 'normal', 'low'],
};

const COLLECTIONS: readonly CollectionSpec[] = [
  {
    name: 'Denial follow-up',
    purpose: 'Claims denied or short-paid in the last 90 days, with the next step for each until it is resolved.',
    visibility: 'agency',
    owner: (r) => r.reviewers[0],
    fields: [
      PATIENT,
      { id: 'payer', label: 'Payer', type: 'text' },
      { id: 'claim_amount', label: 'Claim amount', type: 'money' },
      { id: 'denied_on', label: 'Denied on', type: 'date' },
      DENIAL_REASON,
      { id: 'appealed', label: 'Appealed', type: 'boolean' },
      { id: 'next_step', label: 'Next step', type: 'text' },
    ],
    rows: { perThousand: 4, floor: 30 },
    row: (s) => ({
      payer: s.rng.pick(s.reference.payors).name,
      claim_amount: dollars(s.rng, 180, 6400),
      denied_on: recentDay(s, 90),
      reason: pick(s, DENIAL_REASON),
      appealed: s.rng.chance(0.4),
      next_step: s.rng.maybe(0.8, () =>
        s.rng.pick(['Resubmit with authorization', 'Call payer', 'Correct HIPPS code', 'Send records']),
      ),
    }),
  },
  {
    name: 'Chart audit, this quarter',
    purpose: 'Charts sampled for the quarterly clinical record review, and what the reviewer found.',
    visibility: 'agency',
    owner: (r) => r.reviewers[1 % r.reviewers.length],
    fields: [
      PATIENT,
      { id: 'audited_on', label: 'Audited on', type: 'date' },
      { id: 'score', label: 'Score', type: 'number' },
      AUDIT_FINDING,
      { id: 'corrected', label: 'Corrected', type: 'boolean' },
    ],
    rows: { perThousand: 2, floor: 25 },
    row: (s) => ({
      audited_on: recentDay(s, 80),
      score: s.rng.int(62, 100),
      finding: pick(s, AUDIT_FINDING),
      corrected: s.rng.maybe(0.7, () => s.rng.chance(0.6)),
    }),
  },
  {
    name: 'Unsigned orders to chase',
    purpose: 'Orders waiting on a physician signature that block a final claim, with the last contact made.',
    visibility: 'editors',
    owner: (r) => r.reviewers[0],
    editors: (r) => [r.reviewers[1 % r.reviewers.length]],
    withExtensions: true,
    fields: [
      PATIENT,
      { id: 'order', label: 'Order', type: 'order_reference' },
      { id: 'physician', label: 'Physician', type: 'text' },
      { id: 'last_contact', label: 'Last contact', type: 'date' },
      { id: 'attempts', label: 'Contact attempts', type: 'number' },
      { id: 'escalate', label: 'Escalate', type: 'boolean' },
    ],
    rows: { perThousand: 1, floor: 15 },
    aboutOrders: true,
    row: (s) => ({
      physician: s.rng.pick(s.reference.physicians).name,
      last_contact: recentDay(s, 20),
      attempts: s.rng.int(1, 6),
      escalate: s.rng.chance(0.25),
    }),
  },
  {
    name: 'Referral source call list',
    purpose: 'Discharge planners to call back about recent referrals.',
    visibility: 'editors',
    owner: (r) => r.marketers[0],
    editors: (r) => [r.marketers[1 % r.marketers.length]],
    fields: [
      { id: 'source', label: 'Referral source', type: 'text' },
      PATIENT,
      { id: 'next_call', label: 'Next call', type: 'date' },
      CALL_PRIORITY,
    ],
    rows: { perThousand: 0.4, floor: 10 },
    row: (s) => ({
      source: s.rng.pick(s.reference.sources).name,
      next_call: isoDay(addDays(s.now, s.rng.int(1, 14))),
      priority: pick(s, CALL_PRIORITY),
    }),
  },
  {
    name: 'My caseload notes',
    purpose: 'Personal reminders for my visits.',
    visibility: 'personal',
    owner: (r) => r.clinicians.SN[0],
    fields: [
      PATIENT,
      { id: 'focus', label: 'Visit focus', type: 'text' },
      { id: 'follow_up', label: 'Follow up', type: 'boolean' },
    ],
    rows: { perThousand: 0.2, floor: 10 },
    row: (s) => ({
      focus: s.rng.pick(['Wound care teaching', 'Medication review', 'Fall risk', 'Pain management']),
      follow_up: s.rng.chance(0.5),
    }),
  },
];

/** Patients the rows may refer to: the agency's first charts by id. */
const PATIENT_POOL = 2_000;

function checked(spec: CollectionSpec, problems: string[]): void {
  if (problems.length > 0) throw new Error(`Demo collection ${spec.name} is not valid: ${problems.join('; ')}`);
}

function addCollection(
  drafts: Drafts,
  spec: CollectionSpec,
  sources: Sources,
  patients: number,
  extensionIds: string[],
): void {
  const { rng, now, reference } = sources;
  const id = rng.id('wcl');
  checked(spec, fieldProblems(spec.fields));
  const stamps = pastStamps(rng, addDays(now, -90), 60);
  const subjects = spec.aboutOrders ? sources.awaitingOrders : sources.patientIds.map((patient) => ({ patient }));
  const rows = rng
    .sample(subjects, scaled(patients, spec.rows.perThousand, spec.rows.floor))
    .map((subject, position) => {
      const values = { ...spec.row(sources), ...subject };
      checked(spec, rowProblems(spec.fields, values));
      const created_at = laterThan(rng, stamps.created_at, now);
      return {
        id: rng.id('wcr'),
        collection_id: id,
        position,
        values: JSON.stringify(values),
        created_at,
        updated_at: laterThan(rng, created_at, now),
      };
    });
  drafts.working_collections.push({
    id,
    name: spec.name,
    purpose: spec.purpose,
    visibility: spec.visibility,
    owner_id: spec.owner(reference).id,
    fields: JSON.stringify(spec.fields),
    ...stamps,
  });
  const editors = [
    ...(spec.editors?.(reference) ?? []).map((user) => ({ user_id: user.id, extension_id: null })),
    ...(spec.withExtensions ? extensionIds : []).map((extension) => ({ user_id: null, extension_id: extension })),
  ];
  for (const editor of editors)
    drafts.working_collection_editors.push({ id: rng.id('wce'), collection_id: id, ...editor, ...stamps });
  drafts.working_collection_rows.push(...rows);
}

/** The demo collections of an agency whose `patients` charts and directory (`reference`) are written; alike in every agency seeded alike, under its own ids. */
export async function workingCollectionDrafts(
  store: CommandStore,
  patients: number,
  now: Date,
  reference: ReferenceData,
): Promise<Drafts> {
  const charts = await store.lookupFrom('patients').select('id').orderBy('id').limit(PATIENT_POOL).execute();
  const extensions = await store.lookupFrom('extensions').select('id').orderBy('id').execute();
  const awaitingOrders = await store
    .lookupFrom('physician_orders')
    .select(['id as order', 'patient_id as patient'])
    .where('signature_status', '=', 'awaiting_signature')
    .orderBy('id')
    .limit(PATIENT_POOL)
    .execute();
  const sources: Sources = {
    rng: new Random(`demo-collections:${patients}`, store.agencyId),
    now,
    reference,
    patientIds: charts.map((chart) => chart.id),
    awaitingOrders,
  };
  const drafts = emptyDrafts();
  for (const spec of COLLECTIONS)
    addCollection(
      drafts,
      spec,
      sources,
      patients,
      extensions.map((e) => e.id),
    );
  return drafts;
}
