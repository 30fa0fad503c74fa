/**
 * Which thread each alert of a notification belongs to, for the channels that keep one message per
 * alert group (the Slack app's thread, the Feishu app's card). A thread is found by the group key it
 * was opened under; an alert's follow-ups (its resolve, acknowledgement, escalation) belong to the
 * thread that announced it, whatever group key they arrive under now: Alertmanager regroups every
 * alert when it is reloaded with another `group_by`, and the pipeline then names, per alert, the group
 * key its record was announced under (`Notification.threadKeys`).
 *
 * An alert goes to that earlier thread only while the thread is open and lists it among its firing
 * alerts, so it is really the message that announced it; otherwise (the thread expired, was closed, or
 * never stored) it joins the notification's own group, as before.
 */
import type { Notification } from '../render/notification.js';
import type { ThreadProgress } from './threads.js';

/** One part of a notification and the stored thread it goes to (`undefined`: none yet). */
export interface ThreadPart<T> {
  /** The part's alerts, its `groupKey` the thread's. */
  notification: Notification;
  thread: T | undefined;
}

/**
 * Splits `notification` by the thread each alert belongs to.
 * @param find the stored thread of a group key in this channel instance (`undefined`: none or expired)
 * @returns the parts for earlier threads first, then the part of the notification's own group key (absent
 *   when every alert went to an earlier thread); one part, the notification itself, when no alert names
 *   another group key
 * @throws what `find` throws
 */
export async function partsByThread<T extends ThreadProgress>(
  notification: Notification,
  find: (groupKey: string) => Promise<T | undefined>,
): Promise<ThreadPart<T>[]> {
  const keys = notification.threadKeys;
  if (
    !keys ||
    notification.alerts.every((a) => (keys[a.fingerprint] ?? notification.groupKey) === notification.groupKey)
  )
    return [{ notification, thread: await find(notification.groupKey) }];
  const byKey = new Map<string, Notification['alerts']>();
  for (const alert of notification.alerts) {
    const key = keys[alert.fingerprint] ?? notification.groupKey;
    byKey.set(key, [...(byKey.get(key) ?? []), alert]);
  }
  const own = byKey.get(notification.groupKey) ?? [];
  const parts: ThreadPart<T>[] = [];
  for (const [key, alerts] of byKey) {
    if (key === notification.groupKey) continue;
    const thread = await find(key);
    const listed = new Set(thread && !thread.resolvedAt ? thread.firing : []);
    const mine = alerts.filter((a) => listed.has(a.fingerprint));
    own.push(...alerts.filter((a) => !listed.has(a.fingerprint)));
    if (mine.length) parts.push({ notification: partOf(notification, key, mine), thread });
  }
  if (own.length === 0) return parts;
  const ownPart = partOf(notification, notification.groupKey, own);
  return [
    ...parts,
    {
      notification: { ...ownPart, truncatedAlerts: notification.truncatedAlerts },
      thread: await find(notification.groupKey),
    },
  ];
}

/** The notification for `alerts` in the thread of `groupKey`: its status and shared labels recomputed. */
function partOf(n: Notification, groupKey: string, alerts: Notification['alerts']): Notification {
  const [first, ...rest] = alerts;
  const shared = (labels: Record<string, string>) =>
    Object.fromEntries(Object.entries(labels).filter(([k, v]) => rest.every((a) => a.labels[k] === v)));
  const commonLabels = shared(first!.labels);
  const { threadKeys: _keys, ...base } = n;
  return {
    ...base,
    groupKey,
    status: alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved',
    alerts: [...alerts.filter((a) => a.status === 'firing'), ...alerts.filter((a) => a.status !== 'firing')],
    commonLabels,
    groupLabels: Object.fromEntries(Object.entries(n.groupLabels).filter(([k, v]) => commonLabels[k] === v)),
    truncatedAlerts: 0,
  };
}
