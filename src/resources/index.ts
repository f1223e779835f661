import type { OperationId } from '../generated/contract.js';
import { buildCatalog } from '../catalog/catalog.js';
import { isEnabled, unsupported, type Handlers } from './handler.js';
import { platformHandlers } from './platform/platform-handlers.js';
import { issueTokenHandler } from './oauth/token-handler.js';
import { createTask, getTask, updateTask } from './tasks/task-handlers.js';
import { getPatient, listPatients } from './patients/patient-handlers.js';
import { getVisit, listVisits } from './visits/visit-handlers.js';
import { getReferral, listReferrals } from './referrals/referral-handlers.js';
import { getIntake, listIntakes } from './intakes/intake-handlers.js';
import { createReferral } from './referrals/referral-create.js';
import { getHhvbpSummary, listHhvbpMeasures } from './quality/hhvbp-handlers.js';
import { getPhysicianOrder, listPhysicianOrders } from './physician-orders/physician-order-handlers.js';
import { listWorkingCollectionRows, listWorkingCollections } from './working-collections/working-collection-handlers.js';
import { listRemittanceAllocations, listRemittances } from './remittances/remittance-handlers.js';
import type { AppServices } from '../services.js';

/** Operations whose domain is not built yet: they answer PLATFORM_UNSUPPORTED_OPERATION and the catalog says so. */
const NOT_BUILT_YET = [
  'runQuery', 'listQueryTokens', 'createQueryToken', 'revokeQueryToken', 'getQueryTokenExcelTemplate',
] as const satisfies readonly OperationId[];

type NotBuilt = (typeof NOT_BUILT_YET)[number];

function unsupportedHandlers(): Pick<Handlers, NotBuilt> {
  return Object.fromEntries(NOT_BUILT_YET.map((id) => [id, unsupported(id)])) as unknown as Pick<Handlers, NotBuilt>;
}

export function createHandlers(services: AppServices): Handlers {
  let catalog: ReturnType<typeof buildCatalog> | undefined;
  const handlers: Handlers = {
    ...platformHandlers(() => (catalog ??= buildCatalog((id) => isEnabled(handlers[id]), []))),
    issueToken: issueTokenHandler(services.clientCredentials),
    createTask,
    getTask,
    updateTask,
    listPatients,
    getPatient,
    listVisits,
    getVisit,
    listReferrals,
    getReferral,
    listIntakes,
    getIntake,
    createReferral,
    getHhvbpSummary,
    listHhvbpMeasures,
    listPhysicianOrders,
    getPhysicianOrder,
    listWorkingCollections,
    listWorkingCollectionRows,
    listRemittances,
    listRemittanceAllocations,
    ...unsupportedHandlers(),
  };
  return handlers;
}

