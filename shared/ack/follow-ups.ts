/**
 * Durable follow-ups: a follow-up (the "acknowledged by X" notice to one channel) whose first try failed
 * for a reason that passes (Slack's and PagerDuty's 429, whose windows outlast one request's 20 s
 * budget; a 5xx; a time-out) is kept in the table (`shared/store/follow-ups.ts`) and tried again after the
 * platform's `Retry-After`, else after a backoff, until it is delivered or {@link FOLLOW_UP_RETRY}'s limit
 * passes. Each try is scheduled on a {@link FollowUpScheduler}: an in-process timer under `npm start`
 * (armed again from the table at start), an EventBridge Scheduler one-time schedule in Lambda.
 *
 * The stored request is generic (a notice kind, a channel, alert occurrences): a try renders it again
 * from the alert records, so it goes wherever the channel puts follow-ups of those alerts, as the first
 * try did. Every outcome is counted (`follow_ups_total{channel,outcome}`) and written to the history.
 */
import { randomUUID } from 'node:crypto';
import { DeliveryError, type Channel } from '../channels/channel.js';
import { deliver, type DeliveryClock } from '../channels/deliver.js';
import type { Logger } from '../core/logger.js';
import { noticeFromRecords } from '../escalation/notices.js';
import type { AlertRecord, AlertStores } from '../store/alert-record.js';
import type { FollowUp, FollowUpRequest, FollowUpStore } from '../store/follow-ups.js';

/** When follow-ups are tried again; milliseconds. */
export const FOLLOW_UP_RETRY = {
  /** Wait after a failure without `Retry-After`, doubled after each further one (Slack's windows are 30–60 s). */
  firstDelayMs: 30_000,
  /** Longest wait between tries, `Retry-After` included. */
  maxDelayMs: 600_000,
  /** No try starts later than this after the first: an acknowledgement older than an hour is given up. */
  maxAgeMs: 3_600_000,
  /** How long a try holds its follow-up before another runner may take it (a runner that died). */
  leaseMs: 120_000,
};

/**
 * How a follow-up ended or moved on (`follow_ups_total{outcome}`): `delivered` at the first try,
 * `queued` (kept for a retry after its first try failed), `delivered_on_retry`, `given_up` (its retries ran
 * out, or the platform refused it for good).
 */
export type FollowUpOutcome = 'delivered' | 'queued' | 'delivered_on_retry' | 'given_up';

/** When to run a kept follow-up's next try: a port with two adapters (in-process timers, EventBridge Scheduler). */
export interface FollowUpScheduler {
  /** Runs {@link FollowUps.run} of `id` at `dueAtMs` (epoch ms). @throws the platform's error */
  schedule(id: string, dueAtMs: number): Promise<void>;
}

export interface FollowUpDeps {
  store: FollowUpStore;
  stores: Pick<AlertStores, 'records' | 'history'>;
  /** Every channel by name (escalation targets included). */
  channels: Channel[];
  scheduler: FollowUpScheduler;
  /** One try's delivery: its attempt time-out and budget (its retries are this module's). */
  delivery: { timeoutMs: number; budgetMs?: number };
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
  /** Waits, milliseconds (a test's clock); default real time. */
  sleep?(ms: number): Promise<void>;
  /** Counts an outcome (`follow_ups_total`). */
  count?(channel: string, outcome: FollowUpOutcome): void;
}

/** Whether a failed follow-up is worth trying again later. */
export function passes(err: unknown): boolean {
  return err instanceof DeliveryError && err.retryable;
}

export class FollowUps {
  constructor(private readonly deps: FollowUpDeps) {}

  /** Counts an outcome of a first try (`delivered`, `given_up`) made by the caller. */
  count(channel: string, outcome: FollowUpOutcome): void {
    this.deps.count?.(channel, outcome);
  }

  /**
   * Keeps a follow-up whose first try (at `firstAtMs`) failed with `error`, and schedules its retry.
   * @returns whether it is kept (false: the failure does not pass, or it could not be stored or scheduled)
   */
  async keep(request: FollowUpRequest, error: unknown, firstAtMs: number): Promise<boolean> {
    if (!passes(error)) return false;
    const { store, now, logger } = this.deps;
    const dueAtMs = nextTry(error, 1, now());
    const followUp: FollowUp = { id: randomUUID(), request, dueAtMs, attempts: 1, firstAtMs };
    try {
      await store.add(followUp, firstAtMs + FOLLOW_UP_RETRY.maxAgeMs + FOLLOW_UP_RETRY.maxDelayMs);
      await this.deps.scheduler.schedule(followUp.id, dueAtMs);
    } catch (err) {
      logger.error('follow-up not kept', { channel: request.channel, error: (err as Error).message });
      return false;
    }
    logger.warn('follow-up kept for retry', {
      channel: request.channel,
      id: followUp.id,
      retryAt: new Date(dueAtMs).toISOString(),
    });
    this.deps.count?.(request.channel, 'queued');
    return true;
  }

