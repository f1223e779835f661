import { noPhiPlans, type NoPhiReduction } from '../generated/contract.js';
import { ageFromBirthYear, birthDateToYear, dateToYear, instantToYear, zip3 } from './deidentify.js';
import type { PseudonymKind } from '../shared/ids.js';
import type { components } from '../generated/openapi.js';

type JsonRecord = Record<string, unknown>;
type QueryColumn = components['schemas']['QueryColumn'];

/**
 * A governed query column's `phi` mark (the x-svc-phi vocabulary) as the reduction it stands for; null when kept.
 * Anything this cannot honour (a year of a column that is no date) is withheld: a wrong mark never leaks a value.
 */
function columnReduction({ phi, type }: QueryColumn): NoPhiReduction | null {
  switch (phi.reduce) {
    case 'kept':
      return null;
    case 'handle':
      return { reduce: 'handle', kind: phi.kind ?? 'patient' };
    case 'year':
      return type === 'date' || type === 'date-time'
        ? { reduce: 'year', format: type }
        : { reduce: 'withheld', empty: null };
    case 'zip3':
      return { reduce: 'zip3' };
    case 'category':
      return { reduce: 'category', values: phi.values ?? [], otherwise: phi.otherwise ?? 'other' };
    case 'age':
      return phi.from ? { reduce: 'age', from: phi.from } : { reduce: 'withheld', empty: null };
    default:
      return { reduce: 'withheld', empty: null };
  }
}

/** Handles of the agency for these real ids, in one lookup (PseudonymService.handlesFor). */
export type HandleLookup = (kind: PseudonymKind, realIds: string[]) => Promise<Map<string, string>>;

/** A property of the reduced copy that gets the handle of `id` once the handles are known. */
interface HandleSlot {
  target: JsonRecord;
  key: string;
  kind: PseudonymKind;
  id: string;
}

function category(value: unknown, values: readonly string[], otherwise: string): unknown {
  if (typeof value !== 'string') return value;
  const normalized = value.trim().toLowerCase();
  return values.includes(normalized) ? normalized : otherwise;
}

/** One pass over a response, building its reduced copy; the handles are filled in after one lookup per kind. */
class ResponseReduction {
  readonly slots: HandleSlot[] = [];

  constructor(private readonly asOf: Date) {}

  value(value: unknown, schema: string): unknown {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((item) => this.value(item, schema));
    const { fields, children } = noPhiPlans[schema];
    const source = value as JsonRecord;
    const copy: JsonRecord = {};
    for (const key in source) {
      const reduction = fields[key];
      const child = children[key];
      copy[key] = reduction
        ? this.field(source, key, reduction, copy)
        : child
          ? this.value(source[key], child)
          : source[key];
    }
    return copy;
  }

  private field(source: JsonRecord, key: string, reduction: NoPhiReduction, copy: JsonRecord): unknown {
    const value = source[key];
    if (reduction.reduce === 'age') return ageFromBirthYear(source[reduction.from] as string | null, this.asOf);
    if (value === null || value === undefined) return value;
    switch (reduction.reduce) {
      case 'withheld':
        return reduction.empty;
      case 'handle':
        return this.handle(source, key, reduction, copy);
      case 'year':
        return reduction.format === 'date' ? dateToYear(value as string) : instantToYear(new Date(value as string));
      case 'zip3':
        return zip3(value as string);
      case 'birth_date':
        return birthDateToYear(value as string, this.asOf);
      case 'category':
        return category(value, reduction.values, reduction.otherwise);
      case 'columns':
        return this.rows(value as JsonRecord[], source[reduction.from] as QueryColumn[]);
    }
  }

  /** Rows keyed by column name, each value reduced as its column declares; a value no column declares is withheld. */
  private rows(rows: JsonRecord[], columns: QueryColumn[]): JsonRecord[] {
    const plan = new Map(columns.map((column) => [column.name, columnReduction(column)]));
    return rows.map((row) => {
      const copy: JsonRecord = {};
      for (const key in row) {
        const reduction = plan.get(key);
        copy[key] =
          reduction === undefined ? null : reduction === null ? row[key] : this.field(row, key, reduction, copy);
      }
      return copy;
    });
  }

  /** Null until the handle is filled in, so that no real id can be left in the copy. */
  private handle(
    source: JsonRecord,
    key: string,
    reduction: Extract<NoPhiReduction, { reduce: 'handle' }>,
    copy: JsonRecord,
  ): unknown {
    const { when, kind } = reduction;
    if (when && !when.values.includes(source[when.property] as string)) return source[key];
    this.slots.push({ target: copy, key, kind, id: source[key] as string });
    return null;
  }

  async fillHandles(lookup: HandleLookup): Promise<void> {
    const byKind = new Map<PseudonymKind, HandleSlot[]>();
    for (const slot of this.slots) {
      const slots = byKind.get(slot.kind);
      if (slots) slots.push(slot);
      else byKind.set(slot.kind, [slot]);
    }
    await Promise.all(
      [...byKind].map(async ([kind, slots]) => {
        const handles = await lookup(
          kind,
          slots.map((slot) => slot.id),
        );
        for (const slot of slots) slot.target[slot.key] = handles.get(slot.id);
      }),
    );
  }
}

/**
 * A handler's result as a no_phi session sees it: a reduced copy, per the contract's x-svc-phi marks compiled into
 * noPhiPlans (the result itself is left as it is). One pass, then one handle lookup per kind of id it holds.
 */
export async function reduceForNoPhi(
  body: unknown,
  schema: string,
  lookup: HandleLookup,
  asOf = new Date(),
): Promise<unknown> {
  const reduction = new ResponseReduction(asOf);
  const reduced = reduction.value(body, schema);
  if (reduction.slots.length > 0) await reduction.fillHandles(lookup);
  return reduced;
}
