import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { CommandStore } from '../db/tenant-store.js';
import { runPlatformCommand, UnknownAgencyError, type PlatformCommand } from '../platform-commands/platform-command.js';
import { AdminError, requiredOption, type CommandContext } from './command.js';

/** What an admin command does to one agency: the audit record's operation, resource type and PHI mode. */
export type OperatorCommand = Pick<PlatformCommand, 'operation' | 'resourceType' | 'phiMode'>;

/** Who runs an operator command (the admin-cli actor unless named: a person of the console is user:<id>) and its outbox. */
export type OperatorRunBy = Partial<Pick<PlatformCommand, 'outbox' | 'actor'>>;

/** The admin CLI's refusal of an agency id no agency has (commands given the id rather than --agency). */
export const noAgency = (agencyId: string) => `no agency "${agencyId}"`;

/** How an operator command reports what it was refused for: an unknown agency, or an importer's refusal of a file. */
interface Refusals {
  /** The one-line refusal of an unknown agency, when the command words it its own way. */
  unknownAgency?: (agencyId: string) => string;
  /** Errors reported as one-line AdminErrors. */
  errors?: readonly (abstract new (
    ...args: never[]
  ) => Error)[];
}

/**
 * Runs `run` on `agencyId` as a platform command of the CLI's operator (the admin-cli actor unless the command names
 * another, one transaction with its audit record): for the commands that find the agency from what they are given (a
 * client id, an email). An unknown agency, and the errors `refusals` names, are one-line AdminErrors.
 */
export async function asOperatorOn<T>(
  db: Kysely<DB>,
  agencyId: string,
  command: OperatorCommand & OperatorRunBy,
  run: (store: CommandStore) => Promise<T>,
  refusals: Refusals = {},
): Promise<T> {
  try {
    return await runPlatformCommand(db, { outbox: undefined, actor: 'admin-cli', ...command, agencyId }, run);
  } catch (err) {
    if (err instanceof UnknownAgencyError) throw new AdminError(refusals.unknownAgency?.(agencyId) ?? err.message);
    if (refusals.errors?.some((refusal) => err instanceof refusal)) throw new AdminError((err as Error).message);
    throw err;
  }
}

/** asOperatorOn the agency of --agency, with the context's outbox. */
export function asOperator<T>(
  ctx: CommandContext,
  command: OperatorCommand,
  run: (store: CommandStore) => Promise<T>,
  refusals: Refusals = {},
): Promise<T> {
  const agencyId = requiredOption(ctx.options, 'agency');
  return asOperatorOn(ctx.db, agencyId, { ...command, outbox: ctx.outbox }, run, refusals);
}