  /**
   * One try of the kept follow-up `id` (a timer or schedule fired). Not due (another runner has it) or
   * gone (delivered): nothing. Delivered: dropped; failed for good or past the limit: given up; else
   * scheduled again. The history of its alerts says which.
   * @throws the store's or scheduler's error (the follow-up stays kept: a later run, or the next start, retries)
   */
  async run(id: string): Promise<'delivered' | 'retry' | 'given up' | 'not due'> {
    const { store, now } = this.deps;
    const followUp = await store.take(id, now(), FOLLOW_UP_RETRY.leaseMs);
    if (!followUp) return 'not due';
    const { request } = followUp;
    const channel = this.deps.channels.find((c) => c.name === request.channel);
    const records = await this.#records(request);
    if (!channel || records.length === 0) {
      // The channel left the configuration, or every alert moved on to a later occurrence (or expired):
      // its own messages say what holds now.
      await store.remove(id);
      this.deps.logger.warn('follow-up dropped', {
        channel: request.channel,
        id,
        reason: channel ? 'its alerts moved on to a later occurrence or expired' : 'channel no longer configured',
      });
      this.deps.count?.(request.channel, 'given_up');
      return 'given up';
    }
    try {
      await deliver(channel, noticeFromRecords(request.kind, records), this.#options());
    } catch (err) {
      return this.#failed(followUp, records, err);
    }
    await store.remove(id);
    this.deps.logger.info('follow-up delivered on retry', {
      channel: request.channel,
      id,
      attempts: followUp.attempts,
    });
    this.deps.count?.(request.channel, 'delivered_on_retry');
    await this.#history(records, { channels: [request.channel], failed: [], attempts: followUp.attempts });
    return 'delivered';
  }

  async #failed(followUp: FollowUp, records: AlertRecord[], err: unknown): Promise<'retry' | 'given up'> {
    const { store, now, logger } = this.deps;
    const { request, id, attempts } = followUp;
    const dueAtMs = nextTry(err, attempts, now());
    if (passes(err) && dueAtMs - followUp.firstAtMs <= FOLLOW_UP_RETRY.maxAgeMs) {
      await store.retryAt(id, dueAtMs);
      await this.deps.scheduler.schedule(id, dueAtMs);
      logger.warn('follow-up retry failed', {
        channel: request.channel,
        id,
        attempts,
        retryAt: new Date(dueAtMs).toISOString(),
        error: (err as Error).message,
      });
      return 'retry';
    }
    await store.remove(id);
    logger.error('follow-up given up', { channel: request.channel, id, attempts, error: (err as Error).message });
    this.deps.count?.(request.channel, 'given_up');
    await this.#history(records, { channels: [], failed: [request.channel], attempts });
    return 'given up';
  }

  /** The request's alerts as recorded now, still at the occurrence it is about. */
  async #records(request: FollowUpRequest): Promise<AlertRecord[]> {
    const found = await this.deps.stores.records.getMany(
      request.alerts.map((a) => a.fingerprint),
      this.deps.now(),
    );
    return request.alerts.flatMap((a) => {
      const record = found.get(a.fingerprint);
      return record && record.startsAt === a.startsAt ? [record] : [];
    });
  }

  #options() {
    const { delivery, logger, now, sleep } = this.deps;
    const clock: DeliveryClock | undefined = sleep && { now, sleep };
    return { ...delivery, retries: 0, logger, ...(clock && { clock }) };
  }

  async #history(
    records: AlertRecord[],
    outcome: { channels: string[]; failed: string[]; attempts: number },
  ): Promise<void> {
    for (const r of records) {
      await this.deps.stores.history
        .add(r.fingerprint, { type: 'follow-up', ...outcome, startsAt: r.startsAt }, this.deps.now())
        .catch((err: Error) => this.deps.logger.error('ack history write failed', { error: err.message }));
    }
  }
}

/**
 * When try number `attempts + 1` may start, epoch ms: after the platform's `Retry-After` when it sent
 * one, else after the backoff (`firstDelayMs` doubling), at most `maxDelayMs` and at least 1 s from now.
 */
export function nextTry(err: unknown, attempts: number, nowMs: number): number {
  const retryAfterMs = err instanceof DeliveryError ? err.retryAfterMs : undefined;
  const backoffMs = FOLLOW_UP_RETRY.firstDelayMs * 2 ** Math.max(0, attempts - 1);
  return nowMs + Math.max(1000, Math.min(FOLLOW_UP_RETRY.maxDelayMs, retryAfterMs ?? backoffMs));
}
