/**
 * Times as Go's `time.Time.String()` prints them, which is what an Alertmanager template writes for
 * `{{ .StartsAt }}` / `{{ .EndsAt }}` (AMP's documented JSON template does exactly that):
 * `2026-11-30 12:00:00 +0000 UTC`, `2026-11-29 12:42:23.143 +0000 UTC`, and for "no end" Go's zero
 * time `0001-01-01 00:00:00 +0000 UTC`. A time that still carries a monotonic clock reading (an
 * `EndsAt` Alertmanager computed from `time.Now()`) gets a ` m=+3600.000000001` suffix.
 *
 * Parsed by hand because `Date.parse` (V8, Node 20) misreads this layout: the zero time comes back
 * as 2001-01-01 (a firing alert would look ended in 2001), `+0200 CEST` and the `m=` suffix give
 * NaN, and nanoseconds are dropped. We parse the layout
 * exactly and print the RFC 3339 form Alertmanager's webhook sends for the same instant (Go's
 * `time.RFC3339Nano`, trailing zeros trimmed, `Z` for UTC), so an alert from AMP and the same alert
 * from a webhook get the same dedupe key.
 * @see https://pkg.go.dev/time#Time.String
 * @see https://pkg.go.dev/time#pkg-constants (`"2006-01-02 15:04:05.999999999 -0700 MST"`)
 */
import { trimTrailing } from '../core/trim.js';

/** `YYYY-MM-DD hh:mm:ss[.fraction] ±hhmm [ZONE] [m=±seconds]`; ZONE is an abbreviation (`UTC`, `CEST`) or a numeric one (`+0530`). */
const GO_TIME =
  /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))? ([+-])(\d{2})(\d{2})(?: [A-Za-z0-9+-]{1,10})?(?: m=[+-]\d+(?:\.\d+)?)?$/;

/**
 * Converts a Go `time.Time.String()` value to RFC 3339.
 * @example goTimeToRfc3339('2026-11-30 12:00:00 +0000 UTC') // '2026-11-30T12:00:00Z'
 * @example goTimeToRfc3339('0001-01-01 00:00:00 +0000 UTC') // '0001-01-01T00:00:00Z' (Go's zero time: "no end")
 * @example goTimeToRfc3339('2026-11-30 14:00:00.5 +0200 CEST') // '2026-11-30T14:00:00.5+02:00'
 * @returns `undefined` when `text` is not in that layout or names no real date and time
 */
export function goTimeToRfc3339(text: string): string | undefined {
  const m = GO_TIME.exec(text.trim());
  if (!m) return undefined;
  const [, year, month, day, hour, minute, second, fraction, sign, offH, offM] = m as unknown as string[];
  if (
    !validDate(Number(year), Number(month), Number(day)) ||
    Number(hour) > 23 ||
    Number(minute) > 59 ||
    Number(second) > 59 ||
    Number(offM) > 59
  )
    return undefined;
  const frac = fraction ? trimTrailing(fraction, '0') : '';
  const zone = offH === '00' && offM === '00' ? 'Z' : `${sign}${offH}:${offM}`;
  return `${year}-${month}-${day}T${hour}:${minute}:${second}${frac ? `.${frac}` : ''}${zone}`;
}

/**
 * A time field of an AMP message: RFC 3339 (a template that formats it so, like the one in
 * `infra/amp/`) is kept as is, a Go `String()` time is converted.
 * @returns `undefined` when it is neither
 */
export function normalizeTime(text: string): string | undefined {
  if (/^\d{4}-\d{2}-\d{2}T/.test(text) && !Number.isNaN(Date.parse(text))) return text;
  return goTimeToRfc3339(text);
}

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}
