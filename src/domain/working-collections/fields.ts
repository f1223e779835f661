import type { components } from '../../generated/openapi.js';

/**
 * The values of a working collection's fields. Working values are supplemental: these rules keep a value
 * to its field's declared type, never decide whether it is true.
 */

export type CollectionField = components['schemas']['WorkingCollectionField'];
type FieldType = CollectionField['type'];
export type CellValue = string | number | boolean | null;

/** US dollars, exact, always with cents: "1250.00", "-35.10". */
const MONEY = /^-?(0|[1-9]\d*)\.\d{2}$/;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

function isCalendarDay(value: string): boolean {
  const parts = DAY.exec(value);
  if (!parts) return false;
  const [year, month, day] = parts.slice(1).map(Number);
  const at = new Date(Date.UTC(year, month - 1, day));
  return at.getUTCFullYear() === year && at.getUTCMonth() === month - 1 && at.getUTCDate() === day;
}

const isText = (value: unknown): value is string => typeof value === 'string';
const isReference = (value: unknown) => isText(value) && value.trim() !== '';

const FITS: Record<FieldType, (value: unknown, field: CollectionField) => boolean> = {
  text: isText,
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  money: (value) => isText(value) && MONEY.test(value),
  date: (value) => isText(value) && isCalendarDay(value),
  boolean: (value) => typeof value === 'boolean',
  choice: (value, field) => isText(value) && (field.options ?? []).includes(value),
  patient_reference: isReference,
  order_reference: isReference,
};

const EXPECTED: Record<FieldType, string> = {
  text: 'a string',
  number: 'a finite number',
  money: 'dollars as a decimal string with cents, such as "1250.00"',
  date: 'a calendar day YYYY-MM-DD',
  boolean: 'true or false',
  choice: 'one of its options',
  patient_reference: 'a patient id',
  order_reference: 'a physician order id',
};

/** Why `value` cannot be held by `field`, or null when it can; null (an empty cell) fits every field. */
export function cellProblem(field: CollectionField, value: unknown): string | null {
  if (value === null || FITS[field.type](value, field)) return null;
  return `${field.id} (${field.type}) holds ${JSON.stringify(value)}; expected ${EXPECTED[field.type]}`;
}

/** Problems of a collection's field definitions: ids unique, labels set, options on choice fields only, each once. */
export function fieldProblems(fields: readonly CollectionField[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const field of fields) {
    if (seen.has(field.id)) problems.push(`field id ${field.id} is used twice`);
    seen.add(field.id);
    if (field.label.trim() === '') problems.push(`field ${field.id} has no label`);
    const options = field.options;
    if (field.type === 'choice' && (!options || options.length === 0))
      problems.push(`choice field ${field.id} has no options`);
    if (field.type !== 'choice' && options !== undefined)
      problems.push(`field ${field.id} is ${field.type}, so it takes no options`);
    if (options && new Set(options).size !== options.length)
      problems.push(`choice field ${field.id} lists an option twice`);
  }
  return problems;
}

/** Problems of a row about to be stored: values of unknown fields, and values that do not fit theirs. */
export function rowProblems(fields: readonly CollectionField[], values: Readonly<Record<string, unknown>>): string[] {
  const byId = new Map(fields.map((field) => [field.id, field]));
  return Object.entries(values).flatMap(([id, value]) => {
    const field = byId.get(id);
    if (!field) return [`${id} is not a field of the collection`];
    const problem = cellProblem(field, value);
    return problem ? [problem] : [];
  });
}

/**
 * A row's values as served: one per field, in field order, the stored value when it fits its field and null otherwise
 * (a field retyped after the value was written); `misfits` names the fields whose stored value was withheld.
 */
export function servedValues(fields: readonly CollectionField[], stored: Readonly<Record<string, unknown>>) {
  const values: Record<string, CellValue> = {};
  const misfits: string[] = [];
  for (const field of fields) {
    const value = stored[field.id] ?? null;
    const fits = cellProblem(field, value) === null;
    values[field.id] = fits ? (value as CellValue) : null;
    if (!fits) misfits.push(field.id);
  }
  return { values, misfits };
}
