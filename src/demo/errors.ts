/** Refusals the caller can show as they are: the agency is missing, not empty, or has no service area. */
export class DemoSeedError extends Error {
  override name = 'DemoSeedError';
}
