/** Weights by value: `{ active: 30, discharged: 50 }` draws 'active' 3 times in 8. */
export type Weights<T extends string> = Readonly<{ [K in T]?: number }>;

const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * Seeded pseudo-random numbers (sfc32 seeded by cyrb128), so the same seed yields the same demo agency
 * on every run and engine. Not for anything security related.
 */
export class Random {
  private state: [number, number, number, number];
  private readonly idKey: [number, number, number, number] | null;

  /**
   * `idScope` (the agency's id) keys the ids it draws: the same seed gives other ids in another scope, and the same
   * ids in the same one. Without it, it draws no ids.
   */
  constructor(
    seed: string,
    private readonly idScope?: string,
  ) {
    this.state = cyrb128(seed);
    this.idKey = idScope === undefined ? null : cyrb128(`demo-ids:${idScope}`);
    // The first outputs of sfc32 still echo the seed.
    for (let i = 0; i < 12; i++) this.next();
  }

  /** Another sequence, from `seed`, drawing ids in the same scope. */
  derive(seed: string): Random {
    return new Random(seed, this.idScope);
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  private nextUint32(): number {
    let [a, b, c, d] = this.state;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    this.state = [a, b, c, d];
    return t >>> 0;
  }

  /** Integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** `count` distinct items in random order (all of them when there are fewer). */
  sample<T>(items: readonly T[], count: number): T[] {
    const pool = [...items];
    const taken: T[] = [];
    while (taken.length < count && pool.length > 0)
      taken.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0]);
    return taken;
  }

  /** Returns the value when the chance hits, else null. */
  maybe<T>(probability: number, value: () => T): T | null {
    return this.chance(probability) ? value() : null;
  }

  weighted<T extends string>(weights: Weights<T>): T {
    const { values, cumulative } = cumulativeWeights(weights);
    const roll = this.next() * cumulative[cumulative.length - 1];
    let i = 0;
    while (cumulative[i] <= roll) i++;
    return values[i];
  }

  digits(count: number): string {
    let out = '';
    for (let i = 0; i < count; i++) out += this.int(0, 9);
    return out;
  }

  /**
   * `pat_` + 16 base-32 characters (80 bits): collisions are negligible for millions of rows. The drawn bits are
   * XORed with the scope's key, so the ids of one scope stay distinct and two scopes share none in practice.
   */
  id(prefix: string): string {
    if (!this.idKey) throw new Error('this Random has no id scope: ids are drawn per agency');
    let out = `${prefix}_`;
    for (let word = 0; word < 4; word++) {
      let bits = (this.nextUint32() ^ this.idKey[word]) >>> 0;
      for (let char = 0; char < 4; char++, bits >>>= 5) out += ID_ALPHABET[bits & 31];
    }
    return out;
  }
}

// Weight tables are module constants drawn from millions of times: sum them once.
const cumulativeCache = new WeakMap<object, { values: string[]; cumulative: number[] }>();

function cumulativeWeights<T extends string>(weights: Weights<T>): { values: T[]; cumulative: number[] } {
  let table = cumulativeCache.get(weights);
  if (!table) {
    const entries = Object.entries(weights).filter(([, weight]) => (weight as number) > 0) as [T, number][];
    let sum = 0;
    table = { values: entries.map(([value]) => value), cumulative: entries.map(([, weight]) => (sum += weight)) };
    cumulativeCache.set(weights, table);
  }
  return table as { values: T[]; cumulative: number[] };
}

function cyrb128(seed: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < seed.length; i++) {
    const k = seed.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044661);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044661);
  return [(h1 ^ h2 ^ h3 ^ h4) >>> 0, (h2 ^ h1) >>> 0, (h3 ^ h1) >>> 0, (h4 ^ h1) >>> 0];
}
