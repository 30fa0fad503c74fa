/**
 * PagerDuty `dedup_key`s: which PagerDuty alert an event applies to. They are computed from what
 * every deliverer sees the same way (the alert's `fingerprint` and `startsAt`, the generation the
 * shared dedupe table assigned), never from the process, the request or the `groupKey`'s routing
 * tree, so restarts, Alertmanager retries and HA peers all name the same PagerDuty alert.
 *
 * One key per *announcement* of a firing: the occurrence (`fingerprint` + `startsAt`) and its
 * generation (`shared/store/occurrence.ts`: ≥ 1 when the same occurrence fires again after its
 * resolve was announced). PagerDuty opens a new alert for a `trigger` whose key's alert is resolved
 * anyway; the generation matters when that resolve never reached PagerDuty, or the old alert was
 * acknowledged: a re-fire under the old key would land on the acknowledged alert, and
 * "while an incident is acknowledged, it won't generate any additional notifications, even if it
 * receives new trigger events". A re-fire must page. The resolve and the acknowledgement of
 * generation g carry g too, so they close exactly the alert its trigger opened.
 * @see https://developer.pagerduty.com/docs/events-api-v2/trigger-events/#alert-de-duplication
 */
import { createHash } from 'node:crypto';
import { PAGERDUTY_MAX_DEDUP_KEY_CHARS } from './wire.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** RFC 3339 with milliseconds (`…23.143000000Z` and `…23.143Z` are one `startsAt`); unparsable input as is. */
function normalisedTime(rfc3339: string): string {
  const ms = Date.parse(rfc3339);
  return Number.isNaN(ms) ? rfc3339 : new Date(ms).toISOString();
}

/**
 * The key of one alert's announcement, e.g. `c10780c1bb3d6376/2026-11-29T12:43:11.143Z` (generation 0)
 * or `c10780c1bb3d6376/2026-11-29T12:43:11.143Z/2`. A key over {@link PAGERDUTY_MAX_DEDUP_KEY_CHARS}
 * (a sender's odd fingerprint) is carried as `sha256:<64 hex>` of that text, equally stable.
 * @param alert `fingerprint` and `startsAt` as Alertmanager sent them
 * @param generation the event's generation; absent or 0 for the first firing of the occurrence
 */
export function alertDedupKey(alert: { fingerprint: string; startsAt: string }, generation = 0): string {
  const key = [alert.fingerprint, normalisedTime(alert.startsAt), ...(generation > 0 ? [String(generation)] : [])].join(
    '/',
  );
  return key.length <= PAGERDUTY_MAX_DEDUP_KEY_CHARS ? key : `sha256:${sha256(key)}`;
}

/**
 * The key of a storm's single PagerDuty alert (`render.ts`): `group/<sha256 of the groupKey>`.
 * Alertmanager's own PagerDuty integration keys every event by the group key's hash the same way.
 * @see https://github.com/prometheus/alertmanager/blob/main/notify/pagerduty/pagerduty.go
 */
export function groupDedupKey(groupKey: string): string {
  return `group/${sha256(groupKey)}`;
}
