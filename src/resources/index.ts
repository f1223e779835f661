import type { OperationId } from '../generated/contract.js';
import { buildCatalog, type CatalogMcpSurface } from '../catalog/catalog.js';
import { isEnabled, type Handlers } from './handler.js';
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
import {
  listWorkingCollectionRows,
  listWorkingCollections,
} from './working-collections/working-collection-handlers.js';
import { listRemittanceAllocations, listRemittances } from './remittances/remittance-handlers.js';
import type { AppServices } from '../services.js';
import type { CallAdmission } from '../gateway/core/admission.js';
import { QueryRegistry } from './queries/query-registry.js';
import { GOVERNED_QUERIES } from './queries/governed-queries.js';
import type { GovernedQuery } from './queries/governed-query.js';
import { runQueryHandler } from './queries/query-run.js';
import { queryTokenHandlers } from './query-tokens/query-token-handlers.js';

interface Resources {
  handlers: Handlers;
  /** Admission rules the families add to their operations (a governed query's access and cost). */
  admissions: Partial<Record<OperationId, CallAdmission>>;
}

/**
 * `queries`: the approved governed queries (this deployment's registry unless a test brings its own); `mcp`: the MCP
 * surface the catalog describes, when the app serves one.
 */
export function createResources(
  services: AppServices,
  queries: readonly GovernedQuery<any>[] = GOVERNED_QUERIES,
  mcp?: CatalogMcpSurface,
): Resources {
  const registry = new QueryRegistry(queries);
  let catalog: ReturnType<typeof buildCatalog> | undefined;
  const handlers: Handlers = {
    ...platformHandlers(() => (catalog ??= buildCatalog((id) => isEnabled(handlers[id]), registry.catalog(), mcp))),
    runQuery: runQueryHandler(registry),
    ...queryTokenHandlers(registry, services.config.tokenIssuer),
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
  };
  return { handlers, admissions: { runQuery: registry.admission } };
}
