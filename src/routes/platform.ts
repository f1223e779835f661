import type { Handler } from './handler.js';
import type { buildCatalog } from '../catalog/catalog.js';
import { serviceVersion } from '../project-files.js';

export function platformHandlers(catalog: () => ReturnType<typeof buildCatalog>) {
  const getHealth: Handler<'getHealth'> = async () => ({
    data: { status: 'ok', timestamp: new Date().toISOString(), version: serviceVersion },
  });
  const getCatalog: Handler<'getCatalog'> = async () => catalog();
  return { getHealth, getCatalog };
}
