/**
 * A version-4 webhook body around `alerts`, as Alertmanager posts a firing group (receiver `r`,
 * externalURL `http://am`, no common labels): for tests that build their own alerts.
 */
import type { Alert, WebhookMessage } from '../../shared/alertmanager/schema.js';

/** @param groupKey the group's key (tests use a new one per group, e.g. `{}:{g="7"}`) */
export function webhookGroup(alerts: Alert[], groupKey: string): WebhookMessage {
  return {
    version: '4',
    groupKey,
    truncatedAlerts: 0,
    status: 'firing',
    receiver: 'r',
    groupLabels: {},
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://am',
    alerts,
  };
}
