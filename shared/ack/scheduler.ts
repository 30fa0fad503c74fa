/**
 * When to run an escalation check: a port with two adapters. `npm start` keeps an in-process timer
 * ({@link TimerScheduler}); Lambda creates one EventBridge Scheduler one-time schedule per alert
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

/**
 * In-process timers (`npm start`, tests). Checks are lost when the process stops; timers are `unref`ed,
 * so they never keep a process alive on their own.
 */
export class TimerScheduler implements EscalationScheduler {
  readonly #timers = new Map<string, NodeJS.Timeout>();

  /**
   * @param run the check; its rejection is passed to `onError`
   * @param now clock, epoch milliseconds
   */
  constructor(
    private readonly run: (job: EscalationJob) => Promise<void>,
    private readonly onError: (job: EscalationJob, error: Error) => void,
    private readonly now: () => number = Date.now,
  ) {}

  async schedule(job: EscalationJob, dueAtMs: number): Promise<void> {
    const id = jobId(job);
    if (this.#timers.has(id)) return;
    const timer = setTimeout(() => {
      this.#timers.delete(id);
      this.run(job).catch((err: Error) => this.onError(job, err));
    }, Math.max(0, dueAtMs - this.now()));
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

  /** Drops every pending check (process shutdown). */
  close(): void {
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
  if (typeof o.fingerprint !== 'string' || !o.fingerprint || typeof o.startsAt !== 'string' || Number.isNaN(Date.parse(o.startsAt))) {
    throw new Error('escalation job must be {"fingerprint": string, "startsAt": RFC 3339 string}');
  }
  return { fingerprint: o.fingerprint, startsAt: o.startsAt };
}
