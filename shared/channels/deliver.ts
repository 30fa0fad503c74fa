/**
 * Delivers one notification to one channel with bounded retries (p-retry runs the attempts; the
 * wait between them is exponential backoff with jitter, or the platform's `Retry-After` (Slack's and
 * PagerDuty's 429) instead, when the wait and an attempt after it fit in the budget; else the delivery
 * ends there, with the error carrying `retryAfterMs`). Only `DeliveryError`s
 * marked retryable are retried. Content the platform refuses gets one more try, reduced (see
 * {@link deliver}). The budget is kept and the waits are made on a {@link DeliveryClock}: real time by
 * default, a test's clock in tests (p-retry's own timers are not used, so a test's clock moves instead
 * of waiting).
 *
 * An attempt that timed out after the platform had the whole message (`DeliveryError.outcomeUnknown`)
 * may have been delivered: a platform that accepts slowly would get a copy per attempt. After one, the
 * next try is the last: it waits longer first ({@link UNKNOWN_OUTCOME_MIN_WAIT_MS}, or the attempt's
 * time-out if longer), gets the rest of the budget as its time-out, and its failure is reported as
 * "may have been delivered" (`outcomeUnknown`), not as a plain failure.
 */
import pRetry from 'p-retry';
import { setTimeout as sleep } from 'node:timers/promises';
import { ContentRefusedError, DeliveryError, type Channel } from './channel.js';
import type { Logger } from '../core/logger.js';
import type { Notification } from '../render/notification.js';
import { reduceNotification } from '../render/reduce.js';

export interface DeliveryOptions {
  /** Per-attempt time-out, milliseconds. */
  timeoutMs: number;
  /** Retries after the first attempt. */
  retries: number;
  /**
   * Whole budget for one channel, milliseconds, retries and waits included. Default 20 s: inside
   * the Lambda time-out (30 s) and short enough that Alertmanager's own retry takes over.
   */
  budgetMs?: number;
  logger: Logger;
  /** Where the budget is measured and the waits between attempts are made; default {@link realClock}. */
  clock?: DeliveryClock;
}

/** Time as {@link deliver} sees it. */
export interface DeliveryClock {
  /** Milliseconds (epoch or any fixed origin): only differences are used. */
  now(): number;
  /** Resolves once `ms` milliseconds have passed. */
  sleep(ms: number): Promise<void>;
}

/** The wall clock and Node's timers. */
export const realClock: DeliveryClock = { now: () => Date.now(), sleep: (ms) => sleep(ms) };

export const DEFAULT_DELIVERY_BUDGET_MS = 20_000;
/** Backoff between attempts, milliseconds (before jitter: × 1–2, doubling per retry, at most `MAX_BACKOFF_MS`). */
const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 5_000;
/**
 * Shortest wait after an attempt whose outcome is unknown, milliseconds: longer than the first backoffs
 * (0.5–2 s), so a platform still working on the message can finish; the attempt's time-out when longer.
 */
export const UNKNOWN_OUTCOME_MIN_WAIT_MS = 2_000;

/** What the attempts of one delivery have seen so far. */
interface Attempts {
  count: number;
  /** An attempt's outcome was unknown: the next attempt is the last. */
  unknown: boolean;
}

/**
 * Sends with retries; when the platform refuses the content (a `ContentRefusedError`) or the channel
 * fails to render or encode it (any error that is not a `DeliveryError`), sends once more a reduced
 * rendering (`reduceNotification`: values cut short, control characters and odd links removed), with
 * the budget that is left. Resending the same content could never pass; the reduced one usually does.
 * @returns the number of attempts made, once the channel accepted the notification
 * @throws the last error (a `DeliveryError`, or whatever the channel threw) when every attempt failed:
 *   a `ContentRefusedError` when the platform refused the reduced rendering too; a `DeliveryError` with
 *   `outcomeUnknown` when an attempt timed out after the platform had the whole message
 */
export async function deliver(channel: Channel, notification: Notification, options: DeliveryOptions): Promise<number> {
  const budgetMs = options.budgetMs ?? DEFAULT_DELIVERY_BUDGET_MS;
  const clock = options.clock ?? realClock;
  const started = clock.now();
  const attempts: Attempts = { count: 0, unknown: false };
  try {
    await sendWithRetries(channel, notification, { ...options, budgetMs, clock }, attempts);
  } catch (err) {
    if (!refusedContent(err)) throw err;
    options.logger.warn('channel content refused', {
      channel: channel.name,
      retry: 'reduced rendering',
      error: (err as Error).message,
    });
    const left = Math.max(options.timeoutMs, budgetMs - (clock.now() - started));
    await sendWithRetries(channel, reduceNotification(notification), { ...options, budgetMs: left, clock }, attempts);
  }
  return attempts.count;
}

type SendOptions = DeliveryOptions & { budgetMs: number; clock: DeliveryClock };

