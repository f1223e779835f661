import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { CommandStore } from '../db/tenant-store.js';
import type { PlatformActor } from '../platform-commands/platform-command.js';
import { randomId } from '../shared/ids.js';
import {
  AdminError,
  describe,
  integerOption,
  listOption,
  requiredOption,
  stringOption,
  type Commands,
  type Options,
} from './command.js';
import { asOperatorOn, noAgency, type OperatorCommand } from './operator-command.js';

interface AgencyInput {
  id: string;
  name: string;
  serviceZips: string[];
  /** IANA zone of the default office. */
  timezone?: string;
}

interface CreatedAgency {
  id: string;
  name: string;
  officeId: string;
  serviceZips: string[];
}

/** What an agency command does, on the audit record: to the agency's own settings and offices, never with PHI. */
const ON_AGENCY: Omit<OperatorCommand, 'operation'> = { resourceType: 'agency', phiMode: 'no_phi' };

const AGENCY_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ZIP = /^\d{5}$/;
const DEFAULT_TIMEZONE = 'America/New_York';

function validate(input: AgencyInput): void {
  if (!AGENCY_ID.test(input.id))
    throw new AdminError(`agency id "${input.id}" must be 1 to 64 letters, digits, ".", "_" or "-"`);
  if (!input.name.trim()) throw new AdminError('the agency name must not be empty');
  const badZips = input.serviceZips.filter((zip) => !ZIP.test(zip));
  if (badZips.length > 0) throw new AdminError(`service ZIP codes must have 5 digits: ${badZips.join(', ')}`);
  if (input.serviceZips.length === 0) throw new AdminError('at least one service ZIP code is required');
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: input.timezone ?? DEFAULT_TIMEZONE });
  } catch {
    throw new AdminError(`unknown time zone "${input.timezone}"`);
  }
}

/** Its default office "<name> Main Office", and its service area routed to that office, in the store's agency. */
export async function openMainOffice(store: CommandStore, input: AgencyInput): Promise<CreatedAgency> {
  const serviceZips = [...new Set(input.serviceZips)];
  // Drawn like every other id, so that no office id names offices of two agencies.
  const officeId = randomId('off_');
  await store
    .insertInto('offices')
    .values({ id: officeId, name: `${input.name} Main Office`, timezone: input.timezone ?? DEFAULT_TIMEZONE })
    .execute();
  await store
    .insertInto('agency_service_zips')
    .values(serviceZips.map((zip_code) => ({ zip_code, office_id: officeId })))
    .execute();
  return { id: input.id, name: input.name, officeId, serviceZips };
}

/**
 * The agency, then its main office as the operator's command createAgency, in one transaction. The agency's row is
 * written on the handle: the registry of agencies belongs to no agency.
 */
export async function createAgency(
  db: Kysely<DB>,
  input: AgencyInput,
  actor: PlatformActor = 'admin-cli',
): Promise<CreatedAgency> {
  validate(input);
  return db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('agencies').select('id').where('id', '=', input.id).executeTakeFirst();
    if (existing) throw new AdminError(`agency "${input.id}" already exists`);
    await trx.insertInto('agencies').values({ id: input.id, name: input.name }).execute();
    return asOperatorOn(trx, input.id, { ...ON_AGENCY, operation: 'createAgency', actor }, (store) =>
      openMainOffice(store, input),
    );
  });
}

/** The database checks the same bound (db/migrations/0015_physician_orders.ts). */
const MAX_ORDER_SLA_DAYS = 365;

/** Settings of an agency that admin may change; each option left out keeps its value. */
function agencySettings(options: Options): { order_sla_days?: number } {
  const orderSlaDays = integerOption(options, 'order-sla-days', 0);
  if (orderSlaDays === undefined) throw new AdminError('nothing to set: give --order-sla-days');
  if (orderSlaDays > MAX_ORDER_SLA_DAYS)
    throw new AdminError(`--order-sla-days must be at most ${MAX_ORDER_SLA_DAYS}, got ${orderSlaDays}`);
  return { order_sla_days: orderSlaDays };
}

function setAgency(db: Kysely<DB>, id: string, settings: { order_sla_days?: number }) {
  return asOperatorOn(
    db,
    id,
    { ...ON_AGENCY, operation: 'setAgency' },
    async (store) => {
      const agency = await store
        .unscoped('the settings of an agency are on its row of the registry of agencies, which belongs to no agency')
        .updateTable('agencies')
        .set({ ...settings, updated_at: new Date() })
        .where('id', '=', store.agencyId)
        .returning(['id', 'order_sla_days'])
        .executeTakeFirstOrThrow();
      store.auditDetails(settings);
      return { agency_id: agency.id, order_sla_days: agency.order_sla_days };
    },
    { unknownAgency: noAgency },
  );
}

async function listAgencies(db: Kysely<DB>) {
  const agencies = await db
    .selectFrom('agencies')
    .select(['id', 'name', 'status', 'order_sla_days', 'created_at'])
    .orderBy('id')
    .execute();
  const zips = await db
    .selectFrom('agency_service_zips')
    .select(['agency_id', 'zip_code'])
    .orderBy('zip_code')
    .execute();
  return agencies.map((agency) => ({
    id: agency.id,
    name: agency.name,
    status: agency.status,
    service_zips: zips.filter((zip) => zip.agency_id === agency.id).map((zip) => zip.zip_code),
    order_sla_days: agency.order_sla_days,
    created_at: agency.created_at.toISOString(),
  }));
}

export const agencyCommands: Commands = {
  create: {
    usage: 'agency create --id ID --name NAME --service-zips 02110,02111 [--timezone America/New_York]',
    options: {
      id: { type: 'string' },
      name: { type: 'string' },
      'service-zips': { type: 'string' },
      timezone: { type: 'string' },
    },
    async run({ db, options }) {
      const agency = await createAgency(db, {
        id: requiredOption(options, 'id'),
        name: requiredOption(options, 'name'),
        serviceZips: listOption(options, 'service-zips') ?? [],
        timezone: stringOption(options, 'timezone'),
      });
      const json = {
        agency_id: agency.id,
        name: agency.name,
        office_id: agency.officeId,
        service_zips: agency.serviceZips,
      };
      return { json, text: `Created agency ${agency.id}.\n${describe(json)}` };
    },
  },
  set: {
    usage: 'agency set --id ID --order-sla-days N   (days a physician has to sign an order; default 7)',
    options: { id: { type: 'string' }, 'order-sla-days': { type: 'string' } },
    async run({ db, options }) {
      const json = await setAgency(db, requiredOption(options, 'id'), agencySettings(options));
      return { json, text: `Updated agency ${json.agency_id}.\n${describe(json)}` };
    },
  },
  list: {
    usage: 'agency list',
    options: {},
    async run({ db }) {
      const agencies = await listAgencies(db);
      const text = agencies.length === 0 ? 'No agencies.' : agencies.map((agency) => describe(agency)).join('\n\n');
      return { json: { agencies }, text };
    },
  },
};
