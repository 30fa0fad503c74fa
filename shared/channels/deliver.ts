/**
 * Delivers one notification to one channel with bounded retries (p-retry: exponential backoff
 * with jitter). Only `DeliveryError`s marked retryable are retried; a `Retry-After` from the
 * platform (Slack's 429) is honoured, capped so the whole attempt stays inside the budget. Content
 * the platform refuses gets one more try, reduced (see {@link deliver}).
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
}

export const DEFAULT_DELIVERY_BUDGET_MS = 20_000;
/** Backoff between attempts, milliseconds (before jitter). */
const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 5_000;

/**
 * Sends with retries; when the platform refuses the content (a `ContentRefusedError`) or the channel
 * fails to render or encode it (any error that is not a `DeliveryError`), sends once more a reduced
 * rendering (`reduceNotification`: values cut short, control characters and odd links removed), with
 * the budget that is left. Resending the same content could never pass; the reduced one usually does.
 * @returns the number of attempts made, once the channel accepted the notification
 * @throws the last error (a `DeliveryError`, or whatever the channel threw) when every attempt failed:
 *   a `ContentRefusedError` when the platform refused the reduced rendering too
 */
export async function deliver(channel: Channel, notification: Notification, options: DeliveryOptions): Promise<number> {
  const budgetMs = options.budgetMs ?? DEFAULT_DELIVERY_BUDGET_MS;
  const started = Date.now();
  const attempts = { count: 0 };
  try {
    await sendWithRetries(channel, notification, { ...options, budgetMs }, attempts);
  } catch (err) {
    if (!refusedContent(err)) throw err;
    options.logger.warn('channel content refused', { channel: channel.name, retry: 'reduced rendering', error: (err as Error).message });
    const left = Math.max(options.timeoutMs, budgetMs - (Date.now() - started));
    await sendWithRetries(channel, reduceNotification(notification), { ...options, budgetMs: left }, attempts);
  }
  return attempts.count;
}

async function sendWithRetries(channel: Channel, notification: Notification, options: DeliveryOptions & { budgetMs: number }, attempts: { count: number }): Promise<void> {
  const { budgetMs } = options;
  const started = Date.now();
  await pRetry(
    async () => {
      attempts.count++;
      const remaining = budgetMs - (Date.now() - started);
      await channel.send(notification, AbortSignal.timeout(Math.max(1, Math.min(options.timeoutMs, remaining))));
    },
    {
      retries: options.retries,
      minTimeout: MIN_BACKOFF_MS,
      maxTimeout: MAX_BACKOFF_MS,
      factor: 2,
      randomize: true,
      maxRetryTime: budgetMs,
      shouldRetry: ({ error }) => isRetryable(error),
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        const retry = isRetryable(error) && retriesLeft > 0;
        options.logger.warn('channel attempt failed', { channel: channel.name, attempt: attemptNumber, retry, error: error.message });
        const retryAfterMs = error instanceof DeliveryError ? error.retryAfterMs : undefined;
        if (retry && retryAfterMs !== undefined) {
          const remaining = budgetMs - (Date.now() - started);
          await sleep(Math.max(0, Math.min(retryAfterMs, remaining - options.timeoutMs)));
        }
      },
    },
  );
}

/** A refusal of the content, or a failure to render or encode it (not a `DeliveryError` at all). */
function refusedContent(error: unknown): boolean {
  return error instanceof ContentRefusedError || !(error instanceof DeliveryError);
}

function isRetryable(error: Error): boolean {
  return error instanceof DeliveryError && error.retryable;
}
