/**
 * In-process timers for kept follow-ups (`npm start`, tests): the {@link FollowUpScheduler} adapter that
 * needs no cloud. Timers end with the process; the follow-ups are in the table, and `npm start` arms them
 * again at start (`AckRuntime.resume`). A run that throws (the store unreachable) is tried again after
 * the follow-up's lease. Timers are `unref`ed: they never keep a process alive on their own.
 */
import { FOLLOW_UP_RETRY, type FollowUpScheduler } from './follow-ups.js';

/** `setTimeout` fires at once for a longer delay (2^31 − 1 ms); longer waits are armed again. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class FollowUpTimers implements FollowUpScheduler {
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #closed = false;

  /**
   * @param run one try of the follow-up (`FollowUps.run`)
   * @param onError told of a run that threw, and when it runs again (epoch ms)
   * @param now clock, epoch milliseconds
   */
  constructor(
    private readonly run: (id: string) => Promise<unknown>,
    private readonly onError: (id: string, error: Error, retryAtMs: number) => void,
    private readonly now: () => number = Date.now,
  ) {}

  async schedule(id: string, dueAtMs: number): Promise<void> {
    if (this.#closed) return;
    clearTimeout(this.#timers.get(id));
    const timer = setTimeout(
      () => {
        this.#timers.delete(id);
        if (this.now() < dueAtMs) return void this.schedule(id, dueAtMs);
        this.run(id).catch((err: Error) => {
          const retryAtMs = this.now() + FOLLOW_UP_RETRY.leaseMs;
          this.onError(id, err, retryAtMs);
          void this.schedule(id, retryAtMs);
        });
      },
      Math.min(MAX_TIMER_MS, Math.max(0, dueAtMs - this.now())),
    );
    timer.unref();
    this.#timers.set(id, timer);
  }

  /** Follow-ups waiting for their next try, by id. */
  pending(): string[] {
    return [...this.#timers.keys()];
  }

  /** Drops every timer (process shutdown); the follow-ups stay in the table. */
  close(): void {
    this.#closed = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
