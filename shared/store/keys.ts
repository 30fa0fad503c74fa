/**
 * The partition keys (`pk`) of the one table, by item kind:
 * - `event#<fingerprint>#<startsAt>#firing`: an occurrence's head (`head-item.ts`); `…#resolved`: the
 *   separate resolve item written before generations existed (read, never written);
 * - `alert#<fingerprint>`: the alert record; `history#<fingerprint>#<seq, 10 digits>`: one history event
 *   (`alert-record-items.ts`);
 * - `set#<id>` (`alert-set.ts`), `slack-thread#…` (`slack-threads.ts`), `heartbeat…` (`heartbeat.ts`).
 *
 * The one unbounded part of a key is an alert's `fingerprint`. Alertmanager makes it 16 hex digits, but
 * another sender may send any string, and DynamoDB refuses a partition key over 2,048 bytes (UTF-8): the
 * claim of such an alert failed, and with it its whole group, on every retry. A fingerprint is used as is
 * when it is at most {@link MAX_KEY_PART_BYTES} and well-formed Unicode (every key of an ordinary alert is
 * unchanged, so deployed tables keep their meaning); otherwise as `sha256:<64 hex>` of its UTF-8 bytes:
 * stable across processes and versions, and a digest is its own key part, so a link or the audit route
 * may name an alert by either form.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-partition-sort-keys
 */
import { createHash } from 'node:crypto';
import type { Alert } from '../alertmanager/schema.js';
import { BoundedCache } from '../core/bounded-cache.js';

/** Longest fingerprint kept as is, UTF-8 bytes: with the longest prefix and suffix, a key stays far under 2,048. */
export const MAX_KEY_PART_BYTES = 256;
/** DynamoDB's partition key limit, UTF-8 bytes (dynalite checks the same number, in characters). @public */
export const MAX_PARTITION_KEY_BYTES = 2048;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The fingerprint as it appears in keys: itself when short and well-formed, else its digest.
 * Idempotent: `keyPart(keyPart(f)) === keyPart(f)`.
 * @example keyPart('c10780c1bb3d6376') // 'c10780c1bb3d6376'
 */
export function keyPart(fingerprint: string): string {
  if (Buffer.byteLength(fingerprint, 'utf8') <= MAX_KEY_PART_BYTES && !LONE_SURROGATE.test(fingerprint))
    return fingerprint;
  return `sha256:${createHash('sha256').update(fingerprint, 'utf8').digest('hex')}`;
}

/**
 * The dedupe key of an alert notification event: `event#<fingerprint>#<startsAt>#<status>`.
 * `startsAt` is normalised to millisecond ISO form, so `…23.143Z` and `…23.143000000Z` match; an
 * over-long fingerprint is carried as its digest. This is generation 0; {@link generationKey} names later ones.
 */
export function eventKey(alert: Pick<Alert, 'fingerprint' | 'startsAt' | 'status'>): string {
  return `event#${keyPart(alert.fingerprint)}#${normalisedStartsAt(alert.startsAt)}#${alert.status}`;
}

/**
 * The key of the event in generation `generation`: {@link eventKey} for 0 (the key deployed tables
 * hold), `…#<generation>` from the first re-fire on.
 */
export function generationKey(
  alert: Pick<Alert, 'fingerprint' | 'startsAt' | 'status'>,
  generation: number | undefined,
): string {
  return generation ? `${eventKey(alert)}#${generation}` : eventKey(alert);
}

/** The key of an occurrence's head: its first firing event's. */
export function headKey(alert: Pick<Alert, 'fingerprint' | 'startsAt'>): string {
  return eventKey({ ...alert, status: 'firing' });
}

/** The key of a resolve item written before generations existed. */
export function legacyResolvedKey(alert: Pick<Alert, 'fingerprint' | 'startsAt'>): string {
  return eventKey({ ...alert, status: 'resolved' });
}

/** The key prefix of every alert record. */
export const RECORD_SPACE = 'alert#';
/** The key of an alert's record. */
export const recordKey = (fingerprint: string) => `${RECORD_SPACE}${keyPart(fingerprint)}`;
/** The key of history event number `seq` of an alert. */
export const historyKey = (fingerprint: string, seq: number) =>
  `history#${keyPart(fingerprint)}#${String(seq).padStart(10, '0')}`;

/**
 * `startsAt` texts already normalised: a group's store calls name each alert's event key many times, and
 * parsing and formatting the date (~0.8 µs) was ~1.5 % of a duplicate post's CPU. 10,000 entries is a
 * storm's worth (~1 MB at most).
 */
const NORMALISED_STARTS = new BoundedCache<string, string>('normalised startsAt', 10_000);
/**
 * Longest `startsAt` text remembered: RFC 3339 with nanoseconds and an offset is 35 characters. A longer one
 * still parses (`Date.parse` skips parenthesised text), but remembering it would keep up to a whole body
 * per entry; it is normalised on every call instead.
 */
const MAX_REMEMBERED_LENGTH = 40;

/** RFC 3339 with milliseconds; a text that is not a date is kept as is. */
export function normaliseTime(rfc3339: string): string {
  const ms = Date.parse(rfc3339);
  return Number.isNaN(ms) ? rfc3339 : new Date(ms).toISOString();
}

function normalisedStartsAt(startsAt: string): string {
  return startsAt.length > MAX_REMEMBERED_LENGTH
    ? normaliseTime(startsAt)
    : NORMALISED_STARTS.get(startsAt, normaliseTime);
}
