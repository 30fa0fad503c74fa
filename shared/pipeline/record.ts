/**
 * The record stage, per channel: a channel's success is written to the delivery ledger as soon as
 * that channel accepted, not after the slowest channel. A crash (SIGKILL, a Lambda time-out) then
 * re-sends only to the channels whose success was not yet written: the window between a platform's
 * 2xx and its ledger write, a few milliseconds, instead of the whole fan-out.
 *
 * Writes coalesce: an alert's write waits until every channel it goes to has accepted it, or
 * {@link COALESCE_MS} after the first did (a channel that fails or lags never holds the others'
 * record longer), and carries all those channels (DynamoDB `ADD`/`DELETE` on sets). So a group whose
 * channels all succeed costs one write per alert, not one per alert and channel, and a crash
 * re-sends at most what was accepted in those few milliseconds.
 *
 * The write of an alert that every channel of its claim accepted is its alert record's write, with
 * the delivery mark (`shared/store/delivery-mark.ts`), when the group records alerts (`markDelivered`
 * given): one request after delivery instead of a ledger write and a record write. A partial delivery,
 * or a record write that fails, goes to the occurrence's head as before (`DedupeStore.markDelivered`).
 */
import pLimit from 'p-limit';
import type { Alert } from '../alertmanager/schema.js';
import type { Claim, DedupeStore } from '../store/dedupe.js';
import type { Logger } from '../core/logger.js';

/** DynamoDB calls in flight at once for one group's ledger. */
const CONCURRENCY = 64;
/**
 * Writes in flight at once when the record writes are batched (`AckSession.batches`): they then cost
 * a few requests per hundred, so a storm's alerts all join the first batches.
 */
export const BATCHED_CONCURRENCY = 5000;
/** Longest an accepted channel waits for the alert's other channels before its record is written, milliseconds. */
export const COALESCE_MS = 50;

/**
 * Writes the alert's record with the delivery mark of `claim.event` (every channel of the claim
 * accepted it); `channels` are all that accepted it in this round.
 * @returns whether the mark stands (false: write the head's ledger too)
 * @throws the store's error
 */
export type MarkDelivered = (alert: Alert, claim: Claim, channels: string[]) => Promise<boolean>;

interface Entry {
  alert: Alert;
  claim: Claim;
  channels: Set<string>;
  timer?: NodeJS.Timeout;
  /** Lets the write queue for a store call; it is set once. */
  release?: () => void;
}

export class DeliveryLedger {
  readonly #limit: ReturnType<typeof pLimit>;
  /** Head writes are single requests whatever `mark` does: at most {@link CONCURRENCY} at once. */
  readonly #headLimit = pLimit(CONCURRENCY);
  readonly #coalesceMs: number;
  /** Writes not yet started, by event key: a later channel joins them (also once released, while they queue for a call). */
  readonly #queued = new Map<string, Entry>();
  readonly #writes: Promise<void>[] = [];
  readonly #unrecorded = new Set<string>();
  /** Channels already written to the head, by event key (a later write completes them). */
  readonly #written = new Map<string, Set<string>>();

  /**
   * @param mark writes an alert's record with its delivery mark; unset: every write goes to the head
   * @param options.concurrency writes in flight at once (default 64 store calls; {@link BATCHED_CONCURRENCY} where `mark` batches)
   * @param options.coalesceMs how long an accepted channel waits for the alert's others (default {@link COALESCE_MS};
   *   `Infinity`: until every channel of the claim accepted it or fan-out is over — a storm, whose one
   *   digest per channel carries every alert, so that its thousands of writes go out once, batched)
   */
  constructor(
    private readonly store: Pick<DedupeStore, 'markDelivered'>,
    private readonly log: Logger,
    private readonly mark?: MarkDelivered,
    options: { concurrency?: number; coalesceMs?: number } = {},
  ) {
    this.#limit = pLimit(options.concurrency ?? CONCURRENCY);
    this.#coalesceMs = options.coalesceMs ?? COALESCE_MS;
  }

  /** Records, in the background, that `channel` accepted the alerts of `claimed`. */
  delivered(claimed: { alert: Alert; claim: Claim }[], channel: string): void {
    for (const { alert, claim } of claimed) {
      const entry = this.#queued.get(claim.event.key) ?? this.#queue({ alert, claim, channels: new Set() });
      entry.channels.add(channel);
      if (claim.pending.every((name) => entry.channels.has(name))) this.#release(entry);
    }
  }

  #queue(entry: Entry): Entry {
    this.#queued.set(entry.claim.event.key, entry);
    const released = new Promise<void>((resolve) => (entry.release = resolve));
    this.#writes.push(released.then(() => this.#limit(() => this.#write(entry))));
    if (Number.isFinite(this.#coalesceMs)) entry.timer = setTimeout(() => this.#release(entry), this.#coalesceMs);
    return entry;
  }

  #release(entry: Entry): void {
    clearTimeout(entry.timer);
    entry.release?.();
  }

  /**
   * Waits for every write.
   * @returns the event keys whose write failed (logged at error level: the channel has the alert,
   *   the ledger does not, so the claim must keep its lease)
   */
  async settle(): Promise<Set<string>> {
    // Fan-out is over: no other channel will join a queued write.
    for (const entry of this.#queued.values()) this.#release(entry);
    while (this.#writes.length) await Promise.all(this.#writes.splice(0));
    return this.#unrecorded;
  }

  async #write(entry: Entry): Promise<void> {
    // From here on a later channel of the alert gets a write of its own.
    if (this.#queued.get(entry.claim.event.key) === entry) this.#queued.delete(entry.claim.event.key);
    const key = entry.claim.event.key;
    const channels = [...entry.channels];
    const all = new Set([...(this.#written.get(key) ?? []), ...channels]);
    try {
      if (this.mark && entry.claim.pending.every((name) => all.has(name))) {
        const marked = await this.mark(entry.alert, entry.claim, [...all]).catch((err: Error) => {
          // The record's own problem (its size, a throttle) must not cost the delivery its ledger.
          this.log.warn('record write with delivery mark failed', { fingerprint: entry.alert.fingerprint, error: err.message });
          return false;
        });
        if (marked) return;
      }
      this.#written.set(key, all);
      await this.#headLimit(() => this.store.markDelivered(entry.alert, entry.claim.event, channels));
    } catch (err) {
      this.#unrecorded.add(entry.claim.event.key);
      this.log.error('ledger write failed', { channels, fingerprint: entry.alert.fingerprint, error: (err as Error).message });
    }
  }
}
