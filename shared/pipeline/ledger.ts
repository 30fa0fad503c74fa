/**
 * The delivery ledger, per channel: a channel's success is written as soon as that channel accepted, not
 * after the slowest channel or a coalescing delay. A crash (SIGKILL, a Lambda time-out) then re-sends only
 * to the channels whose success was not yet written: the window between a platform's 2xx and the end of
 * its ledger write, one store request, instead of the whole fan-out.
 *
 * An alert's writes go one after the other: a channel that accepts while the alert's previous write is in
 * flight joins the next one, which starts as soon as that write ended (DynamoDB `ADD`/`DELETE` on sets).
 * So an alert costs at most one write per channel, fewer when channels answer together, and a success
 * waits for at most one other write of its alert before its own starts.
 *
 * The write of an alert that every channel of its claim accepted is its alert record's write with the
 * delivery mark (`shared/store/delivery-mark.ts`, the record stage's `recordDelivered`): one request after
 * delivery instead of a ledger write and a record write. A partial delivery, or a record write that fails,
 * goes to the occurrence's head (`DedupeStore.markDelivered`).
 */
import pLimit from 'p-limit';
import type { Alert } from '../alertmanager/schema.js';
import type { Logger } from '../core/logger.js';
import type { Claim, DedupeStore } from '../store/dedupe.js';
import type { ClaimedAlert, GroupContext, Ledger } from './context.js';
import { recordDelivered } from './record.js';

/** DynamoDB calls in flight at once for one group's ledger. */
const CONCURRENCY = 64;
/**
 * Writes the alert's record with the delivery mark of `claim.event` (every channel of the claim
 * accepted it); `channels` are all that accepted it in this round.
 * @returns whether the mark stands (false: write the head's ledger too)
 * @throws the store's error
 */
export type MarkDelivered = (alert: Alert, claim: Claim, channels: string[]) => Promise<boolean>;

/** The group's ledger, whose full deliveries the record stage writes with their alert records. */
export function groupLedger(group: GroupContext): Ledger {
  return new DeliveryLedger(group.deps.store, group.log, (alert, claim, channels) =>
    recordDelivered(group, { alert, claim, channels }),
  );
}

interface Entry {
  alert: Alert;
  claim: Claim;
  channels: Set<string>;
}

export class DeliveryLedger implements Ledger {
  readonly #limit = pLimit(CONCURRENCY);
  /** Head writes are single requests whatever `mark` does: at most {@link CONCURRENCY} at once. */
  readonly #headLimit = pLimit(CONCURRENCY);
  /** Writes not yet started, by event key: a later channel joins them (also while they queue for a call). */
  readonly #queued = new Map<string, Entry>();
  /** The latest write of each event key: the next one starts after it. */
  readonly #last = new Map<string, Promise<void>>();
  readonly #writes: Promise<void>[] = [];
  readonly #unrecorded = new Set<string>();
  /** Channels already written to the head, by event key (a later write completes them). */
  readonly #written = new Map<string, Set<string>>();

  /** @param mark writes an alert's record with its delivery mark; unset: every write goes to the head */
  constructor(
    private readonly store: Pick<DedupeStore, 'markDelivered'>,
    private readonly log: Logger,
    private readonly mark?: MarkDelivered,
  ) {}

  delivered(claimed: readonly Pick<ClaimedAlert, 'alert' | 'claim'>[], channel: string): void {
    for (const { alert, claim } of claimed) {
      const entry = this.#queued.get(claim.event.key) ?? this.#queue({ alert, claim, channels: new Set() });
      entry.channels.add(channel);
    }
  }

  /** Starts the entry's write at once, or as soon as its alert's previous write ended. */
  #queue(entry: Entry): Entry {
    const key = entry.claim.event.key;
    this.#queued.set(key, entry);
    const write = (this.#last.get(key) ?? Promise.resolve()).then(() => this.#limit(() => this.#write(entry)));
    this.#last.set(key, write);
    this.#writes.push(write);
    return entry;
  }

  /**
   * Waits for every write.
   * @returns the event keys whose write failed (logged at error level: the channel has the alert,
   *   the ledger does not, so the claim must keep its lease)
   */
  async settle(): Promise<Set<string>> {
    while (this.#writes.length) await Promise.all(this.#writes.splice(0));
    return this.#unrecorded;
  }

  async #write(entry: Entry): Promise<void> {
    const key = entry.claim.event.key;
    // From here on a later channel of the alert gets a write of its own.
    if (this.#queued.get(key) === entry) this.#queued.delete(key);
    const channels = [...entry.channels];
    const all = new Set([...(this.#written.get(key) ?? []), ...channels]);
    try {
      if (this.mark && entry.claim.pending.every((name) => all.has(name)) && (await this.#marked(entry, [...all])))
        return;
      this.#written.set(key, all);
      await this.#headLimit(() => this.store.markDelivered(entry.alert, entry.claim.event, channels));
    } catch (err) {
      this.#unrecorded.add(key);
      this.log.error('ledger write failed', {
        channels,
        fingerprint: entry.alert.fingerprint,
        error: (err as Error).message,
      });
    }
  }

  /** The record's write with the delivery mark; false when it does not stand or failed (the head is written then). */
  async #marked(entry: Entry, channels: string[]): Promise<boolean> {
    return this.mark!(entry.alert, entry.claim, channels).catch((err: Error) => {
      // The record's own problem (its size, a throttle) must not cost the delivery its ledger.
      this.log.warn('record write with delivery mark failed', {
        fingerprint: entry.alert.fingerprint,
        error: err.message,
      });
      return false;
    });
  }
}
