/**
 * In-process locks on table keys, for a table this process alone writes (the embedded store of
 * `npm start`): there a batch of unconditional writes under the locks of its keys is as atomic as one
 * conditional write per key, and costs a few requests instead of one per key (`start-many.ts`).
 *
 * Our own code because the job is a dozen lines and specific: many keys taken at once (a storm's
 * thousands), always in sorted order so that two batches never wait on each other (no deadlock),
 * entries dropped once free (no growth). No lock spans processes: on a shared table the store keeps
 * its single-item conditional writes.
 */

/** The last holder's release of each busy key, by key. */
const tails = new Map<string, Promise<void>>();

/**
 * Runs `work` holding the locks of every key in `keys` (taken in sorted order, released after).
 * @param keys table-qualified keys; duplicates are taken once
 * @returns what `work` returns; its error is rethrown after the locks are released
 */
export async function withKeys<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
  const sorted = [...new Set(keys)].sort();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  for (const key of sorted) {
    const before = tails.get(key);
    tails.set(key, held);
    if (before) await before;
  }
  try {
    return await work();
  } finally {
    release();
    for (const key of sorted) if (tails.get(key) === held) tails.delete(key);
  }
}
