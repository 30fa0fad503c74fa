/**
 * Notifications built from stored alert records rather than a webhook: the "acknowledged by X"
 * follow-up and the escalation message. Channels render them like any other notification.
 */
import type { EnrichedAlert } from '../enrich/types.js';
import type { Notification, NotificationKind } from '../render/notification.js';
import type { AlertRecord } from '../store/alert-record.js';

/** Labels every record shares (what `commonLabels` would be for a group of them). */
function commonLabels(records: AlertRecord[]): Record<string, string> {
  const [first, ...rest] = records;
  if (!first) return {};
  return Object.fromEntries(Object.entries(first.alert.labels).filter(([k, v]) => rest.every((r) => r.alert.labels[k] === v)));
}

/** The record's alert as channels receive it, with the enrichment of its first message and its acknowledgement. */
export function alertFromRecord(record: AlertRecord): EnrichedAlert {
  return {
    ...record.alert,
    enrichment: record.enrichment ?? { status: 'unavailable', kind: 'unknown', reason: 'not recorded' },
    ...(record.acknowledgement && { acknowledgement: record.acknowledgement }),
  };
}

/**
 * A notification of `kind` about `records` (one group's alerts; must not be empty).
 * @param acknowledgeUrl the signed link to add (escalations carry one so the target can acknowledge)
 */
export function noticeFromRecords(kind: Exclude<NotificationKind, 'alert'>, records: AlertRecord[], acknowledgeUrl?: string): Notification {
  const first = records[0]!;
  const common = commonLabels(records);
  return {
    kind,
    groupKey: first.groupKey,
    receiver: '',
    status: records.some((r) => r.status === 'firing') ? 'firing' : 'resolved',
    groupLabels: common.alertname ? { alertname: common.alertname } : {},
    commonLabels: common,
    commonAnnotations: {},
    externalURL: first.externalURL,
    truncatedAlerts: 0,
    alerts: records.map(alertFromRecord),
    ...(acknowledgeUrl && { acknowledgeUrl }),
  };
}
