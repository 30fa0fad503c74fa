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
  return Object.fromEntries(
    Object.entries(first.alert.labels).filter(([k, v]) => rest.every((r) => r.alert.labels[k] === v)),
  );
}

/** The record's alert as channels receive it, with the enrichment of its first message and its acknowledgement. */
export function alertFromRecord(record: AlertRecord): EnrichedAlert {
  return {
    ...record.alert,
    enrichment: record.enrichment ?? {
      status: 'unavailable',
      kind: 'unknown',
      reason: 'not recorded',
      reasonZh: '没有记录',
    },
    ...(record.acknowledgement && { acknowledgement: record.acknowledgement }),
  };
}

/** The records' generations ≥ 1, as the pipeline marks them (`Notification.generations`); `{}` when none. */
function generationsOf(records: AlertRecord[]): Pick<Notification, 'generations'> {
  const later = records.filter((r) => (r.generation ?? 0) > 0).map((r) => [r.fingerprint, r.generation!] as const);
  return later.length ? { generations: Object.fromEntries(later) } : {};
}

/**
 * A notification of `kind` about `records` (must not be empty), under the group key the first was announced
 * under; records announced under other group keys name theirs (`threadKeys`), so each follow-up reaches the
 * message that announced its alert.
 * @param acknowledgeUrl the signed link to add (escalations carry one so the target can acknowledge)
 */
export function noticeFromRecords(
  kind: Exclude<NotificationKind, 'alert'>,
  records: AlertRecord[],
  acknowledgeUrl?: string,
): Notification {
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
    ...generationsOf(records),
    ...threadKeysOf(records),
  };
}

/** The group key of each record announced under another group than the first's (`Notification.threadKeys`). */
function threadKeysOf(records: AlertRecord[]): Pick<Notification, 'threadKeys'> {
  const first = records[0]!.groupKey;
  const other = records.filter((r) => r.groupKey !== first).map((r) => [r.fingerprint, r.groupKey] as const);
  return other.length ? { threadKeys: Object.fromEntries(other) } : {};
}
