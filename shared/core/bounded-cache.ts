/**
 * A process-wide memo with a bound: a `Map` that starts afresh once it holds `maxEntries`. For pure
 * functions of small inputs whose results repeat across requests (a `startsAt` text's normalised form):
 * a hit costs a lookup, a miss what the function costs, and the memory never passes the bound. Not an
 * LRU: starting afresh costs a storm's worth of misses at most, and needs no bookkeeping per hit.
 *
 * Every module-level cache of the product is one of these (named, bounded) or lives in a per-request
 * context: nothing grows with the traffic a process has seen.
 */
export class BoundedCache<K, V> {
  readonly #entries = new Map<K, V>();

  /**
   * @param name what it remembers, for a reader of a heap snapshot
   * @param maxEntries the most entries it holds before it starts afresh
   */
  constructor(
    readonly name: string,
    readonly maxEntries: number,
  ) {}

  /** The remembered value of `key`, else `compute(key)`, remembered. */
  get(key: K, compute: (key: K) => V): V {
    const known = this.#entries.get(key);
    if (known !== undefined || this.#entries.has(key)) return known as V;
    const value = compute(key);
    if (this.#entries.size >= this.maxEntries) this.#entries.clear();
    this.#entries.set(key, value);
    return value;
  }

  /** How many entries it holds now. */
  get size(): number {
    return this.#entries.size;
  }
}
