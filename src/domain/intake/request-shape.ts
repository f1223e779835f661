import { requestFields, requestShapes } from '../../generated/contract.js';
import type { Deprecation } from '../../shared/versioning.js';
import { nearMissWarnings } from './near-miss-fields.js';

export type RequestShape = (typeof requestShapes.createReferral)[number]['shape'];

interface PropertyMarks {
  'x-svc-shape'?: RequestShape;
  deprecated?: boolean;
  'x-svc-successor'?: string;
}

/**
 * The request's field marks, generated from the contract so that the shapes and deprecations are kept once:
 * `x-svc-shape` names the shape a property came with (unmarked: the current shape), and a `deprecated`
 * property names its replacement in `x-svc-successor`.
 */
const properties: Readonly<Record<string, PropertyMarks>> = requestFields.createReferral.fields;
const insuranceProperties = new Set<string>(requestFields.createReferral.objectFields.insurance);
const shapes = requestShapes.createReferral;
const currentShape = shapes.find((s) => s.status === 'current')!.shape;
const earliestShape = shapes.map((s) => s.shape).sort()[0];

const shapeOfField = (name: string): RequestShape => properties[name]['x-svc-shape'] ?? currentShape;

function isDocumentedField(name: string): boolean {
  return Object.hasOwn(properties, name);
}

/** The earliest shape that has every documented field the body uses (a body of 2026-04-01 fields only is the thin shape). */
export function requestShapeOf(body: object): RequestShape {
  const used = Object.keys(body).filter(isDocumentedField).map(shapeOfField);
  return used.reduce((latest, shape) => (shape > latest ? shape : latest), earliestShape);
}

function shapeDeprecation(shape: RequestShape): Deprecation[] {
  const entry = shapes.find((s) => s.shape === shape)!;
  if (entry.status !== 'deprecated' || !entry.successor) return [];
  return [
    {
      kind: 'request_shape',
      name: shape,
      since: entry.successor,
      successor: entry.successor,
      sunset: entry.sunset,
      message: `Request shape ${shape} (${entry.description.toLowerCase().replace(/\.$/, '')}) is deprecated; send the fields of shape ${entry.successor}.`,
    },
  ];
}

function fieldDeprecations(body: object): Deprecation[] {
  return Object.keys(body)
    .filter((name) => isDocumentedField(name) && properties[name].deprecated && properties[name]['x-svc-successor'])
    .map((name) => {
      const successor = properties[name]['x-svc-successor']!;
      return {
        kind: 'field',
        name,
        since: shapeOfField(successor),
        successor,
        sunset: null,
        message: `${name} is deprecated; send ${successor} instead.`,
      };
    });
}

/** What the body used that is deprecated: its request shape, and deprecated fields (each naming what to send instead). */
export function deprecationsOf(body: object, shape: RequestShape): Deprecation[] {
  return [...shapeDeprecation(shape), ...fieldDeprecations(body)];
}

function undocumented(object: object, isDocumented: (name: string) => boolean): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([name]) => !isDocumented(name)));
}

/**
 * Properties beyond the documented ones, kept on the referral as sent; those of an insurance object
 * under `insurance` (a documented name, so it cannot collide with an additional property).
 */
export function additionalFields(body: Record<string, unknown>): Record<string, unknown> {
  const extra = undocumented(body, isDocumentedField);
  const { insurance } = body;
  const insuranceExtra =
    typeof insurance === 'object' && insurance !== null
      ? undocumented(insurance, (name) => insuranceProperties.has(name))
      : {};
  return Object.keys(insuranceExtra).length > 0 ? { ...extra, insurance: insuranceExtra } : extra;
}

/** Warnings for top-level properties that are no field but look like a misspelt one (they are stored as sent all the same). */
export const misspeltFieldWarnings = (body: object): string[] => nearMissWarnings(body, Object.keys(properties));
