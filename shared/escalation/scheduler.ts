/**
 * When to run an escalation check: a port with two adapters. `npm start` keeps an in-process timer
 * ({@link TimerScheduler}), armed again from the table at start; Lambda creates one EventBridge Scheduler one-time schedule per alert
 * (`eventbridge-scheduler.ts`). Either way the check re-reads the alert's state before it sends, so
 * a lost cancel never escalates an acknowledged or resolved alert.
 */

/** One occurrence of one alert to check: the payload a schedule carries. */
export interface EscalationJob {
  fingerprint: string;
  /** The occurrence's `startsAt`, RFC 3339 with milliseconds. */
  startsAt: string;
}

export interface EscalationScheduler {
  /**
   * Arranges for the check of `job` to run at `dueAtMs` (epoch milliseconds). Scheduling the same job
   * twice (an HA peer, a retry) leaves one check.
   * @throws the platform's error when it cannot be scheduled (the caller logs it; the alert went out)
   */
  schedule(job: EscalationJob, dueAtMs: number): Promise<void>;
  /** Drops the check of `job` if still pending; no error when there is none. */
  cancel(job: EscalationJob): Promise<void>;
}

const jobId = (job: EscalationJob) => `${job.fingerprint}@${job.startsAt}`;

/** Retries of a failed check by {@link TimerScheduler}, like EventBridge Scheduler's retry policy for the Lambda check. */
export interface TimerRetry {
  /** Pause after the first failure, milliseconds; doubled after each further one. */
  firstDelayMs: number;
  /** Longest pause, milliseconds. */
  maxDelayMs: number;
  /** No retry starts later than this after the due time, milliseconds. */
  maxAgeMs: number;
}

export const TIMER_RETRY: TimerRetry = { firstDelayMs: 30_000, maxDelayMs: 300_000, maxAgeMs: 3_600_000 };

/** `setTimeout` fires at once for a longer delay (2^31 − 1 ms, about 24.8 days); longer waits are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * In-process timers (`npm start`, tests). A failed check is retried ({@link TIMER_RETRY}). Timers end
 * with the process; the due times are in the table, and `npm start` schedules the checks still pending
 * again at start (`AlertRecordStore.scheduledEscalations`). Timers are `unref`ed, so they never keep a process
 * alive on their own.
 */
export class TimerScheduler implements EscalationScheduler {
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #closed = false;

  /**
   * @param run the check; its rejection is passed to `onError`, with when it will be retried (epoch ms) if it will
   * @param now clock, epoch milliseconds
   */
  constructor(
    private readonly run: (job: EscalationJob) => Promise<void>,
    private readonly onError: (job: EscalationJob, error: Error, retryAtMs?: number) => void,
    private readonly now: () => number = Date.now,
    private readonly retry: TimerRetry = TIMER_RETRY,
  ) {}

  async schedule(job: EscalationJob, dueAtMs: number): Promise<void> {
    if (this.#timers.has(jobId(job))) return;
    this.#arm(job, dueAtMs, dueAtMs, 0);
  }

  /** Runs the check of `job` at `atMs`; after `failures` failed runs of it, due at `dueAtMs`. */
  #arm(job: EscalationJob, dueAtMs: number, atMs: number, failures: number): void {
    const id = jobId(job);
    const timer = setTimeout(
      () => {
        this.#timers.delete(id);
        if (this.now() < atMs) return this.#arm(job, dueAtMs, atMs, failures);
        this.run(job).catch((err: Error) => {
          const retryAtMs = this.now() + Math.min(this.retry.firstDelayMs * 2 ** failures, this.retry.maxDelayMs);
          const retries = !this.#closed && !this.#timers.has(id) && retryAtMs - dueAtMs <= this.retry.maxAgeMs;
          this.onError(job, err, retries ? retryAtMs : undefined);
          if (retries) this.#arm(job, dueAtMs, retryAtMs, failures + 1);
        });
      },
      Math.min(MAX_TIMER_MS, Math.max(0, atMs - this.now())),
    );
    timer.unref();
    this.#timers.set(id, timer);
  }

  async cancel(job: EscalationJob): Promise<void> {
    const id = jobId(job);
    clearTimeout(this.#timers.get(id));
    this.#timers.delete(id);
  }

  /** Checks still waiting, as `fingerprint@startsAt`. */
  pending(): string[] {
    return [...this.#timers.keys()];
  }

  /** Drops every pending check, and retries of those running (process shutdown). */
  close(): void {
    this.#closed = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}

/**
 * Reads a job from a schedule's input (`{"fingerprint": "...", "startsAt": "..."}`).
 * @throws Error naming what is missing
 */
export function parseEscalationJob(input: unknown): EscalationJob {
  const o = (input ?? {}) as { fingerprint?: unknown; startsAt?: unknown };
  if (
    typeof o.fingerprint !== 'string' ||
    !o.fingerprint ||
    typeof o.startsAt !== 'string' ||
    Number.isNaN(Date.parse(o.startsAt))
  ) {
    throw new Error('escalation job must be {"fingerprint": string, "startsAt": RFC 3339 string}');
  }
  return { fingerprint: o.fingerprint, startsAt: o.startsAt };
}
