/**
 * Which PagerDuty alerts an acknowledgement of stored alerts acknowledges: the `dedup_key` each alert's
 * `trigger` went out under. One `acknowledge` per distinct key, never one per alert of a set: a storm's
 * alerts went out as one PagerDuty alert (`group/<hash>`, `storms.ts`), and PagerDuty counts every event
 * against the integration key's rate limit (about 120 a minute).
 * @see https://developer.pagerduty.com/docs/events-api-v2/overview/#rate-limits
 */
import type { AlertRecord } from '../../store/alert-record.js';
import { type PagerDutyStormStore, type StoredStorm, stormMemberId } from '../../store/pagerduty-storms.js';
import { alertDedupKey, groupDedupKey } from './dedup-key.js';

/** What the key of a stored alert's `acknowledge` is computed from. */
export type AckKeyRecord = Pick<AlertRecord, 'alert' | 'generation' | 'groupKey'>;

/** Where a channel instance's storms are looked up (`storms.ts`). */
export interface StormLookup {
  store: PagerDutyStormStore;
  /** The channel instance's name (storms are kept per instance). */
  channel: string;
  /** Epoch milliseconds. */
  now(): number;
}

/**
 * The `dedup_key` the alert's own `acknowledge` goes under (`alertDedupKey` of its occurrence and
 * generation), as `render.ts` renders an `acknowledged` notification of an alert no storm knows.
 */
export function pagerDutyAckKey(record: Pick<AlertRecord, 'alert' | 'generation'>): string {
  return alertDedupKey(record.alert, record.generation ?? 0);
}

/**
 * The `dedup_key` of the one `acknowledge` an `acknowledged` follow-up sends for each record, as
 * `planPagerDutyEvents` plans it: a member of a storm (its member id in the storm recorded under the group
 * key the record was announced under) goes under the storm's key, or under none once the storm resolved
 * (`undefined`: no event); any other alert under its own key ({@link pagerDutyAckKey}). Without `storms`,
 * every alert under its own key. One storm read per distinct group key.
 * @returns one entry per record, in order
 * @throws the store's error
 */
export async function pagerDutyAckKeys(
  records: readonly AckKeyRecord[],
  storms?: StormLookup,
): Promise<(string | undefined)[]> {
  if (!storms) return records.map(pagerDutyAckKey);
  const read = new Map<string, Promise<StoredStorm | undefined>>();
  const stormOf = (key: string) => {
    if (!read.has(key)) read.set(key, storms.store.get(storms.channel, key, storms.now()));
    return read.get(key)!;
  };
  return Promise.all(
    records.map(async (record) => {
      const own = pagerDutyAckKey(record);
      const key = groupDedupKey(record.groupKey);
      const storm = await stormOf(key);
      if (!storm?.members.has(stormMemberId(own))) return own;
      return storm.closedAt ? undefined : key;
    }),
  );
}
