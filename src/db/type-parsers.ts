import pg from 'pg';

/**
 * One set of type parsers for both engines, so the application sees the same JS types
 * whether it runs on PostgreSQL (node-postgres) or on PGlite.
 */
type Parser = (value: string) => unknown;

const OID = {
  bytea: 17,
  int8: 20,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
} as const;

const ARRAY_OF: Record<number, number> = {
  1001: OID.bytea,
  1016: OID.int8,
  1182: OID.date,
  1115: OID.timestamp,
  1185: OID.timestamptz,
  1231: OID.numeric,
};

function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) {
    throw new RangeError(`int8 value ${value} is beyond Number.MAX_SAFE_INTEGER; cast it to text or numeric in SQL`);
  }
  return n;
}

// PostgreSQL's ISO output: "2026-03-01 12:00:00.123456+02" (timestamptz) or without offset (timestamp).
const TIMESTAMP =
  /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?(?:([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?)?$/;

/** timestamptz at its offset; timestamp (no zone) as UTC, so the result never depends on the process's TZ. */
function parseTimestamp(value: string): Date {
  const m = TIMESTAMP.exec(value);
  if (!m) throw new RangeError(`unsupported timestamp value "${value}" (infinity and BC are not mapped to Date)`);
  const [, y, mo, d, h, mi, s, frac = '', sign, oh = '0', om = '0', os = '0'] = m;
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), Number(frac.padEnd(3, '0').slice(0, 3)));
  const offsetMs = (Number(oh) * 3600 + Number(om) * 60 + Number(os)) * 1000;
  return new Date(date.getTime() - (sign === '-' ? -offsetMs : offsetMs));
}

function parseBytea(value: string): Buffer {
  if (!value.startsWith('\\x')) throw new RangeError('bytea must arrive in hex format (bytea_output = hex)');
  return Buffer.from(value.slice(2), 'hex');
}

const identity: Parser = (value) => value;

/** Scalar parsers by type OID, for PGlite's `parsers` option (PGlite derives array parsers from them). */
export const parsers: Record<number, Parser> = {
  [OID.int8]: parseInt8,
  [OID.numeric]: identity, // exact decimal text: money must not pass through a float
  [OID.date]: identity, // 'YYYY-MM-DD': a calendar day, never a Date at some midnight
  [OID.timestamp]: parseTimestamp,
  [OID.timestamptz]: parseTimestamp,
  [OID.bytea]: parseBytea,
};

function pad(n: number, width = 2): string {
  return String(Math.abs(n)).padStart(width, '0');
}

/** Formats a Date as node-postgres does (local time with offset), so both engines store the same value. */
function serializeDate(value: unknown): string {
  if (!(value instanceof Date)) return String(value);
  const offset = -value.getTimezoneOffset();
  const day = `${pad(value.getFullYear(), 4)}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
  const time = `${pad(value.getHours())}:${pad(value.getMinutes())}:${pad(value.getSeconds())}.${pad(value.getMilliseconds(), 3)}`;
  return `${day}T${time}${offset < 0 ? '-' : '+'}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}

/** Parameter serializers for PGlite's `serializers` option; node-postgres already formats Dates this way. */
export const serializers: Record<number, (value: unknown) => string> = {
  [OID.date]: serializeDate,
  [OID.timestamp]: serializeDate,
  [OID.timestamptz]: serializeDate,
};

// pg-types 2 exports arrayParser as { create(source, transform) }; its typings describe a plain function.
const arrayParser = pg.types.arrayParser as unknown as {
  create(source: string, transform: Parser): { parse(): unknown[] };
};

function textParser(oid: number): Parser | undefined {
  const scalar = parsers[oid];
  if (scalar) return scalar;
  const element = ARRAY_OF[oid];
  if (element === undefined) return undefined;
  const parseElement = parsers[element];
  return (value) => arrayParser.create(value, parseElement).parse();
}

/** For node-postgres's per-pool `types` option: ours first, pg's built-ins for every other type. */
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): Parser {
    return (format !== 'binary' && textParser(oid)) || pg.types.getTypeParser(oid, format ?? 'text');
  },
} satisfies pg.CustomTypesConfig;
