import {
  capabilities,
  contractVersions,
  operations,
  webhookEnvelopeVersion,
  type OperationDefinition,
  type OperationId,
} from '../generated/contract.js';
import type { components } from '../generated/openapi.js';

type Schemas = components['schemas'];
type Catalog = Schemas['Catalog'];
type GovernedQuery = Schemas['CatalogQuery'];
type CatalogParameter = Schemas['CatalogParameter'];

interface ParameterSchema {
  type?: string;
  format?: string;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
}

function catalogParameter(p: OperationDefinition['queryParameters'][number]): CatalogParameter {
  const schema = p.schema as ParameterSchema;
  const optional = {
    format: schema.format,
    enum: schema.enum,
    default: schema.default,
    minimum: schema.minimum,
    maximum: schema.maximum,
  };
  return {
    name: p.name,
    in: 'query',
    required: p.required,
    type: schema.type ?? 'string',
    description: p.description,
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
  };
}

function catalogRoute(op: OperationDefinition, enabled: boolean): Schemas['CatalogRoute'] {
  return {
    operation_id: op.operationId,
    method: op.method as Schemas['CatalogRoute']['method'],
    path: op.path,
    summary: op.summary,
    tag: op.tag,
    scope: op.scope,
    no_phi: op.noPhi,
    no_phi_usable: op.noPhi !== 'denied',
    capability: op.capability,
    command: op.command,
    cost_units: op.costUnits,
    enabled,
    query_parameters: op.queryParameters.map(catalogParameter),
  };
}

function catalogCapabilities(): Schemas['CatalogCapability'][] {
  const all = Object.values(operations) as OperationDefinition[];
  return Object.entries(capabilities).map(([id, c]) => ({
    id,
    description: c.description,
    command: c.command,
    operations: all.filter((op) => op.capability === id).map((op) => op.operationId),
  }));
}

function catalogWarnings(routes: Schemas['CatalogRoute'][], queries: GovernedQuery[]): string[] {
  const disabled = routes.filter((r) => !r.enabled).map((r) => r.operation_id);
  const warnings: string[] = [];
  if (disabled.length > 0) {
    warnings.push(
      `${disabled.length} operations are not enabled in this deployment and answer PLATFORM_UNSUPPORTED_OPERATION: ${disabled.join(', ')}.`,
    );
  }
  if (queries.length === 0) warnings.push('No governed queries are approved in this deployment.');
  return warnings;
}

/**
 * The runtime catalog (`getCatalog`), derived from the contract's route table and the governed-query
 * and capability registries; nothing here is listed by hand.
 */
export type CatalogMcpSurface = components['schemas']['CatalogMcpSurface'];

/** `mcp`: the MCP surface for people, when this app serves one. */
export function buildCatalog(
  isEnabled: (id: OperationId) => boolean,
  queries: GovernedQuery[],
  mcp?: CatalogMcpSurface,
  now = new Date(),
) {
  const routes = (Object.values(operations) as OperationDefinition[]).map((op) =>
    catalogRoute(op, isEnabled(op.operationId)),
  );
  const data: Catalog = {
    routes,
    queries,
    capabilities: catalogCapabilities(),
    generated_at: now.toISOString(),
    contract_versions: contractVersions.map((v) => ({ ...v })),
    webhook_envelope_version: webhookEnvelopeVersion,
    ...(mcp ? { mcp } : {}),
  };
  return { data, warnings: catalogWarnings(routes, queries) };
}
