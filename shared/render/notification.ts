/**
 * The notification the channels render and send: one Alertmanager group, holding only the
 * alerts that are new for the receiving channel, each with its enrichment.
 */
import type { WebhookMessage } from '../alertmanager/schema.js';
import type { EnrichedAlert } from '../enrich/types.js';

export interface Notification {
  /** Alertmanager's `groupKey`; identifies the group for display, never for dedupe. */
  groupKey: string;
  receiver: string;
  /** `firing` if any alert in `alerts` is firing, else `resolved`. */
  status: 'firing' | 'resolved';
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  commonAnnotations: Record<string, string>;
  /** Alertmanager's base URL, for silence links. */
  externalURL: string;
  /** Alerts Alertmanager left out of the payload (`max_alerts`). */
  truncatedAlerts: number;
  /** The new alerts, firing first, in the order Alertmanager sent them otherwise. */
  alerts: EnrichedAlert[];
  /**
   * What the message is; absent means `alert`:
   * - `alert`: the group's new alerts (firing or resolved);
   * - `acknowledged`: a short follow-up saying who acknowledged `alerts` (see each alert's `acknowledgement`);
   * - `escalation`: `alerts` are critical and still unacknowledged after the escalation delay.
   */
  kind?: NotificationKind;
  /**
   * Signed link to this service's acknowledgement page for the firing alerts (`PUBLIC_URL/v1/ack/<token>`),
   * when `PUBLIC_URL` and `ACK_SECRET` are set. Opening it (GET) changes nothing; the page's form acknowledges.
   */
  acknowledgeUrl?: string;
  /**
   * `GRAFANA_URL` (Grafana's root or the shipped dashboard's URL), when set: each alert links to the
   * dashboard on its model and instance (`grafanaUrl` in `./grafana.ts`).
   */
  grafanaUrl?: string;
  /**
   * The group key each alert was announced under, by `fingerprint`, where it is not {@link groupKey}:
   * Alertmanager's grouping changed since (a reload with another `group_by`), or a follow-up names alerts
   * of several groups. Threaded channels follow up in the message that announced the alert
   * (`shared/channels/threads.ts`); PagerDuty finds the storm the alert was part of. Unset: every alert
   * was announced under {@link groupKey}, or is new.
   */
  threadKeys?: Record<string, string>;
  /**
   * Firing alerts that fired again soon after an earlier firing of the same alert (flapping), by
   * `fingerprint`. Channels mark them instead of presenting them as a new page.
   */
  flapping?: Record<string, Flapping>;
  /**
   * Alerts of a later generation, by `fingerprint`: announced resolved, then firing again with the
   * same `startsAt` (generation 1, 2, …), or the resolve of such a re-fire. Channels say "firing
   * again" for the firing ones; SNS FIFO deduplication ids tell generations apart.
   */
  generations?: Record<string, number>;
  /**
   * Who a route of the routing file @-mentions for these alerts on this channel (`mention: [...]` of the
   * routes that matched, `shared/channels/mentions.ts`); channels add their instance's own. Unset: none.
   */
  mentions?: string[];
  /**
   * This is the reduced rendering sent after the platform refused the full one (`reduceNotification`):
   * channels leave out what may have caused the refusal beyond the alert text (their @-mentions).
   */
  reduced?: boolean;
}

/** How an alert flaps: it fired `count` (≥ 2) times, each within the flap window of the previous, since `sinceMs`. */
export interface Flapping {
  count: number;
  /** `startsAt` of the first firing of this run, epoch milliseconds. */
  sinceMs: number;
}

/** See {@link Notification.kind}. */
export type NotificationKind = 'alert' | 'acknowledged' | 'escalation';

/**
 * Builds the notification for a set of alerts of one webhook message.
 * @param message the validated webhook payload
 * @param alerts the subset of its alerts (already enriched) to notify about; must not be empty
 */
export function buildNotification(message: WebhookMessage, alerts: EnrichedAlert[]): Notification {
  const firing = alerts.filter((a) => a.status === 'firing');
  const resolved = alerts.filter((a) => a.status === 'resolved');
  return {
    groupKey: message.groupKey,
    receiver: message.receiver,
    status: firing.length > 0 ? 'firing' : 'resolved',
    groupLabels: message.groupLabels,
    commonLabels: message.commonLabels,
    commonAnnotations: message.commonAnnotations,
    externalURL: message.externalURL,
    truncatedAlerts: message.truncatedAlerts,
    alerts: [...firing, ...resolved],
  };
}
