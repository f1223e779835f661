import { readFile, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { agencyCommands } from './agency.js';
import { demoCommands } from './demo.js';
import {
  AdminError,
  unreadable,
  type Command,
  type CommandContext,
  type CommandOutput,
  type Commands,
  type Options,
} from './command.js';
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
import {
  MAX_FILE_BYTES,
  adminSocketPath,
  connectToServer,
  messageLine,
  readMessage,
  type AdminResponse,
} from './socket-protocol.js';

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
  const lines = Object.values(NOUNS).flatMap((commands) =>
    Object.values(commands).map((command) => `  ${command.usage}`),
  );
  return [
    'usage: npm run -s admin -- <command> [--json]',
    '',
    'commands:',
    ...lines,
    '',
    '--json prints one JSON object on stdout.',
  ].join('\n');
}

function findCommand(noun: string | undefined, verb: string | undefined): Command {
  const commands = noun !== undefined && Object.hasOwn(NOUNS, noun) ? NOUNS[noun] : undefined;
  const command = commands && verb !== undefined && Object.hasOwn(commands, verb) ? commands[verb] : undefined;
  if (!command)
    throw new AdminError(
      `unknown command "${[noun, verb].filter(Boolean).join(' ')}"; the commands are listed by --help`,
    );
  return command;
}

interface ParsedCommand {
  command: Command;
  options: Options;
  positionals: string[];
}

/** `<noun> <verb> [options]`: parsed alike by the CLI and by a server running the command for it. */
export function parseCommand(argv: string[]): ParsedCommand {
  const [noun, verb, ...rest] = argv;
  const command = findCommand(noun, verb);
  const { values, positionals } = parseArgs({
    args: rest,
    options: { ...command.options, ...COMMON_OPTIONS },
    strict: true,
    allowPositionals: command.positionals === true,
  });
  return { command, options: values, positionals };
}

/** Every file the command line names: its positionals, then its file options that were given. */
export function filesOf({ command, options, positionals }: ParsedCommand): string[] {
  return [
    ...positionals,
    ...(command.fileOptions ?? []).flatMap((name) => (typeof options[name] === 'string' ? [options[name]] : [])),
  ];
}

/** The command line with the files of filesOf replaced, in the same order, by `paths` (the server's copies). */
export function withFiles(parsed: ParsedCommand, paths: string[]): ParsedCommand {
  const rest = paths.slice(parsed.positionals.length);
  const options = { ...parsed.options };
  for (const name of parsed.command.fileOptions ?? [])
    if (typeof options[name] === 'string') options[name] = rest.shift();
  return { ...parsed, options, positionals: paths.slice(0, parsed.positionals.length) };
}

/** What a command runs on besides its command line: the CLI's own database handle, or the running server's. */
export type Runtime = Omit<CommandContext, 'options' | 'positionals'>;

export function runParsed({ command, options, positionals }: ParsedCommand, runtime: Runtime): Promise<CommandOutput> {
  return command.run({ ...runtime, options, positionals });
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function runDirectly(parsed: ParsedCommand, config: Config): Promise<CommandOutput> {
  // Like the server: the embedded store is refused (with the holder named) while another process has it.
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...config.db });
  let keyEncryption: KeyEncryption | undefined;
  // stdout carries the command's output (one JSON object with --json): notices about the key file go to stderr.
  const keys = () =>
    (keyEncryption ??= loadKeyEncryption(config.secretsKey, (message) => process.stderr.write(`note: ${message}\n`)));
  try {
    return await runParsed(parsed, {
      db: database.db,
      config,
      keyEncryption: keys,
      outbox: webhookOutbox,
      progress: process.stderr.isTTY,
    });
  } finally {
    await database.close();
  }
}

/** The files a command names, read here with the operator's permissions (a server never opens a path for the CLI). */
async function readFiles(paths: string[]): Promise<string[]> {
  const sizes = await Promise.all(
    paths.map((path) =>
      stat(path).then(
        ({ size }) => size,
        (err: unknown) => Promise.reject(unreadable(path, err)),
      ),
    ),
  );
  if (sizes.reduce((sum, size) => sum + size, 0) > MAX_FILE_BYTES) {
    throw new AdminError(
      `${paths.join(', ')} is over the ${MAX_FILE_BYTES / 2 ** 20} MiB a running server takes through its admin socket: stop the server and run the command again`,
    );
  }
  return Promise.all(
    paths.map((path) =>
      readFile(path).then(
        (content) => content.toString('base64'),
        (err: unknown) => Promise.reject(unreadable(path, err)),
      ),
    ),
  );
}

/**
 * On the embedded store, a running server holds the data directory: it runs the command on its own database handle,
 * through its admin socket. Undefined when no server listens there (then the CLI opens the store itself).
 */
async function runOnServer(argv: string[], parsed: ParsedCommand, config: Config): Promise<CommandOutput | undefined> {
  if (config.databaseUrl) return undefined; // PostgreSQL: any number of processes share it
  const socket = await connectToServer(adminSocketPath(config.dataDir));
  if (!socket) return undefined;
  // Read from the first instant (the server may close the connection while the files are read), never left to reject.
  const answer = readMessage(socket).then(
    (message) => message as AdminResponse,
    (err: unknown) =>
      new AdminError(
        `the server closed its admin socket without an answer (${errorMessage(err)}): its log tells whether the command ran`,
      ),
  );
  try {
    socket.write(messageLine({ argv, files: await readFiles(filesOf(parsed)) }));
    const response = await answer;
    if (response instanceof Error) throw response;
    if ('error' in response) throw new AdminError(response.error);
    return response.output;
  } finally {
    socket.destroy();
  }
}

function print(output: CommandOutput | { error: string }, json: boolean): void {
  if (json)
    process.stdout.write(`${JSON.stringify('error' in output ? { error: { message: output.error } } : output.json)}\n`);
  else if ('error' in output) process.stderr.write(`error: ${output.error}\n`);
  else process.stdout.write(`${output.text}\n`);
}

/** Runs one admin command (`<noun> <verb> [options]`); returns the process exit code. */
export async function runAdmin(argv: string[]): Promise<number> {
  const [noun] = argv;
  const json = argv.slice(2).includes('--json');
  if (noun === undefined || noun === '--help' || noun === 'help') {
    process.stdout.write(`${usage()}\n`);
    return noun === undefined ? 1 : 0;
  }
  try {
    const parsed = parseCommand(argv);
    if (parsed.options.help) {
      process.stdout.write(`usage: npm run -s admin -- ${parsed.command.usage} [--json]\n`);
      return 0;
    }
    const config = loadConfig();
    print((await runOnServer(argv, parsed, config)) ?? (await runDirectly(parsed, config)), json);
    return 0;
  } catch (err) {
    // Every failure is one line (bad input, a locked data directory, an unreachable database), never a stack trace.
    print({ error: errorMessage(err) }, json);
    return 1;
  }
}
