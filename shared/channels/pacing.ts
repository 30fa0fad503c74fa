/**
 * Pacing a group robot to its platform's rate limit. DingTalk's custom robot takes at most 20 messages a
 * minute and stops a robot that sends more for 10 minutes (errcode 130101 / 410100); WeCom's group robot
 * takes 20 a minute (errcode 45009). A short wait before a send is better than a ban: a send that would
 * be the 21st within 60 s waits for a slot; one that would wait longer than `maxWaitMs` is not sent and
 * fails retryable with the wait as `retryAfterMs`, so the pipeline's retry (or the sender's, through a
 * 5xx) comes back when the robot may send again.
 *
 * The window is this process's: under `npm start` that is every send; in Lambda each warm instance paces
 * its own sends (instances that run at once can together go past the limit, which the platform then
 * answers with its rate-limit code, retried the same way).
 * @see https://open.dingtalk.com/document/orgapp/custom-robot-access (消息发送频率限制)
 * @see https://developer.work.weixin.qq.com/document/path/91770 (消息发送频率限制)
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import { DeliveryError } from './channel.js';

/** The window a robot's limit counts in, milliseconds. */
export const RATE_WINDOW_MS = 60_000;

export interface PacerOptions {
  /** Messages allowed per {@link RATE_WINDOW_MS}. */
  perWindow: number;
  /** Longest wait for a slot before a send gives up (retryable), milliseconds. */
  maxWaitMs: number;
  /** Epoch milliseconds. */
  now?: () => number;
  /** Waits `ms` milliseconds, or rejects when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Paces one robot's sends (one per channel instance). */
export interface Pacer {
  /**
   * Takes a slot for one send, waiting for one when the window is full.
   * @param name the channel instance, prefixed to the error
   * @throws DeliveryError retryable, `rate_limited`, with `retryAfterMs`, when the wait would pass
   *   `maxWaitMs` or `signal` aborts while waiting (nothing was sent)
   */
  take(name: string, signal: AbortSignal): Promise<void>;
}

/** A sliding-window pacer: the send times of the last {@link RATE_WINDOW_MS}. */
export function createPacer(options: PacerOptions): Pacer {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms, signal) => sleepFor(ms, undefined, { signal }));
  const sent: number[] = [];
  const refuse = (name: string, waitMs: number) =>
    new DeliveryError(
      `${name}: paced to ${options.perWindow} messages a minute: the next slot is in ${Math.ceil(waitMs / 1000)} s`,
      { retryable: true, retryAfterMs: waitMs, reason: 'rate_limited' },
    );
  return {
    async take(name, signal) {
      for (;;) {
        const at = now();
        while (sent.length && sent[0]! <= at - RATE_WINDOW_MS) sent.shift();
        if (sent.length < options.perWindow) {
          sent.push(at);
          return;
        }
        const waitMs = sent[0]! + RATE_WINDOW_MS - at;
        if (waitMs > options.maxWaitMs) throw refuse(name, waitMs);
        try {
          await sleep(waitMs, signal);
        } catch {
          throw refuse(name, Math.max(0, sent[0]! + RATE_WINDOW_MS - now()));
        }
      }
    },
  };
}
