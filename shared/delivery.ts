/**
 * Delivers one notification to one channel with bounded retries (p-retry: exponential backoff
 * with jitter). Only `DeliveryError`s marked retryable are retried; a `Retry-After` from the
 * platform (Slack's 429) is honoured, capped so the whole attempt stays inside the budget.
 */
import pRetry from 'p-retry';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeliveryError, type Channel } from './channels/types.js';
import type { Logger } from './logger.js';
import type { Notification } from './notification.js';

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
 * @returns the number of attempts made, once the channel accepted the notification
 * @throws the last error (a `DeliveryError`, or whatever the channel threw) when every attempt failed
 */
export async function deliver(channel: Channel, notification: Notification, options: DeliveryOptions): Promise<number> {
  const budgetMs = options.budgetMs ?? DEFAULT_DELIVERY_BUDGET_MS;
  const started = Date.now();
  let attempts = 0;
  await pRetry(
    async () => {
      attempts++;
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
  return attempts;
}

function isRetryable(error: Error): boolean {
  return error instanceof DeliveryError && error.retryable;
}
