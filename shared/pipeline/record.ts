/**
 * The record stage, per channel: a channel's success is written to the delivery ledger as soon as
 * that channel accepted, not after the slowest channel. A crash (SIGKILL, a Lambda time-out) then
 * re-sends only to the channels whose success was not yet written: the window between a platform's
 * 2xx and its ledger write, a few milliseconds, instead of the whole fan-out.
 *
 * Writes coalesce: an alert's write still queued when another channel succeeds carries both
 * channels (DynamoDB `ADD`/`DELETE` on sets), so a storm whose channels finish together still
 * costs about one write per alert.
 */
import pLimit from 'p-limit';
import type { Alert } from '../alertmanager/schema.js';
import type { Claim, DedupeStore } from '../store/dedupe.js';
import type { Logger } from '../core/logger.js';

/** DynamoDB calls in flight at once for one group's ledger. */
const CONCURRENCY = 16;

interface Entry {
  alert: Alert;
  claim: Claim;
  channels: Set<string>;
}

export class DeliveryLedger {
  readonly #limit = pLimit(CONCURRENCY);
  /** Writes queued and not yet started, by event key: a later channel joins them. */
  readonly #queued = new Map<string, Entry>();
  readonly #writes: Promise<void>[] = [];
  readonly #unrecorded = new Set<string>();

  constructor(
    private readonly store: Pick<DedupeStore, 'markDelivered'>,
    private readonly log: Logger,
  ) {}

  /** Records, in the background, that `channel` accepted the alerts of `claimed`. */
  delivered(claimed: { alert: Alert; claim: Claim }[], channel: string): void {
    for (const { alert, claim } of claimed) {
      const queued = this.#queued.get(claim.event.key);
      if (queued) {
        queued.channels.add(channel);
        continue;
      }
      const entry: Entry = { alert, claim, channels: new Set([channel]) };
      this.#queued.set(claim.event.key, entry);
      this.#writes.push(this.#limit(() => this.#write(entry)));
    }
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
    this.#queued.delete(entry.claim.event.key);
    const channels = [...entry.channels];
    try {
      await this.store.markDelivered(entry.alert, entry.claim.event, channels);
    } catch (err) {
      this.#unrecorded.add(entry.claim.event.key);
      this.log.error('ledger write failed', { channels, fingerprint: entry.alert.fingerprint, error: (err as Error).message });
    }
  }
}
