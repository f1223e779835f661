import type { ParseArgsConfig } from 'node:util';
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { DB } from '../db/schema.js';
import type { KeyEncryption } from '../identity/key-encryption.js';
import type { EventOutbox } from '../db/tenant-store.js';

/** An expected refusal (bad input, unknown id): reported as one line, without a stack trace. */
export class AdminError extends Error {}

/** The refusal of a file that cannot be read, in the same words whichever process reads it. */
export function unreadable(path: string, err: unknown): AdminError {
  return new AdminError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
}

export type Options = Record<string, string | boolean | undefined>;

export interface CommandContext {
  db: Kysely<DB>;
  config: Config;
  options: Options;
  /** Arguments after the options (only for commands that declare `positionals`). */
  positionals?: string[];
  /** True when the command may draw progress on stderr: the CLI's own terminal, never a server running it for a CLI. */
  progress?: boolean;
  /** The key-encryption keys, loaded on first call: only commands that seal or open secrets need them. */
  keyEncryption(): KeyEncryption;
  /** Where a decision's events go (approval.decided); without one, a command that emits is refused, never silent. */
  outbox?: EventOutbox;
}

export interface CommandOutput {
  /** Printed with --json: one object. */
  json: Record<string, unknown>;
  /** Printed otherwise. */
  text: string;
}

export interface Command {
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /**
   * Set when the command takes files after its options; others refuse any arguments. Through a running server's admin
   * socket the CLI reads them and sends their content (src/admin/remote.ts), so they must be files, never other words.
   */
  positionals?: true;
  /** Options that name a file (--jwks-file): read by the CLI and sent through the admin socket like positionals. */
  fileOptions?: readonly string[];
  run(ctx: CommandContext): Promise<CommandOutput>;
}

export type Commands = Record<string, Command>;

export function stringOption(options: Options, name: string): string | undefined {
  const value = options[name];
  return typeof value === 'string' ? value : undefined;
}

export function requiredOption(options: Options, name: string): string {
  const value = stringOption(options, name);
  if (value === undefined || value === '') throw new AdminError(`--${name} is required`);
  return value;
}

export function integerOption(options: Options, name: string, min: number): number | undefined {
  const raw = stringOption(options, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min)
    throw new AdminError(`--${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

/** A comma-separated list option; undefined when absent. */
export function listOption(options: Options, name: string): string[] | undefined {
  const raw = stringOption(options, name);
  return raw === undefined
    ? undefined
    : raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
}

/** Aligned `key: value` lines for the human-readable output. */
export function describe(fields: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(fields).map((key) => key.length));
  return Object.entries(fields)
    .map(
      ([key, value]) =>
        `${`${key}:`.padEnd(width + 2)}${Array.isArray(value) ? value.join(', ') : value instanceof Date ? value.toISOString() : String(value ?? '-')}`,
    )
    .join('\n');
}
