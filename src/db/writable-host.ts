import pg from 'pg';

/** One server of a primary and its standbys: a TCP host name or address, or a unix socket directory. */
export interface PostgresHost {
  host: string;
  port: number;
}

const hostName = (h: PostgresHost) => `${h.host}:${h.port}`;

/** The URL's parts around its authority: libpq's multi-host form (`host1:5432,host2:5433`) is no valid WHATWG URL. */
const POSTGRES_URL = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)([^?#]*)(?:\?([^#]*))?$/;

function authorityHost(entry: string): { host: string; port?: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1], port: bracketed[2] ? Number(bracketed[2]) : undefined };
  const [host, port] = entry.split(':');
  return { host, port: port ? Number(port) : undefined };
}

/**
 * The hosts a DATABASE_URL lists, as libpq reads them: in the authority (`postgresql://app@db1:5432,db2:5432/app`) or
 * in `host` and `port` query parameters (`?host=/run/a,/run/b&port=5432,5433`, unix socket directories). A single
 * port applies to every host; the query parameters win over the authority.
 */
export function listedHosts(databaseUrl: string): PostgresHost[] {
  const parts = POSTGRES_URL.exec(databaseUrl);
  if (!parts) return [];
  const query = new URLSearchParams(parts[5] ?? '');
  const fromQuery = query.get('host');
  const entries = fromQuery
    ? fromQuery.split(',').map((host) => ({ host, port: undefined as number | undefined }))
    : parts[3].split(',').filter(Boolean).map(authorityHost);
  const ports = (query.get('port') ?? '').split(',').filter(Boolean).map(Number);
  return entries.map((entry, i) => ({
    host: entry.host || 'localhost',
    port: ports.length > 1 ? ports[i] : (ports[0] ?? entry.port ?? 5432),
  }));
}

/** The same URL naming only `target`, which node-postgres can read. */
export function singleHostUrl(databaseUrl: string, target: PostgresHost): string {
  const parts = POSTGRES_URL.exec(databaseUrl);
  if (!parts) return databaseUrl;
  const [, scheme, user = '', , path, search = ''] = parts;
  const query = new URLSearchParams(search);
  query.delete('host');
  query.delete('port');
  // libpq's own parameter; node-postgres would send it to the server as a start-up setting, which is refused.
  query.delete('target_session_attrs');
  const socket = target.host.startsWith('/');
  if (socket) query.set('host', target.host);
  const authority = socket
    ? `localhost:${target.port}`
    : `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
  const rest = query.toString();
  return `${scheme}${user}${authority}${path}${rest ? `?${rest}` : ''}`;
}

/**
 * No listed host takes writes now (all down, or read-only: standbys while none is promoted yet). SQLSTATE 08001
 * (sqlclient_unable_to_establish_sqlconnection), so callers treat it as the database being unavailable: retry later.
 */
export class NoWritableHost extends Error {
  readonly code = '08001';
  constructor(reasons: string[]) {
    super(`no writable PostgreSQL host: ${reasons.join('; ')}`);
  }
}

/** The session takes writes: libpq's target_session_attrs=read-write asks the same (off on a primary, on a standby). */
async function isWritable(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ transaction_read_only: string }>('show transaction_read_only');
  return rows[0]?.transaction_read_only === 'off';
}

/**
 * Which of the listed hosts is the primary, as libpq's target_session_attrs=read-write finds it (node-postgres reads
 * one host only). The last host found writable is used until a connection to it fails or finds it read-only; then the
 * next connection asks every host at once (one probe shared by all callers) and takes the first writable in list order.
 */
export class WritableHostSelector {
  readonly #hosts: PostgresHost[];
  readonly #databaseUrl: string;
  readonly #connectTimeoutMs: number;
  #current: PostgresHost | undefined;
  #probing: Promise<PostgresHost> | undefined;

  constructor(databaseUrl: string, connectTimeoutMs: number) {
    this.#hosts = listedHosts(databaseUrl);
    this.#databaseUrl = databaseUrl;
    this.#connectTimeoutMs = connectTimeoutMs;
  }

  /** What node-postgres can read: the URL naming the first host (a connection picks its own from connect() on). */
  get firstHostUrl(): string {
    return singleHostUrl(this.#databaseUrl, this.#hosts[0]);
  }

  writable(): Promise<PostgresHost> {
    if (this.#current) return Promise.resolve(this.#current);
    return (this.#probing ??= this.#probe().finally(() => {
      this.#probing = undefined;
    }));
  }

  /** A connection to `host` failed or found it read-only: the next connection looks again. */
  lost(host: PostgresHost): void {
    if (this.#current && hostName(this.#current) === hostName(host)) this.#current = undefined;
  }

  async #probe(): Promise<PostgresHost> {
    const answers = await Promise.all(this.#hosts.map((host) => this.#ask(host)));
    const index = answers.indexOf('writable');
    if (index >= 0) return (this.#current = this.#hosts[index]);
    throw new NoWritableHost(answers.map((answer, i) => `${hostName(this.#hosts[i])} ${answer}`));
  }

  async #ask(host: PostgresHost): Promise<string> {
    const client = new pg.Client({
      connectionString: singleHostUrl(this.#databaseUrl, host),
      connectionTimeoutMillis: this.#connectTimeoutMs,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      return (await isWritable(client)) ? 'writable' : 'is read-only';
    } catch (err) {
      return `is unreachable (${err instanceof Error ? err.message : String(err)})`;
    } finally {
      await client.end().catch(() => {});
    }
  }

  /** A node-postgres Client class for pg.Pool that connects to the writable host, checking it still is once connected. */
  clientClass(): typeof pg.Client {
    const selector = this;
    class WritableHostClient extends pg.Client {
      override connect(): Promise<pg.Client>;
      override connect(callback: (err: Error | undefined) => void): void;
      override connect(callback?: (err: Error | undefined) => void): Promise<pg.Client> | undefined {
        const connecting = this.#connectToWritable();
        if (!callback) return connecting;
        connecting.then(() => callback(undefined), callback);
      }

      async #connectToWritable(): Promise<pg.Client> {
        const target = await selector.writable();
        // Client reads its host at construction, from the pool's one configuration; it is used only from connect() on.
        Object.assign(this, { host: target.host, port: target.port });
        Object.assign((this as unknown as { connectionParameters: object }).connectionParameters, {
          host: target.host,
          port: target.port,
        });
        try {
          await super.connect();
          if (await isWritable(this)) return this;
        } catch (err) {
          selector.lost(target);
          throw err;
        }
        selector.lost(target);
        await this.end();
        throw new NoWritableHost([`${hostName(target)} became read-only`]);
      }
    }
    return WritableHostClient as unknown as typeof pg.Client;
  }
}
