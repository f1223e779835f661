import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { agencyCommands } from './agency.js';
import { demoCommands } from './demo.js';
import { AdminError, type Command, type CommandOutput, type Commands } from './command.js';
import { integrationCommands } from './integration.js';
import { keysCommands } from './keys.js';
import { secretsCommands } from './secrets.js';
import { loadKeyEncryption } from '../identity/key-encryption-keys.js';
import type { KeyEncryption } from '../identity/key-encryption.js';
import { webhookOutbox } from '../events/outbox.js';
import { tokenCommands } from './token.js';
import { qualityCommands } from './quality.js';
import { eraCommands } from './era.js';
import { webhookCommands } from './webhook.js';
import { userCommands } from './user.js';
import { mcpClientCommands } from './mcp-client.js';
import { proposalCommands } from './proposal.js';

const NOUNS: Record<string, Commands> = {
  agency: agencyCommands,
  integration: integrationCommands,
  token: tokenCommands,
  keys: keysCommands,
  secrets: secretsCommands,
  demo: demoCommands,
  quality: qualityCommands,
  era: eraCommands,
  webhook: webhookCommands,
  user: userCommands,
  'mcp-client': mcpClientCommands,
  proposal: proposalCommands,
};

const COMMON_OPTIONS = { json: { type: 'boolean' }, help: { type: 'boolean' } } as const;

function usage(): string {
  const lines = Object.values(NOUNS).flatMap((commands) => Object.values(commands).map((command) => `  ${command.usage}`));
  return ['usage: npm run -s admin -- <command> [--json]', '', 'commands:', ...lines, '', '--json prints one JSON object on stdout.'].join('\n');
}

function findCommand(noun: string | undefined, verb: string | undefined): Command {
  const commands = noun !== undefined && Object.hasOwn(NOUNS, noun) ? NOUNS[noun] : undefined;
  const command = commands && verb !== undefined && Object.hasOwn(commands, verb) ? commands[verb] : undefined;
  if (!command) throw new AdminError(`unknown command "${[noun, verb].filter(Boolean).join(' ')}"; the commands are listed by --help`);
  return command;
}

async function execute(command: Command, { options, positionals }: { options: Record<string, string | boolean | undefined>; positionals: string[] }, config: Config): Promise<CommandOutput> {
  // Like the server: the embedded store is refused (with the holder named) while another process has it.
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...config.db });
  let keyEncryption: KeyEncryption | undefined;
  // stdout carries the command's output (one JSON object with --json): notices about the key file go to stderr.
  const keys = () => (keyEncryption ??= loadKeyEncryption(config.secretsKey, (message) => process.stderr.write(`note: ${message}\n`)));
  try {
    return await command.run({ db: database.db, config, options, positionals, keyEncryption: keys, outbox: webhookOutbox });
  } finally {
    await database.close();
  }
}

function print(output: CommandOutput | { error: string }, json: boolean): void {
  if (json) process.stdout.write(`${JSON.stringify('error' in output ? { error: { message: output.error } } : output.json)}\n`);
  else if ('error' in output) process.stderr.write(`error: ${output.error}\n`);
  else process.stdout.write(`${output.text}\n`);
}

/** Runs one admin command (`<noun> <verb> [options]`); returns the process exit code. */
export async function runAdmin(argv: string[]): Promise<number> {
  const [noun, verb, ...rest] = argv;
  const json = rest.includes('--json');
  if (noun === undefined || noun === '--help' || noun === 'help') {
    process.stdout.write(`${usage()}\n`);
    return noun === undefined ? 1 : 0;
  }
  try {
    const command = findCommand(noun, verb);
    const { values, positionals } = parseArgs({ args: rest, options: { ...command.options, ...COMMON_OPTIONS }, strict: true, allowPositionals: command.positionals === true });
    if (values.help) {
      process.stdout.write(`usage: npm run -s admin -- ${command.usage} [--json]\n`);
      return 0;
    }
    print(await execute(command, { options: values, positionals }, loadConfig()), json);
    return 0;
  } catch (err) {
    // Every failure is one line (bad input, a locked data directory, an unreachable database), never a stack trace.
    print({ error: err instanceof Error ? err.message : String(err) }, json);
    return 1;
  }
}
