/**
 * One Slack thread per alert group and Slack-app channel: the top-level message, where it is, and the
 * group's state that the message shows. The state moves only forward within a thread (firing →
 * acknowledged/escalated → resolved); a group firing again after its resolve starts a new thread.
 * Pure functions over the thread the store keeps (`shared/store/slack-threads.ts`: the type, the port, the adapter).
 */
import type { Notification } from '../../render/notification.js';
import type { SlackThread, StoredSlackContent } from '../../store/slack-threads.js';

export type { SlackThread, SlackThreadStore } from '../../store/slack-threads.js';

/** A thread's first state, for the message just posted. */
export function newThread(posted: { channel: string; ts: string }, content: StoredSlackContent, notification: Notification, nowMs: number): SlackThread {
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
  const ends = notification.alerts
    .filter((a) => a.status === 'resolved')
    .map((a) => Date.parse(a.endsAt))
    .filter((t) => Number.isFinite(t) && t > 0);
  return ends.length ? new Date(Math.max(...ends)).toISOString() : undefined;
}

/** Whether `notification` belongs in the stored thread, or must start a new one (none, or closed and firing again). */
export function startsNewThread(thread: SlackThread | undefined, notification: Notification): boolean {
  if (!thread) return true;
  const firing = notification.alerts.some((a) => a.status === 'firing');
  return Boolean(thread.resolvedAt) && firing && (notification.kind ?? 'alert') === 'alert';
}
