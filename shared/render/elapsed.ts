/** Human durations for acknowledgement lines and pages. */

/**
 * A duration between two instants, rounded down to its largest units: `45 s`, `12 min`,
 * `3 h 5 min`, `2 d 4 h`. Negative spans (clock skew) read `0 s`.
 * @param fromMs epoch milliseconds
 * @param toMs epoch milliseconds
 */
export function elapsed(fromMs: number, toMs: number): string {
  const s = Math.max(0, Math.floor((toMs - fromMs) / 1000));
  if (Number.isNaN(s)) return '?';
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}
