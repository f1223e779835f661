import { capabilities, contractVersions, operations } from '../generated/contract.js';
import type { PhiMode } from '../shared/principal.js';

/** What an integration can be granted, read from the contract's route table (never a hand-kept list). */
export const CONTRACT_SCOPES: readonly string[] = [
  ...new Set(Object.values(operations).flatMap((op) => (op.scope === null ? [] : [op.scope]))),
].sort();

export const CONTRACT_CAPABILITIES: readonly string[] = Object.keys(capabilities).sort();

/** A token alone gives no write permission: commands' capabilities are granted only when asked for. */
export const NON_COMMAND_CAPABILITIES: readonly string[] = CONTRACT_CAPABILITIES.filter(
  (id) => !capabilities[id as keyof typeof capabilities].command,
);

export const PHI_MODES: readonly PhiMode[] = ['no_phi', 'phi'];

/** Versions an integration may register under: supported and not retired. */
export const REGISTRABLE_CONTRACT_VERSIONS: readonly string[] = contractVersions
  .filter((v) => (v.status as string) !== 'retired')
  .map((v) => v.version);

export const CURRENT_CONTRACT_VERSION: string = contractVersions.find((v) => v.status === 'current')!.version;
