import type { contractVersions } from '../generated/contract.js';
import type { components } from '../generated/openapi.js';

export type ContractVersion = (typeof contractVersions)[number]['version'];
export type Deprecation = components['schemas']['Deprecation'];
