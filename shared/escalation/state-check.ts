/**
 * Whether an escalation coming due should still go out: what the sources of truth say of the alert now
 * (`shared/alert-state/`), and whether Alertmanager mutes it. Prometheus (`PROMETHEUS_URL`) is asked
 * first, since it decides whether an alert fires; Alertmanager (`ALERTMANAGER_URL`) is asked once, in one
 * `GET /api/v2/alerts` whose answer says both whether it still lists the alert firing and whether a
 * silence or an inhibit rule mutes it.
 * @see https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml (getAlerts, alertStatus)
 */
import { AlertStatusError, listedAlert, type ListedAlert } from '../alertmanager/alert-status.js';
import { sentByGrafana } from '../alertmanager/grafana.js';
import { listedAsFiring } from '../alert-state/alertmanager.js';
import type { AlertStateSource, Verdict } from '../alert-state/types.js';
import type { Endpoint } from '../core/endpoint.js';
import type { Logger } from '../core/logger.js';
import type { AlertRecord } from '../store/alert-record.js';

/** Budget of the source-of-truth questions of one check, milliseconds (each source has its own time-out within). */
export const STATE_CHECK_TIMEOUT_MS = 5_000;

/** The sources one check asks; either may be unset (not configured). */
export interface StateSources {
  /** Sources of truth asked before Alertmanager (Prometheus's `ALERTS`, `PROMETHEUS_URL`). */
  alertState?: AlertStateSource;
  /** `ALERTMANAGER_URL` and its credentials; `timeoutMs` bounds the one request. */
  alertmanager?: Endpoint & { timeoutMs: number };
}

/** What one check found. */
export interface StateCheck {
  verdict: Verdict;
  /** Set when Alertmanager lists the alert muted: the ids of the silences, the fingerprints of the inhibiting alerts. */
  muted?: { silencedBy: string[]; inhibitedBy: string[] };
}

const NO_SOURCE: Verdict = {
  state: 'unknown',
  source: 'none',
  reason: 'no source of truth configured (PROMETHEUS_URL, ALERTMANAGER_URL)',
};

/**
 * Asks the sources about `record`'s alert: Prometheus first (its `resolved` ends the check: Alertmanager
 * is not asked), then Alertmanager, whose answer settles what Prometheus could not say. Never throws for
 * a source that cannot answer: the verdict is then `unknown` (the first reason kept), and logged.
 * @param nowMs epoch milliseconds, to read Alertmanager's `endsAt`
 */
export async function checkState(
  record: AlertRecord,
  sources: StateSources,
  log: Logger,
  nowMs: number,
): Promise<StateCheck> {
  const first = sources.alertState && (await askSource(record, sources.alertState));
  if (first?.state === 'resolved') return { verdict: first };
  const am = sources.alertmanager && (await askAlertmanager(record, sources.alertmanager, log, nowMs));
  const settled = first?.state !== 'unknown' && first;
  const verdict = settled || (am && (am.verdict.state !== 'unknown' || !first) ? am.verdict : first) || NO_SOURCE;
  if (verdict.state === 'unknown' && verdict !== NO_SOURCE)
    log.warn('escalating without knowing whether the alert still fires', {
      source: verdict.source,
      reason: verdict.reason,
    });
  return { verdict, ...(am?.muted && { muted: am.muted }) };
}

/** What `source` says of the alert; a failure or no answer is `unknown`. */
async function askSource(record: AlertRecord, source: AlertStateSource): Promise<Verdict> {
  const fallback: Verdict = { state: 'unknown', source: 'none', reason: 'no answer' };
  return source
    .statesOf([record.alert], AbortSignal.timeout(STATE_CHECK_TIMEOUT_MS))
    .then((verdicts) => verdicts.get(record.fingerprint) ?? fallback)
    .catch((err: Error): Verdict => ({ ...fallback, reason: err.message }));
}

/** Alertmanager's one answer: listed and not ended is `firing` (muted or not), not listed is `resolved`. */
async function askAlertmanager(
  record: AlertRecord,
  alertmanager: NonNullable<StateSources['alertmanager']>,
  log: Logger,
  nowMs: number,
): Promise<StateCheck> {
  // Grafana's alerts live in Grafana's own Alertmanager: ALERTMANAGER_URL's can say nothing of them.
  if (sentByGrafana(record.alert)) return { verdict: { state: 'unknown', source: 'none', reason: 'sent by Grafana' } };
  let listed: ListedAlert | undefined;
  try {
    listed = await listedAlert(alertmanager, record.alert, alertmanager.timeoutMs);
  } catch (err) {
    if (!(err instanceof AlertStatusError)) throw err;
    log.warn('escalating without silence check', { error: err.message });
    return { verdict: { state: 'unknown', source: 'alertmanager', reason: err.message } };
  }
  if (!listed || !listedAsFiring(listed.endsAt, nowMs))
    return { verdict: { state: 'resolved', source: 'alertmanager' } };
  const { state, silencedBy, inhibitedBy } = listed.status;
  const muted = state === 'suppressed' && (silencedBy.length > 0 || inhibitedBy.length > 0);
  return { verdict: { state: 'firing', source: 'alertmanager' }, ...(muted && { muted: { silencedBy, inhibitedBy } }) };
}
