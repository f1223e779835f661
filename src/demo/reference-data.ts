import type { AgencyUserRole, PayorType, ReferralSourceType } from '../db/tables/agency-directory.js';
import type { Discipline } from '../db/tables/tenant-row.js';
import { normalizeNameKey } from '../db/patient-match-keys.js';
import { pastStamps } from './calendar.js';
import { emptyDrafts, type Draft, type Drafts } from './drafts.js';
import { fictionalPhone, gender, personName } from './people.js';
import type { Random } from './random.js';
import type { ServiceArea } from './service-area.js';
import { LAST_NAMES, ORGANIZATION_WORDS, PHYSICIAN_SPECIALTIES } from './vocabulary.js';

interface Named {
  id: string;
  name: string;
}

export interface PayorRef extends Named {
  type: PayorType;
}

interface SourceRef extends Named {
  type: ReferralSourceType;
}

export interface UserRef extends Named {
  officeId: string;
}

/** The agency's directory, drawn on by every chart, referral, visit and task. */
export interface ReferenceData {
  payors: PayorRef[];
  sources: SourceRef[];
  physicians: Named[];
  hospitals: Named[];
  marketers: UserRef[];
  reviewers: UserRef[];
  clinicians: Record<Discipline, UserRef[]>;
}

interface Builder {
  rng: Random;
  now: Date;
  area: ServiceArea;
  drafts: Drafts;
}

/** Per 1,000 patients, with a floor so a small agency still has a few of each. */
const STAFFING: Record<Discipline, number> = { SN: 20, PT: 12, OT: 6, ST: 3, MSW: 4, HHA: 16 };

export function scaled(patients: number, perThousand: number, floor: number): number {
  return Math.max(floor, Math.round((patients * perThousand) / 1000));
}

export function buildReferenceData(
  rng: Random,
  now: Date,
  area: ServiceArea,
  patients: number,
): { data: ReferenceData; drafts: Drafts } {
  const b: Builder = { rng, now, area, drafts: emptyDrafts() };
  const data: ReferenceData = {
    payors: payors(b),
    sources: Array.from({ length: scaled(patients, 30, 10) }, () => referralSource(b)),
    physicians: Array.from({ length: scaled(patients, 60, 12) }, (_, i) => physician(b, i)),
    hospitals: Array.from({ length: scaled(patients, 5, 4) }, () => hospital(b)),
    marketers: users(b, 'marketer', scaled(patients, 6, 2)),
    reviewers: users(b, 'reviewer', scaled(patients, 4, 2)),
    clinicians: Object.fromEntries(
      Object.entries(STAFFING).map(([discipline, rate]) => [
        discipline,
        users(b, 'clinician', scaled(patients, rate, 2), discipline as Discipline),
      ]),
    ) as Record<Discipline, UserRef[]>,
  };
  return { data, drafts: b.drafts };
}

function payors(b: Builder): PayorRef[] {
  const state = b.area.zips[0].state;
  const list: [string, PayorType, string | null][] = [
    ['Medicare', 'medicare', 'MCR01'],
    [`${state} Medicaid`, 'medicaid', `${state}MCD`],
    ['Summit Senior Advantage (HMO)', 'medicare_advantage', 'SSA77'],
    ['Heritage Medicare Advantage PPO', 'medicare_advantage', 'HMA42'],
    ['Community Care Health Plan', 'managed_medicaid', 'CCHP9'],
    ['Keystone Commercial PPO', 'commercial', 'KCP31'],
    ['Lakeshore Health Insurance', 'commercial', 'LHI58'],
    ['Long-Term Care Indemnity Plan', 'commercial', null],
    ['Private Pay', 'private_pay', null],
  ];
  return list.map(([name, type, payer_code]) => {
    const row: Draft<'payors'> = {
      id: b.rng.id('pay'),
      name,
      payor_type: type,
      payer_code,
      ...pastStamps(b.rng, b.now, 1500),
    };
    b.drafts.payors.push(row);
    return { id: row.id, name, type };
  });
}

