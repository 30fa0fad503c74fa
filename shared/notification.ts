/**
 * The notification the channels render and send: one Alertmanager group, holding only the
 * alerts that are new for the receiving channel, each with its enrichment.
 */
import type { WebhookMessage } from './alertmanager/schema.js';
import type { EnrichedAlert } from './enrich/types.js';

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
}

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
