/**
 * One state per alert in a webhook message. Alertmanager keys its alerts by `fingerprint` and never
 * sends one twice in a notification, but another sender, a proxy that merges bodies or a crafted post
 * can. Claimed twice, the copies of one alert race for its dedupe record: a firing and a resolved copy
 * of one occurrence left one of them "in flight" (a 503, and the firing sent before its resolve). Like
 * Alertmanager's own store, the newest state of each alert is kept: the later `startsAt` (a new
 * occurrence), and of one occurrence the resolve; otherwise the later copy in payload order.
 * @see https://github.com/prometheus/alertmanager/blob/main/types/types.go (Alert.Merge)
 */
import type { Alert } from './schema.js';

/** Whether `b`, seen after `a` in the payload, is the newer state of the same alert. */
function newer(a: Alert, b: Alert): boolean {
  const [sa, sb] = [Date.parse(a.startsAt), Date.parse(b.startsAt)];
  if (sa !== sb && !Number.isNaN(sa) && !Number.isNaN(sb)) return sb > sa;
  if (a.status !== b.status) return b.status === 'resolved';
  return true;
}

/**
 * The alerts with one entry per `fingerprint`, the newest state of each at its first position.
 * @returns `alerts` itself when no fingerprint repeats; `repeated`: the fingerprints that did (each once)
 */
export function onePerFingerprint(alerts: readonly Alert[]): { alerts: readonly Alert[]; repeated: string[] } {
  const kept = new Map<string, Alert>();
  const repeated = new Set<string>();
  for (const alert of alerts) {
    const known = kept.get(alert.fingerprint);
    if (known === undefined) kept.set(alert.fingerprint, alert);
    else {
      repeated.add(alert.fingerprint);
      if (newer(known, alert)) kept.set(alert.fingerprint, alert);
    }
  }
  return repeated.size === 0 ? { alerts, repeated: [] } : { alerts: [...kept.values()], repeated: [...repeated] };
}