const SOURCE_NOUNS: Record<ReferralSourceType, readonly string[]> = {
  hospital: ['Medical Center', 'Regional Hospital', 'Community Hospital'],
  skilled_nursing_facility: ['Rehabilitation and Nursing Center', 'Skilled Nursing Facility', 'Care Center'],
  physician_office: ['Family Practice', 'Internal Medicine Associates', 'Primary Care'],
  assisted_living_facility: ['Senior Living', 'Assisted Living', 'Gardens'],
  community: ['Area Agency on Aging', 'Senior Center', 'Community Health Network'],
  self_or_family: ['Self / Family Referral'],
};

function referralSource(b: Builder): SourceRef {
  const type = b.rng.weighted<ReferralSourceType>({
    hospital: 35,
    skilled_nursing_facility: 20,
    physician_office: 30,
    assisted_living_facility: 8,
    community: 5,
    self_or_family: 2,
  });
  const noun = b.rng.pick(SOURCE_NOUNS[type]);
  const name =
    type === 'self_or_family' ? noun : `${b.rng.pick(ORGANIZATION_WORDS)} ${noun} of ${b.rng.pick(b.area.zips).city}`;
  const row: Draft<'referral_sources'> = {
    id: b.rng.id('src'),
    name,
    source_type: type,
    phone: fictionalPhone(b.rng, b.rng.pick(b.area.zips).areaCode),
    ...pastStamps(b.rng, b.now, 1500),
  };
  b.drafts.referral_sources.push(row);
  return { id: row.id, name, type };
}

/** A 10-digit NPI with a valid check digit (Luhn over the 80840 prefix); `index` keeps them unique. */
function npi(rng: Random, index: number): string {
  const base = `1${String(index * 97 + rng.int(0, 96)).padStart(8, '0')}`;
  let sum = 24; // the Luhn contribution of the 80840 prefix
  for (let i = 0; i < base.length; i++) {
    let digit = Number(base[base.length - 1 - i]);
    if (i % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return `${base}${(10 - (sum % 10)) % 10}`;
}

function physician(b: Builder, index: number): Named {
  const name = personName(b.rng, gender(b.rng));
  const place = b.rng.pick(b.area.zips);
  const row: Draft<'physicians'> = {
    id: b.rng.id('phy'),
    npi: npi(b.rng, index),
    ...name,
    credential: b.rng.weighted({ MD: 70, DO: 15, NP: 10, PA: 5 }),
    specialty: b.rng.pick(PHYSICIAN_SPECIALTIES),
    phone: fictionalPhone(b.rng, place.areaCode),
    fax: fictionalPhone(b.rng, place.areaCode),
    ...pastStamps(b.rng, b.now, 1500),
  };
  b.drafts.physicians.push(row);
  return { id: row.id, name: `Dr. ${name.first_name} ${name.last_name}` };
}

function hospital(b: Builder): Named {
  const place = b.rng.pick(b.area.zips);
  const row: Draft<'hospitals'> = {
    id: b.rng.id('hos'),
    name: `${b.rng.pick(ORGANIZATION_WORDS)} ${b.rng.pick(SOURCE_NOUNS.hospital)}`,
    city: place.city,
    state: place.state,
    ...pastStamps(b.rng, b.now, 1500),
  };
  b.drafts.hospitals.push(row);
  return { id: row.id, name: row.name };
}

function users(b: Builder, role: AgencyUserRole, count: number, discipline: Discipline | null = null): UserRef[] {
  return Array.from({ length: count }, (_, i) => {
    const first_name = personName(b.rng, gender(b.rng)).first_name;
    const last_name = b.rng.pick(LAST_NAMES);
    const officeId = b.area.offices[i % b.area.offices.length].id;
    const row: Draft<'agency_users'> = {
      id: b.rng.id('usr'),
      role,
      first_name,
      last_name,
      email: `${normalizeNameKey(`${first_name}.${last_name}`).replace(/[^a-z.]/g, '')}${b.drafts.agency_users.length + 1}@agency.example`,
      discipline,
      office_id: officeId,
      ...pastStamps(b.rng, b.now, 1500),
    };
    b.drafts.agency_users.push(row);
    return { id: row.id, name: `${first_name} ${last_name}`, officeId };
  });
}
