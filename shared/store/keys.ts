/**
 * The one unbounded part of the table's partition keys: an alert's `fingerprint`. Alertmanager makes it
 * 16 hex digits, but another sender may send any string, and DynamoDB refuses a partition key over
 * 2,048 bytes (UTF-8): the claim of such an alert failed, and with it its whole group, on every retry.
 *
 * A fingerprint is used as is when it is at most {@link MAX_KEY_PART_BYTES} and well-formed Unicode
 * (every key of an ordinary alert is unchanged, so deployed tables keep their meaning); otherwise as
 * `sha256:<64 hex>` of its UTF-8 bytes: stable across processes and versions, and a digest is its own
 * key part, so a link or the audit route may name an alert by either form.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-partition-sort-keys
 */
import { createHash } from 'node:crypto';

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
  if (Buffer.byteLength(fingerprint, 'utf8') <= MAX_KEY_PART_BYTES && !LONE_SURROGATE.test(fingerprint)) return fingerprint;
  return `sha256:${createHash('sha256').update(fingerprint, 'utf8').digest('hex')}`;
}
