/**
 * Values by agency, then extension. A warm request looks both up with its principal's own id strings, whose hashes
 * V8 keeps, where one joined key would be a new string to build and hash on every request.
 */
export class IntegrationMap<V> {
  private readonly byAgency = new Map<string, Map<string, V>>();

  get(agencyId: string, extensionId: string): V | undefined {
    return this.byAgency.get(agencyId)?.get(extensionId);
  }

  set(agencyId: string, extensionId: string, value: V): void {
    let extensions = this.byAgency.get(agencyId);
    if (!extensions) this.byAgency.set(agencyId, (extensions = new Map()));
    extensions.set(extensionId, value);
  }

  delete(agencyId: string, extensionId: string): void {
    const extensions = this.byAgency.get(agencyId);
    if (extensions?.delete(extensionId) && extensions.size === 0) this.byAgency.delete(agencyId);
  }

  get size(): number {
    let size = 0;
    for (const extensions of this.byAgency.values()) size += extensions.size;
    return size;
  }

  *values(): IterableIterator<V> {
    for (const extensions of this.byAgency.values()) yield* extensions.values();
  }

  *entries(): IterableIterator<[agencyId: string, extensionId: string, value: V]> {
    for (const [agencyId, extensions] of this.byAgency)
      for (const [extensionId, value] of extensions) yield [agencyId, extensionId, value];
  }
}
