import t from 'tap';
import type { InjectOptions } from 'fastify';
import { operations, type OperationDefinition } from '../../src/generated/contract.js';
import { readProjectFile } from '../../src/project-files.js';
import { atPointer } from '../../src/shared/json-pointer.js';
import { buildTestApp, signIn, type SignedInApi, type TestApi } from '../helpers/app.js';
import { seededAgency } from '../helpers/clinical.js';
import { tokenRequestBody } from '../helpers/identity.js';

/**
 * A generated fuzz of every operation of the contract, in both PHI modes: requests built from each operation's own
 * parameters and body schema, then mutated (types, sizes, unicode, NUL, lone surrogates, broken encodings, bad
 * headers). Every answer must be below 500 and in the contract's shapes (the test app checks each one against
 * openapi.json). Seeded, so a failure reproduces: FUZZ_SEED=<n> picks another sequence.
 */
t.setTimeout(900_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261128);
const PER_OPERATION_AND_MODE = 60;

type Schema = Record<string, any>;
const document: Schema = JSON.parse(readProjectFile('openapi.json'));

function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return {
    chance: (p: number) => next() < p,
    int: (max: number) => Math.floor(next() * max),
    pick<T>(items: readonly T[]): T {
      return items[Math.floor(next() * items.length)];
    },
  };
}
const rng = random(SEED);

const HOSTILE_TEXT = [
  '',
  ' ',
  'x'.repeat(10_000),
  'nul\u0000inside',
  '\u0000',
  'lone \ud800',
  '\udfff tail',
  'Zoë 📞 \u202eRTL',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '%00',
  '../../etc/passwd',
  "' OR 1=1 --",
  '<script>alert(1)</script>',
  '\n\t\r',
  '1e400',
  '-1',
  '0',
  'NaN',
  '2026-02-30',
  '9999-12-31T23:59:59Z',
  '0000-00-00',
  'null',
  'true',
  'PT-AAAAAAAA',
  'OR-ZZZZZZ',
  'pat_',
  '{"a":1}',
  '\\u0000',
  '\ufeffbom',
  'a'.repeat(129),
];
const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 1,
  [],
  [1, 'a', null],
  {},
  { a: { b: { c: null } } },
  ['\u0000'],
];
const RAW_QUERY_VALUES = ['%', '%ZZ', '%ED%A0%80', '%C3%28', '%FF', '%00', '%E2%80%AE', '+', '%2B%2B', ''];
const RAW_BODIES = [
  '',
  'null',
  '[]',
  '"text"',
  '{',
  '{"a":1,}',
  '123',
  '{"a":"\\u0000"}',
  '{"a":"\\ud800"}',
  '[[[[[[[[[[]]]]]]]]]]',
  '\u0000',
];

function resolve(schema: Schema | undefined): Schema {
  let at = schema ?? {};
  for (let hops = 0; typeof at.$ref === 'string' && hops < 10; hops++) {
    at = atPointer(document, at.$ref) as Schema;
  }
  return at;
}

/** A value the schema accepts, more or less: the starting point the mutations work from. */
function valueFor(raw: Schema | undefined, depth = 0): unknown {
  const schema = resolve(raw);
  const choices = schema.oneOf ?? schema.anyOf;
  if (choices) return valueFor(rng.pick(choices), depth);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((part: Schema) => valueFor(part, depth)));
  if (schema.enum) return rng.pick(schema.enum);
  if (schema.const !== undefined) return schema.const;
  if (schema.example !== undefined && rng.chance(0.5)) return schema.example;
  const type = Array.isArray(schema.type) ? rng.pick(schema.type) : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [name, property] of Object.entries<Schema>(schema.properties ?? {})) {
        if ((schema.required ?? []).includes(name) || (depth < 3 && rng.chance(0.5)))
          out[name] = valueFor(property, depth + 1);
      }
      return out;
    }
    case 'array':
      return depth < 3 ? Array.from({ length: rng.int(3) }, () => valueFor(schema.items, depth + 1)) : [];
    case 'integer':
      return Math.max(schema.minimum ?? 0, Math.min(schema.maximum ?? 100, rng.int(100)));
    case 'number':
      return rng.int(1000) / 10;
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    case 'string':
      if (schema.format === 'date') return '2026-03-01';
      if (schema.format === 'date-time') return '2026-03-01T12:00:00Z';
      return 'fuzz value';
    default:
      return 'fuzz';
  }
}

/** One mutation of a value: another type, a hostile string, or the value as it was. */
function mutated(value: unknown): unknown {
  if (rng.chance(0.35)) return value;
  if (rng.chance(0.6)) return rng.pick(HOSTILE_TEXT);
  if (rng.chance(0.8)) return rng.pick(HOSTILE_VALUES);
  return typeof value === 'string' ? value + rng.pick(HOSTILE_TEXT) : value;
}

function mutatedObject(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return mutated(value);
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const name of Object.keys(out)) {
    if (rng.chance(0.1)) delete out[name];
    else out[name] = typeof out[name] === 'object' && rng.chance(0.5) ? mutatedObject(out[name]) : mutated(out[name]);
  }
  if (rng.chance(0.2))
    out[rng.pick(['extra', 'a\u0000b', '\ud800', '__proto__', 'constructor'])] = rng.pick(HOSTILE_VALUES);
  return out;
}

/** Every byte of the text's UTF-8 percent-encoded (a lone surrogate is sent as U+FFFD: UTF-8 has no form for it). */
const percentEncoded = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

