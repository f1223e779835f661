import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import type { components } from '../../generated/openapi.js';
import type { CallAdmission } from '../../gateway/core/admission.js';
import { PlatformError } from '../../shared/platform-error.js';
import { queryRunRefusal } from '../../domain/access-policy.js';
import { RequestError, type ValidationIssue } from '../../shared/request-error.js';
import type { GovernedQuery, ParametersSchema } from './governed-query.js';

type Schemas = components['schemas'];
type CatalogQuery = Schemas['CatalogQuery'];
type CatalogParameter = Schemas['CatalogParameter'];
type AnyQuery = GovernedQuery<any>;

// CommonJS: under NodeNext the function is the module's `default` member.
const addFormats = formatsModule.default;

/** The JSON Schema a query's parameters object is validated against, as the catalog shows it. */
function objectSchema({ properties, required = [] }: ParametersSchema) {
  return { type: 'object', properties, required: [...required], additionalProperties: false };
}

function catalogParameters({ properties, required = [] }: ParametersSchema): CatalogParameter[] {
  return Object.entries(properties).map(([name, schema]) => {
    const { type, description, format, enum: values, default: fallback, minimum, maximum } = schema;
    const optional = { format, enum: values ? [...values] : undefined, default: fallback, minimum, maximum };
    return {
      name,
      in: 'body',
      required: required.includes(name),
      type,
      description,
      ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
    };
  });
}

function noPhiOf(query: AnyQuery): CatalogQuery['no_phi'] {
  if (query.noPhiDenied) return 'denied';
  return query.columns.every((c) => c.phi.reduce === 'kept') ? 'allowed' : 'pseudonymized';
}

function issueOf(error: NonNullable<ValidateFunction['errors']>[number]): ValidationIssue {
  const base = `/parameters${error.instancePath}`;
  if (error.keyword === 'required') {
    const name = String(error.params.missingProperty);
    return {
      location: 'body',
      path: `${base}/${name}`,
      message: `parameter "${name}" is required`,
      keyword: 'required',
    };
  }
  if (error.keyword === 'additionalProperties') {
    const name = String(error.params.additionalProperty);
    return {
      location: 'body',
      path: `${base}/${name}`,
      message: `unknown parameter "${name}"`,
      keyword: 'additionalProperties',
    };
  }
  return { location: 'body', path: base, message: error.message ?? 'is invalid', keyword: error.keyword };
}

function invalidParameters(query: AnyQuery, issues: ValidationIssue[]): RequestError {
  const list = issues.map((i) => `${i.path.replace(/^\/parameters\/?/, '') || 'parameters'}: ${i.message}`).join('; ');
  return new RequestError(
    400,
    'invalid_request',
    'PLATFORM_INVALID_INPUT',
    `The parameters of ${query.id} are not valid: ${list}.`,
    {
      issues,
      nextStep: `Send the parameters the catalog declares for ${query.id} (data.queries[].parameters_schema of GET /api/v1/ext/catalog).`,
    },
  );
}

export const queryNotFound = (id: string) =>
  new PlatformError(
    'PLATFORM_QUERY_NOT_FOUND',
    `No governed query ${id} is approved in this deployment; the catalog (GET /api/v1/ext/catalog) lists them in data.queries.`,
    { query_id: id },
  );

/** The approved governed queries of a deployment: their catalog entries, parameter validation and admission rules. */
export class QueryRegistry {
  private readonly queries = new Map<string, AnyQuery>();
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(queries: readonly AnyQuery[]) {
    const ajv = new Ajv2020({ allErrors: true, strict: true, useDefaults: true, coerceTypes: false });
    addFormats(ajv);
    for (const query of queries) {
      if (this.queries.has(query.id)) throw new Error(`governed query ${query.id} is registered twice`);
      const names = new Set(query.columns.map((c) => c.name));
      const unknown = query.order.columns.filter((c) => !names.has(c));
      if (unknown.length > 0)
        throw new Error(`governed query ${query.id} orders by ${unknown.join(', ')}, which it does not declare`);
      this.queries.set(query.id, query);
      this.validators.set(query.id, ajv.compile(objectSchema(query.parameters)));
    }
  }

  get(id: string): AnyQuery | undefined {
    return this.queries.get(id);
  }

  catalog(): CatalogQuery[] {
    return [...this.queries.values()].map((query) => {
      const noPhi = noPhiOf(query);
      return {
        id: query.id,
        title: query.title,
        description: query.description,
        parameters: catalogParameters(query.parameters),
        parameters_schema: objectSchema(query.parameters),
        columns: query.columns.map((c) => ({ ...c, phi: { ...c.phi } })),
        order: { columns: [...query.order.columns], direction: query.order.direction },
        scope: query.scope,
        capability: query.capability,
        no_phi: noPhi,
        no_phi_usable: noPhi !== 'denied',
        cost_units: query.costUnits,
      };
    });
  }

  /** The parameters validated (a copy, with defaults filled), or a 400 PLATFORM_INVALID_INPUT naming every problem. */
  parameters(query: AnyQuery, sent: Record<string, unknown>): Record<string, unknown> {
    const parameters = structuredClone(sent);
    const validate = this.validators.get(query.id)!;
    if (!validate(parameters)) throw invalidParameters(query, (validate.errors ?? []).map(issueOf));
    const problems = query.check?.(parameters) ?? [];
    if (problems.length > 0) {
      throw invalidParameters(
        query,
        problems.map((p) => ({
          location: 'body',
          path: `/parameters/${p.parameter}`,
          message: p.message,
          keyword: 'range',
        })),
      );
    }
    return parameters;
  }

  /**
   * A governed query run's admission, after the operation's own access: the query exists and the access policy lets
   * the caller run it (src/domain/access-policy.ts). The run costs the query's units.
   */
  readonly admission: CallAdmission = {
    admit: (params, principal, policy) => {
      const id = (params as { queryId: string }).queryId;
      const query = this.queries.get(id);
      if (!query) throw queryNotFound(id);
      const refusal = queryRunRefusal(query, principal, policy);
      if (refusal) throw refusal;
      return query.costUnits;
    },
  };
}
