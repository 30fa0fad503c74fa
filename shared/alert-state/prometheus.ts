/**
 * Prometheus as the source of truth: the `ALERTS` series its rule evaluation writes.
 * `ALERTS{alertname="X", alertstate="firing", <the alert's labels>}` exists while the alert fires;
 * on resolve Prometheus writes a staleness marker, so an instant query sees it gone at once.
 *
 * Two instant queries per `alertname`: the series now, and `max_over_time` of the same selector since
 * the earliest `startsAt`, which tells "resolved" (this Prometheus saw it fire) from "unknown" (it never
 * evaluated this alert: another Prometheus feeds Alertmanager, or relabelling changed the labels).
 * Series are matched to the alert by labels: every label of the series (but `__name__` and
 * `alertstate`) must equal the alert's. The alert may carry more: Prometheus adds its
 * `external_labels` only to the alerts it sends, never to `ALERTS`.
 * @see https://prometheus.io/docs/prometheus/latest/configuration/alerting_rules/#inspecting-alerts-during-runtime
 */
import type { Alert } from '../alertmanager/schema.js';
import type { PrometheusClient, Sample } from '../prometheus/client.js';
import { quoteString, selector } from '../prometheus/promql.js';
import { allUnknown, byAlertname, type AlertStateSource, type Verdict } from './types.js';

/** How far back "did it fire here" looks at least and at most, seconds. */
const MIN_LOOKBACK_SECONDS = 600;
const MAX_LOOKBACK_SECONDS = 7 * 24 * 3600;

/** @param now clock, epoch milliseconds */
export function prometheusAlertState(
  client: Pick<PrometheusClient, 'instantQuery'>,
  now: () => number = Date.now,
): AlertStateSource {
  return {
    async statesOf(alerts, signal) {
      const verdicts = new Map<string, Verdict>();
      await Promise.all(
        [...byAlertname(alerts)].map(async ([name, group]) => {
          for (const [fp, v] of await statesOfName(name, group, { client, nowMs: now(), signal })) verdicts.set(fp, v);
        }),
      );
      return verdicts;
    },
  };
}

/** What one question about the alerts of one `alertname` needs: whom to ask, the time now (epoch ms), its budget. */
interface Question {
  client: Pick<PrometheusClient, 'instantQuery'>;
  nowMs: number;
  signal: AbortSignal;
}

/** The verdicts of the alerts of `name`, from two instant queries of their `ALERTS` series. */
async function statesOfName(
  name: string,
  alerts: Alert[],
  { client, nowMs, signal }: Question,
): Promise<Map<string, Verdict>> {
  if (!name) return allUnknown(alerts, 'prometheus', 'alert has no alertname');
  const series = selector('ALERTS', [`alertname=${quoteString(name)}`, 'alertstate="firing"']);
  const earliest = Math.min(...alerts.map((a) => Date.parse(a.startsAt)).filter(Number.isFinite), nowMs);
  const lookback = Math.min(
    MAX_LOOKBACK_SECONDS,
    Math.max(MIN_LOOKBACK_SECONDS, Math.ceil((nowMs - earliest) / 1000) + MIN_LOOKBACK_SECONDS),
  );
  try {
    const [current, seen] = await Promise.all([
      client.instantQuery(series, { signal }),
      client.instantQuery(`max_over_time(${series}[${lookback}s])`, { signal }),
    ]);
    return new Map(alerts.map((a) => [a.fingerprint, verdictOf(a, current.result, seen.result)]));
  } catch (err) {
    return allUnknown(alerts, 'prometheus', `Prometheus query failed: ${(err as Error).message}`);
  }
}

function verdictOf(alert: Alert, current: Sample[], seen: Sample[]): Verdict {
  if (current.some((s) => matches(s.metric, alert.labels))) return { state: 'firing', source: 'prometheus' };
  if (seen.some((s) => matches(s.metric, alert.labels))) return { state: 'resolved', source: 'prometheus' };
  return { state: 'unknown', source: 'prometheus', reason: 'no ALERTS series of this alert since it started' };
}

/** Whether a series is the alert's: each of its labels (but `__name__`, `alertstate`) equals the alert's. */
export function matches(series: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(series).every(([k, v]) => k === '__name__' || k === 'alertstate' || labels[k] === v);
}