function queryString(operation: OperationDefinition): string {
  const pairs: string[] = [];
  for (const parameter of operation.queryParameters as unknown as { name: string; schema: Schema }[]) {
    if (!rng.chance(0.5)) continue;
    const value = mutated(valueFor(parameter.schema));
    const text = rng.chance(0.15)
      ? rng.pick(RAW_QUERY_VALUES)
      : percentEncoded(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
    pairs.push(`${parameter.name}=${text}`);
    if (rng.chance(0.1)) pairs.push(`${parameter.name}=${text}`);
  }
  if (rng.chance(0.1)) pairs.push(`unknown_${rng.int(9)}=${rng.pick(RAW_QUERY_VALUES)}`);
  return pairs.length > 0 ? `?${pairs.join('&')}` : '';
}

function pathOf(operation: OperationDefinition, ids: readonly string[]): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    if (name === 'queryId' && rng.chance(0.7))
      return rng.pick(['active_census', 'orders_awaiting_signature', 'remittance_variance', 'nope']);
    if (name === 'templateType' && rng.chance(0.7)) return rng.pick(['power-query', 'office-script', 'xlsx', 'other']);
    if (rng.chance(0.6) && ids.length > 0) return percentEncoded(rng.pick(ids));
    return rng.chance(0.2) ? rng.pick(RAW_QUERY_VALUES) : percentEncoded(String(rng.pick(HOSTILE_TEXT)) || 'x');
  });
}

function bodySchema(operation: OperationDefinition): Schema | undefined {
  const content = document.paths[operation.path]?.[operation.method.toLowerCase()]?.requestBody?.content;
  return content?.['application/json']?.schema;
}

let keys = 0;
let addresses = 0;

function headersFor(operation: OperationDefinition): Record<string, string> {
  const headers: Record<string, string> = {};
  if (operation.command) {
    if (!rng.chance(0.1))
      headers['idempotency-key'] = rng.chance(0.85)
        ? `fuzz-${SEED}-${++keys}`
        : rng.pick(['', 'short', 'k'.repeat(200), 'bad key!', '../../x']);
  }
  if (rng.chance(0.1)) headers['svc-contract-version'] = rng.pick(['1', '2', '3', '0', 'abc', ' 2', '2.0']);
  if (operation.requestContentTypes.length > 0) {
    headers['content-type'] = rng.chance(0.9)
      ? 'application/json'
      : rng.pick([
          'text/plain',
          'application/json; charset=latin1',
          'application/x-www-form-urlencoded',
          'application/xml',
        ]);
  }
  return headers;
}

function payloadFor(operation: OperationDefinition, session: SignedInApi): string | undefined {
  if (operation.requestContentTypes.length === 0) return undefined;
  if (rng.chance(0.1)) return rng.pick(RAW_BODIES);
  const valid =
    operation.operationId === 'issueToken'
      ? tokenRequestBody(session.integration, rng.pick(['phi', 'no_phi']))
      : valueFor(bodySchema(operation));
  return JSON.stringify(mutatedObject(valid));
}

function requestFor(operation: OperationDefinition, session: SignedInApi, ids: readonly string[]): InjectOptions {
  const headers = headersFor(operation);
  if (rng.chance(0.03)) headers.authorization = rng.pick(['Bearer x', 'Basic Og==', `Bearer ${'a.'.repeat(50)}`]);
  return {
    method: operation.method,
    url: pathOf(operation, ids) + queryString(operation),
    headers,
    payload: payloadFor(operation, session),
    remoteAddress: `192.0.2.${++addresses % 250}`,
  };
}

/** Ids that exist in the agency, from the first page of every list, so that paths also reach the handlers' lookups. */
async function knownIds(session: SignedInApi): Promise<string[]> {
  const ids = new Set<string>();
  for (const operation of Object.values(operations)) {
    if (operation.method !== 'GET' || operation.path.includes('{')) continue;
    const res = await session.request({ method: 'GET', url: operation.path });
    if (res.statusCode !== 200 || !String(res.headers['content-type']).includes('json')) continue;
    const data = res.json().data;
    if (Array.isArray(data)) for (const item of data.slice(0, 5)) if (typeof item?.id === 'string') ids.add(item.id);
  }
  return [...ids];
}

const api: TestApi = await buildTestApp();
const agency = await seededAgency(api);
const generous = {
  rateLimitPerMinute: 1_000_000,
  dailyQuota: 1_000_000,
  dailyCostBudget: null,
  agencyId: agency.agencyId,
};
const sessions = {
  phi: await signIn(api, { phiMode: 'phi', integration: generous }),
  no_phi: await signIn(api, { phiMode: 'no_phi', integration: generous }),
};

t.test(
  `${PER_OPERATION_AND_MODE} generated requests per operation and PHI mode: no 5xx, every answer in the contract`,
  async (t) => {
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let sent = 0;
    for (const [mode, session] of Object.entries(sessions)) {
      const ids = await knownIds(session);
      for (const operation of Object.values(operations)) {
        for (let i = 0; i < PER_OPERATION_AND_MODE; i++) {
          const request = requestFor(operation, session, ids);
          sent++;
          try {
            const res = await session.request(request);
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
            if (res.statusCode >= 500)
              failures.push(`${mode} ${request.method} ${request.url} -> ${res.statusCode} ${res.body.slice(0, 300)}`);
          } catch (err) {
            failures.push(`${mode} ${request.method} ${request.url}: ${(err as Error).message.slice(0, 600)}`);
          }
        }
      }
    }
    t.comment(`seed ${SEED}: ${sent} requests; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    t.ok(sent >= 3_000, `${sent} requests`);
    t.ok((statuses.get(200) ?? 0) > sent / 10, 'a fair share reached the handlers and succeeded');
    t.same(failures.slice(0, 20), [], `${failures.length} answers were 5xx or outside the contract`);
  },
);
