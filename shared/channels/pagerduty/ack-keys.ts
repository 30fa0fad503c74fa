/**
 * Which PagerDuty alerts an acknowledgement of stored alerts acknowledges: the `dedup_key` each alert's
 * `trigger` went out under. One `acknowledge` per distinct key, never one per alert of a set: a storm's
 * alerts went out as one PagerDuty alert, and PagerDuty counts every event against the integration key's
 * rate limit (about 120 a minute).
 * @see https://developer.pagerduty.com/docs/events-api-v2/overview/#rate-limits
 */
import type { AlertRecord } from '../../store/alert-record.js';
import { alertDedupKey } from './dedup-key.js';

/**
 * The `dedup_key` the alert's `acknowledge` goes under: today the alert's own key of its announcement
 * (`alertDedupKey` of its occurrence and generation), as `render.ts` renders an `acknowledged` notification.
 * Where the record keeps the key its `trigger` was sent under (a storm's `group/<hash>`), that key.
 */
export function pagerDutyAckKey(record: Pick<AlertRecord, 'alert' | 'generation'>): string {
  return alertDedupKey(record.alert, record.generation ?? 0);
}

/**
 * The distinct `dedup_key`s of `records`, each with the first record acknowledged under it (a
 * notification of these records renders one `acknowledge` per key).
 * @returns keys in the records' order
 */
export function pagerDutyAckKeys(records: Pick<AlertRecord, 'alert' | 'generation'>[]): Map<string, AlertRecord> {
  const keys = new Map<string, AlertRecord>();
  for (const record of records) {
    const key = pagerDutyAckKey(record);
    if (!keys.has(key)) keys.set(key, record as AlertRecord);
  }
  return keys;
}
