/**
 * Alertmanager's alert fingerprint, computed from the labels, for senders that do not send one
 * (Alertmanager before 0.19, some Alertmanager-compatible senders). It must be bit-for-bit the one
 * newer Alertmanagers send, or the dedupe keys of every firing alert change on an upgrade and each
 * is notified again.
 *
 * The algorithm is prometheus/common's `model.LabelSet.Fingerprint()` (`model/signature.go`,
 * `labelSetToFingerprint`): FNV-1a 64 over the label names sorted as Go sorts strings (by UTF-8
 * bytes), each name and each value followed by the separator byte 0xff; printed with Go's `%016x`.
 * The FNV-1a itself is `@sindresorhus/fnv1a`; only the byte layout is ours.
 *
 * @see https://github.com/prometheus/common/blob/main/model/signature.go
 * @see https://github.com/prometheus/alertmanager/blob/main/template/template.go (`Fingerprint: a.Fingerprint().String()`)
 */
import fnv1a from '@sindresorhus/fnv1a';

/** prometheus/common `model.SeparatorByte`: cannot occur in UTF-8, so it separates names and values. */
const SEPARATOR_BYTE = 0xff;

const utf8 = new TextEncoder();

/**
 * The fingerprint Alertmanager gives an alert with these labels.
 *
 * @param labels the alert's label set, names and values exactly as sent (any UTF-8; a lone UTF-16
 *   surrogate is encoded as U+FFFD, as Go's JSON decoder reads it)
 * @returns 16 lowercase hex digits, e.g. `c10780c1bb3d6376`; the empty set gives `cbf29ce484222325`
 */
export function labelSetFingerprint(labels: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(labels).map(([name, value]) => [utf8.encode(name), utf8.encode(value)] as const);
  // Go compares strings byte-wise; JavaScript's `<` compares UTF-16 code units, which orders
  // characters above U+FFFF before U+E000–U+FFFF. Compare the UTF-8 bytes instead.
  pairs.sort(([a], [b]) => Buffer.compare(a, b));
  const bytes = new Uint8Array(pairs.reduce((n, [name, value]) => n + name.length + value.length + 2, 0));
  let at = 0;
  for (const [name, value] of pairs) {
    bytes.set(name, at);
    bytes[at + name.length] = SEPARATOR_BYTE;
    at += name.length + 1;
    bytes.set(value, at);
    bytes[at + value.length] = SEPARATOR_BYTE;
    at += value.length + 1;
  }
  return fnv1a(bytes, { size: 64 }).toString(16).padStart(16, '0');
}
