import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { KeyEncryption } from '../identity/key-encryption.js';
import type { TenantStore } from '../db/tenant-store.js';
import { personActor, platformReader } from '../platform-commands/platform-command.js';
import type { Person } from '../identity/mcp-authorization/people.js';
import type { AppServices } from '../services.js';
import { AdminError } from '../admin/command.js';
import { asOperatorOn, type OperatorCommand } from '../admin/operator-command.js';
import type { PlatformActor } from '../platform-commands/platform-command.js';
import type { Html } from './html.js';
import { consolePage, type NavEntry, type Notice, type Viewer } from './layout.js';
import { mayIn, type ConsoleCapability } from './console-roles.js';

/** What every console page reaches the service through. */
export interface ConsoleContext {
  db: Kysely<DB>;
  services: AppServices;
  /** Seals the secrets a change makes (a webhook subscription's signing secret). */
  keyEncryption: KeyEncryption;
}

/** A part of the console: its place in the navigation, and its routes (registered in the signed-in scope). */
export interface ConsoleSection {
  nav: NavEntry;
  register(scope: FastifyInstance, ctx: ConsoleContext): void;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in person looking at a console page (set on every route of the signed-in scope). */
    viewer: Viewer | null;
  }
}

/** Whom a form token is made for: the signed-in person, or no one (the sign-in forms). */
export const formTokenOwner = (person: Person | undefined) => person?.id ?? 'signed-out';

/** A form token good only for `person`'s session (checked by @fastify/csrf-protection on every post). */
export const newFormToken = (reply: FastifyReply, person?: Person) =>
  reply.generateCsrf({ userInfo: formTokenOwner(person) } as never);

export function viewerOf(request: FastifyRequest): Viewer {
  if (!request.viewer) throw new Error('a console route of the signed-in scope ran without its viewer');
  return request.viewer;
}

/** Reads of the viewer's agency, through the same tenant store as the partition (never another agency's rows). */
export function readStore(ctx: ConsoleContext, person: Person): TenantStore {
  return platformReader(ctx.db, person.agencyId);
}

/** The person as the actor of a platform command: what the audit record names. */
export const actorOf = (person: Person): PlatformActor => personActor(person.id);

/** An error the console's error handler answers as a page with this status and message (a 404 for another agency's id). */
export const pageError = (statusCode: number, message: string) => Object.assign(new Error(message), { statusCode });

/** What a page says of a change refused by its command (an AdminError); any other error is rethrown. */
export function refusalOf(err: unknown): Notice {
  if (err instanceof AdminError) return { kind: 'refused', text: err.message };
  throw err;
}

/**
 * A change the viewer makes: the admin CLI's operator command on the viewer's agency, with the person as its actor
 * (`user:<id>` on the audit record) and the deployment's outbox, in one transaction.
 */
export function asPerson<T>(
  ctx: ConsoleContext,
  person: Person,
  command: Pick<OperatorCommand, 'operation' | 'resourceType'>,
  run: Parameters<typeof asOperatorOn<T>>[3],
): Promise<T> {
  return asOperatorOn(
    ctx.db,
    person.agencyId,
    { ...command, phiMode: 'no_phi', actor: actorOf(person), outbox: ctx.services.outbox },
    run,
  );
}

/** A console page as the answer (200 unless said). */
export function render(
  request: FastifyRequest,
  reply: FastifyReply,
  title: string,
  body: Html,
  notice?: Notice,
  status = 200,
) {
  return sendPage(reply, status, consolePage(viewerOf(request), title, body, notice));
}

/** A whole page (a console page, or a public one: sign-in, an error before sign-in) as the answer. */
export const sendPage = (reply: FastifyReply, status: number, page: string) =>
  reply.code(status).type('text/html; charset=utf-8').send(page);

export interface DoneNotices<Word extends string> {
  /** Back to the page at `path` (a 303), which then says what the change did. */
  redirect(reply: FastifyReply, path: string, done: Word): FastifyReply;
  /** The notice for the page's `done` parameter; none for a word not listed. */
  of(request: FastifyRequest): Notice | undefined;
}

/** The words a section's notices know. */
export type DoneWord<Notices> = Notices extends DoneNotices<infer Word> ? Word : never;

/**
 * What a section's changes did, each a fixed text named by a word: after a change the page redirects with the word
 * (Post/Redirect/Get), and the page it leads to says the text. Never text from a URL, nor a word not listed here.
 */
export function doneNotices<Word extends string>(texts: Record<Word, string>): DoneNotices<Word> {
  const known = new Map<string, string>(Object.entries(texts));
  return {
    redirect: (reply, path, done) => reply.redirect(`${path}?done=${done}`, 303),
    of(request) {
      const word = (request.query as Record<string, unknown> | undefined)?.done;
      const text = typeof word === 'string' ? known.get(word) : undefined;
      return text === undefined ? undefined : { kind: 'done', text };
    },
  };
}

/** A route option: only a person whose role has the capability gets past it (others get a 403 page). */
export function needs(capability: ConsoleCapability) {
  return async (request: FastifyRequest) => {
    const viewer = viewerOf(request);
    if (!mayIn(viewer.person.role, capability))
      throw pageError(403, `Your role (${viewer.person.role}) does not allow this.`);
  };
}

/** A form field sent once (the last one when repeated), '' when absent. */
export function formText(request: FastifyRequest, name: string): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(value)) return String(value.at(-1) ?? '');
  return typeof value === 'string' ? value : '';
}

/** Every value of a repeated form field (checkboxes of one name). */
export function formList(request: FastifyRequest, name: string): string[] {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(value)) return value.map(String);
  return typeof value === 'string' ? [value] : [];
}

/** An uploaded file of a multipart form (the console keeps uploads in memory, up to the admin socket's file limit). */
export interface UploadedFile {
  filename: string;
  content: Buffer;
}

/** The file's own name, without any folder a browser may send (as the CLI keeps a path's base name). */
export const uploadName = (file: UploadedFile): string => file.filename.split(/[\\/]/).at(-1) ?? '';

export function formFile(request: FastifyRequest, name: string): UploadedFile | undefined {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return value && typeof value === 'object' && 'content' in value ? (value as UploadedFile) : undefined;
}
