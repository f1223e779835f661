import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.js';
import { CommandStore, TenantStore, type EventOutbox } from '../db/tenant-store.js';
import { insertAuditEvents } from '../gateway/audit.js';
import type { AuditTrail } from '../shared/audit-trail.js';
import { randomId } from '../shared/ids.js';
import type { PhiMode } from '../shared/principal.js';

/**
 * The caller named on a platform command's audit record (as `details.actor`, with `extension_id` 'platform': no
 * extension called): the admin CLI's operator, the demo seed, the proposal executor, or a person of the agency
 * (who proposes or decides).
 */
export type PlatformActor = 'admin-cli' | 'demo-seed' | 'proposal-executor' | `user:${string}`;

/** A person (a user of the MCP surface and the console) as the actor of their own commands. */
export const personActor = (userId: string): PlatformActor => `user:${userId}`;

/** The extension id of every platform command's audit record: no integration called, the platform itself did. */
export const PLATFORM_CALLER = 'platform';

/** A change to one agency's data made outside a request: by an operator, an importer, the demo seed or a decision. */
export interface PlatformCommand {
  agencyId: string;
  /** What the command is, as an audit record's operation_id (importEraFile, decideProposal...). */
  operation: string;
  actor: PlatformActor;
  /** The type of the resources whose ids the store records. */
  resourceType: string | null;
  phiMode: PhiMode;
  /** The deployment's event outbox (services.outbox, the admin CLI's context): events commit with the command. */
  outbox: EventOutbox | undefined;
}

/** A platform command refused before it ran: its agency does not exist. */
export class UnknownAgencyError extends Error {
  constructor(agencyId: string) {
    super(`agency "${agencyId}" does not exist`);
    this.name = 'UnknownAgencyError';
  }
}

async function runIn<T>(
  trx: Transaction<DB>,
  command: PlatformCommand,
  run: (store: CommandStore) => Promise<T>,
): Promise<T> {
  const agency = await trx.selectFrom('agencies').select('id').where('id', '=', command.agencyId).executeTakeFirst();
  if (!agency) throw new UnknownAgencyError(command.agencyId);
  const trail: AuditTrail = { resourceType: command.resourceType, resourceIds: [] };
  const result = await run(
    new CommandStore(trx, { agencyId: command.agencyId, phiMode: command.phiMode }, trail, command.outbox),
  );
  await insertAuditEvents([
    {
      agencyId: command.agencyId,
      extensionId: PLATFORM_CALLER,
      operationId: command.operation,
      resourceType: trail.resourceType,
      resourceIds: trail.resourceIds,
      outcome: 'success',
      status: 200,
      requestId: randomId('cmd_'),
      phiMode: command.phiMode,
      details: { actor: command.actor, ...trail.details },
    },
  ]).execute(trx);
  return result;
}

/**
 * Runs a platform command as a request's command runs: through the agency's tenant store, in one transaction with
 * its events (through the configured outbox) and its audit record, all committed together or not at all. In `db`'s
 * transaction when it is one (the demo seed imports inside its own), else in a transaction of its own.
 */
export function runPlatformCommand<T>(
  db: Kysely<DB>,
  command: PlatformCommand,
  run: (store: CommandStore) => Promise<T>,
): Promise<T> {
  if (db.isTransaction) return runIn(db as Transaction<DB>, command, run);
  return db.transaction().execute((trx) => runIn(trx, command, run));
}

/**
 * What a surface outside a request (the agency console) reads one agency's rows through: the tenant store, in
 * no_phi, with no audit record of its reads (what it shows names no patient).
 */
export function platformReader(db: Kysely<DB>, agencyId: string): TenantStore {
  return new TenantStore(db, { agencyId, phiMode: 'no_phi' }, { resourceType: null, resourceIds: [] });
}
