import type { CommandStore } from '../db/tenant-store.js';
import { runPlatformCommand, UnknownAgencyError, type PlatformCommand } from '../platform-commands/platform-command.js';
import { AdminError, requiredOption, type CommandContext } from './command.js';

/** What an admin command does to one agency: the audit record's operation, resource type and PHI mode. */
export type OperatorCommand = Pick<PlatformCommand, 'operation' | 'resourceType' | 'phiMode'>;

/**
 * Runs `run` on the agency of --agency as a platform command of the CLI's operator (the admin-cli actor, the
 * context's outbox, one transaction with its audit record). An unknown agency, and the errors in `refusals` (an
 * importer's refusal of a file), are one-line AdminErrors.
 */
export async function asOperator<T>(
  ctx: CommandContext,
  command: OperatorCommand,
  run: (store: CommandStore) => Promise<T>,
  refusals: readonly (abstract new (...args: never[]) => Error)[] = [],
): Promise<T> {
  const agencyId = requiredOption(ctx.options, 'agency');
  try {
    return await runPlatformCommand(ctx.db, { ...command, agencyId, actor: 'admin-cli', outbox: ctx.outbox }, run);
  } catch (err) {
    if (err instanceof UnknownAgencyError || refusals.some((refusal) => err instanceof refusal))
      throw new AdminError((err as Error).message);
    throw err;
  }
}