async function sendWithRetries(
  channel: Channel,
  notification: Notification,
  options: SendOptions,
  attempts: Attempts,
): Promise<void> {
  const { budgetMs, clock } = options;
  const started = clock.now();
  const remaining = () => budgetMs - (clock.now() - started);
  await pRetry(
    async () => {
      attempts.count++;
      // The last try after an unknown outcome waits as long as the budget allows for the platform's answer.
      const timeoutMs = attempts.unknown ? remaining() : Math.min(options.timeoutMs, remaining());
      await channel.send(notification, AbortSignal.timeout(Math.max(1, timeoutMs)));
    },
    {
      retries: options.retries,
      // The waits are made on the clock in afterFailedAttempt; p-retry's own are zero.
      minTimeout: 0,
      maxTimeout: 0,
      shouldRetry: ({ error }) => isRetryable(error),
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) =>
        afterFailedAttempt({ channel, options, attempts, remaining }, { error, attemptNumber, retriesLeft }),
    },
  );
}

/**
 * After a failed attempt: logs it and waits before the next, or throws to end the delivery (p-retry
 * rethrows what this throws): the last try after an unknown outcome, or no time left for another attempt.
 */
async function afterFailedAttempt(
  run: { channel: Channel; options: SendOptions; attempts: Attempts; remaining: () => number },
  { error, attemptNumber, retriesLeft }: { error: Error; attemptNumber: number; retriesLeft: number },
): Promise<void> {
  const { channel, options, attempts, remaining } = run;
  const last = attempts.unknown;
  const unknown = isOutcomeUnknown(error);
  attempts.unknown ||= unknown;
  const retry = isRetryable(error) && retriesLeft > 0 && !last;
  const waitMs = !retry
    ? undefined
    : unknown
      ? waitAfterUnknown(remaining(), options.timeoutMs)
      : waitBefore(attemptNumber, error, remaining(), options.timeoutMs);
  options.logger.warn('channel attempt failed', {
    channel: channel.name,
    attempt: attemptNumber,
    retry: waitMs !== undefined,
    ...(unknown && { outcome: 'unknown' }),
    error: error.message,
  });
  if (last) throw mayHaveBeenDelivered(error);
  if (!retry) return;
  if (waitMs === undefined) throw error;
  await options.clock.sleep(waitMs);
}

/** The wait before the one try after an unknown outcome, milliseconds; `undefined` when no attempt fits. */
function waitAfterUnknown(remainingMs: number, timeoutMs: number): number | undefined {
  const waitMs = Math.max(UNKNOWN_OUTCOME_MIN_WAIT_MS, timeoutMs);
  // A shorter wait still beats no try at all, as long as an attempt of a few seconds fits after it.
  const fits = Math.min(waitMs, remainingMs - timeoutMs);
  return fits >= 0 ? fits : remainingMs > timeoutMs / 2 ? 0 : undefined;
}

/**
 * The error of the last try after an unknown outcome: itself when its outcome is unknown too, else one
 * that says an earlier attempt may have been delivered.
 */
function mayHaveBeenDelivered(error: Error): Error {
  if (isOutcomeUnknown(error)) return error;
  const reason = error instanceof DeliveryError ? error.reason : 'other';
  return new DeliveryError(`${error.message} (an earlier attempt may have been delivered)`, {
    retryable: false,
    reason,
    outcomeUnknown: true,
  });
}

/**
 * The wait before retry number `attemptNumber`, milliseconds: the platform's `Retry-After` when it sent one,
 * else the backoff; `undefined` when no attempt fits. A `Retry-After` that leaves no room for an attempt
 * after it ends the delivery: a request inside the platform's window is refused again (and Slack may
 * lengthen the window), so the failure goes back to whoever retries later (Alertmanager, after a 5xx; a
 * kept follow-up, after the `Retry-After` itself).
 */
function waitBefore(attemptNumber: number, error: Error, remainingMs: number, timeoutMs: number): number | undefined {
  const retryAfterMs = error instanceof DeliveryError ? error.retryAfterMs : undefined;
  if (retryAfterMs !== undefined) return retryAfterMs + timeoutMs <= remainingMs ? retryAfterMs : undefined;
  const backoffMs = Math.min(
    MAX_BACKOFF_MS,
    Math.round((1 + Math.random()) * MIN_BACKOFF_MS * 2 ** (attemptNumber - 1)),
  );
  return backoffMs < remainingMs ? backoffMs : undefined;
}

/**
 * A refusal of the content that a reduced rendering may pass, or a failure to render or encode it
 * (not a `DeliveryError` at all).
 */
function refusedContent(error: unknown): boolean {
  if (error instanceof ContentRefusedError) return error.options.reducedMayPass !== false;
  return !(error instanceof DeliveryError);
}

function isOutcomeUnknown(error: unknown): boolean {
  return error instanceof DeliveryError && error.outcomeUnknown;
}

function isRetryable(error: Error): boolean {
  return error instanceof DeliveryError && error.retryable;
}
