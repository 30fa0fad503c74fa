/**
 * One Slack thread per alert group and Slack-app channel: the top-level message, where it is, and the
 * group's state that the message shows. The state moves only forward within a thread (firing →
 * acknowledged/escalated → resolved); a group firing again after its resolve starts a new thread.
 * Pure functions plus the port of the store (its one adapter is `shared/store/slack-threads.ts`).
 */
import type { Notification } from '../../notification.js';
import type { SlackContent } from './web-api.js';

/** The stored thread of one group in one channel. Times are RFC 3339. */
export interface SlackThread {
  /** Channel id (`C…`) as Slack answered `chat.postMessage`. */
  channel: string;
  /** The top-level message's `ts`: its id, and the `thread_ts` of every reply. */
  ts: string;
  /** The message as first posted, without its state line (re-rendered with the state on every update). */
  content: SlackContent;
  /** Fingerprints of the group's alerts this thread announced that are still firing. */
  firing: string[];
  acknowledgedBy?: string;
  acknowledgedAt?: string;
  escalatedAt?: string;
  /** Set when no alert of the thread is firing any more: the thread is closed. */
  resolvedAt?: string;
}

/** Port of the thread store; every write is a single-item conditional write. */
export interface SlackThreadStore {
  /** The thread of `groupKey` in channel instance `channelName`; `undefined` when none or expired. */
  get(channelName: string, groupKey: string, nowMs: number): Promise<SlackThread | undefined>;
  /**
   * Stores a new thread unless an open one (not resolved) exists: of concurrent posters one wins.
   * @returns false when an open thread was already stored
   */
  create(channelName: string, groupKey: string, thread: SlackThread, nowMs: number): Promise<boolean>;
  /** Stores the thread's new state; only if the stored thread is still the message `thread.ts`. */
  save(channelName: string, groupKey: string, thread: SlackThread, nowMs: number): Promise<void>;
}

/** A thread's first state, for the message just posted. */
export function newThread(posted: { channel: string; ts: string }, content: SlackContent, notification: Notification, nowMs: number): SlackThread {
  return advance({ channel: posted.channel, ts: posted.ts, content, firing: [] }, notification, nowMs);
}

/**
 * The thread's state after `notification`: firing alerts join it, resolved ones leave it (the last one
 * closes it with its `endsAt`), an acknowledgement names who, an escalation when. Idempotent: applying
 * the same notification twice gives the same state (a retried delivery may apply it again).
 */
export function advance(thread: SlackThread, notification: Notification, nowMs: number): SlackThread {
  const at = new Date(nowMs).toISOString();
  if (notification.kind === 'acknowledged') {
    const ack = notification.alerts.find((a) => a.acknowledgement)?.acknowledgement;
    return thread.acknowledgedBy ? thread : { ...thread, acknowledgedBy: ack?.by ?? 'someone', acknowledgedAt: ack?.at ?? at };
  }
  if (notification.kind === 'escalation') return { ...thread, escalatedAt: thread.escalatedAt ?? at };
  const firing = new Set(thread.firing);
  for (const alert of notification.alerts) {
    if (alert.status === 'firing') firing.add(alert.fingerprint);
    else firing.delete(alert.fingerprint);
  }
  const next: SlackThread = { ...thread, firing: [...firing] };
  if (firing.size > 0) return next;
  return { ...next, resolvedAt: thread.resolvedAt ?? lastEnd(notification) ?? at };
}

/** The latest `endsAt` of the resolved alerts, RFC 3339; `undefined` when none parses. */
function lastEnd(notification: Notification): string | undefined {
  const ends = notification.alerts.filter((a) => a.status === 'resolved').map((a) => Date.parse(a.endsAt)).filter((t) => Number.isFinite(t) && t > 0);
  return ends.length ? new Date(Math.max(...ends)).toISOString() : undefined;
}

/** Whether `notification` belongs in the stored thread, or must start a new one (none, or closed and firing again). */
export function startsNewThread(thread: SlackThread | undefined, notification: Notification): boolean {
  if (!thread) return true;
  const firing = notification.alerts.some((a) => a.status === 'firing');
  return Boolean(thread.resolvedAt) && firing && (notification.kind ?? 'alert') === 'alert';
}
