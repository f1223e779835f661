import type { OperationId } from '../generated/contract.js';
import { buildCatalog } from '../catalog/catalog.js';
import { isEnabled, unsupported, type Handlers } from './handler.js';
import { platformHandlers } from './platform.js';

/** Operations whose domain is not built yet: they answer PLATFORM_UNSUPPORTED_OPERATION and the catalog says so. */
const NOT_BUILT_YET = [
  'issueToken',
  'runQuery', 'listQueryTokens', 'createQueryToken', 'revokeQueryToken', 'getQueryTokenExcelTemplate',
  'listPatients', 'getPatient', 'listReferrals', 'createReferral', 'getReferral', 'listIntakes', 'getIntake',
  'listVisits', 'getVisit', 'createTask', 'getTask', 'updateTask',
  'listRemittances', 'listRemittanceAllocations', 'listPhysicianOrders', 'getPhysicianOrder',
  'listWorkingCollections', 'listWorkingCollectionRows', 'getHhvbpSummary', 'listHhvbpMeasures',
] as const satisfies readonly OperationId[];

type NotBuilt = (typeof NOT_BUILT_YET)[number];

function unsupportedHandlers(): Pick<Handlers, NotBuilt> {
  return Object.fromEntries(NOT_BUILT_YET.map((id) => [id, unsupported(id)])) as unknown as Pick<Handlers, NotBuilt>;
}

export function createHandlers(): Handlers {
  let catalog: ReturnType<typeof buildCatalog> | undefined;
  const handlers: Handlers = {
    ...platformHandlers(() => (catalog ??= buildCatalog((id) => isEnabled(handlers[id]), []))),
    ...unsupportedHandlers(),
  };
  return handlers;
}

