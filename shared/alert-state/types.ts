/**
 * The source of truth for whether an alert fires now, asked only for the rare candidate re-fires
 * (an alert sent firing again after it was announced resolved, with the same `startsAt`; see
 * `shared/store/occurrence.ts`). Never on the common path: a group of new or resent alerts makes
 * no query.
 */
import type { Alert } from '../alertmanager/schema.js';

/**
 * What a source says of one alert now:
 * - `firing`: it fires (Prometheus has its `ALERTS{alertstate="firing"}` series now; Alertmanager lists it as active);
 * - `resolved`: it does not, and the source knows the alert (Prometheus saw it fire since its `startsAt`);
 * - `unknown`: the source cannot say (unreachable, an error, or an alert it never evaluated).
 */
export interface Verdict {
  state: 'firing' | 'resolved' | 'unknown';
  /** Who said so. */
  source: 'prometheus' | 'alertmanager' | 'none';
  /** Why `unknown`, for the log (never a secret). */
  reason?: string;
}

/** Port: one adapter per source (`prometheus.ts`, `alertmanager.ts`), chained by `index.ts`. */
export interface AlertStateSource {
  /**
   * @param alerts the candidate re-fires of one webhook message
   * @param signal the caller's budget
   * @returns a verdict per `fingerprint` for every alert; never throws (failures are `unknown`)
   */
  statesOf(alerts: Alert[], signal: AbortSignal): Promise<Map<string, Verdict>>;
}

/** Alerts by `alertname` (an alert without one is `''`): one query per name, not per alert. */
export function byAlertname(alerts: Alert[]): Map<string, Alert[]> {
  const groups = new Map<string, Alert[]>();
  for (const alert of alerts) {
    const name = alert.labels.alertname ?? '';
    groups.set(name, [...(groups.get(name) ?? []), alert]);
  }
  return groups;
}

/** `unknown` for every alert, with the reason. */
export function allUnknown(alerts: Alert[], source: Verdict['source'], reason: string): Map<string, Verdict> {
  return new Map(alerts.map((a) => [a.fingerprint, { state: 'unknown', source, reason }]));
}
