/**
 * The configured source of truth for candidate re-fires and escalations coming due: Prometheus (`PROMETHEUS_URL`) first, since
 * it decides whether an alert fires; Alertmanager (`ALERTMANAGER_URL`) for the alerts Prometheus
 * cannot speak for; `undefined` when neither is set (every candidate is then announced).
 */
import type { Config } from './config.js';
import { PrometheusClient } from '../prometheus/client.js';
import { alertmanagerAlertState } from '../alert-state/alertmanager.js';
import { prometheusAlertState } from '../alert-state/prometheus.js';
import type { AlertStateSource, Verdict } from '../alert-state/types.js';
import { sentByGrafana } from '../alertmanager/grafana.js';
import { alertmanagerEndpoint, prometheusEndpoint } from './endpoints.js';

export type { AlertStateSource } from '../alert-state/types.js';

type SourceSettings = Pick<
  Config,
  'prometheusUrl' | 'prometheusCredentials' | 'alertmanagerUrl' | 'alertmanagerCredentials' | 'enrichment'
>;

/**
 * The sources `config` names, chained; `undefined` when none.
 * @param now clock, epoch milliseconds
 */
export function createAlertStateSource(
  config: SourceSettings,
  now: () => number = Date.now,
): AlertStateSource | undefined {
  const prometheus = prometheusSource(config, now);
  const alertmanager = alertmanagerEndpoint(config);
  const sources = [
    ...(prometheus ? [prometheus] : []),
    ...(alertmanager ? [alertmanagerAlertState(alertmanager, config.enrichment.timeoutMs, now)] : []),
  ];
  return sources.length ? chain(sources) : undefined;
}

/**
 * Prometheus alone (`PROMETHEUS_URL`), chained (Grafana's alerts `unknown`); `undefined` without it. For
 * the escalation check, which asks Alertmanager itself: once, for whether the alert fires and is muted.
 * @param now clock, epoch milliseconds
 */
export function createPrometheusStateSource(
  config: SourceSettings,
  now: () => number = Date.now,
): AlertStateSource | undefined {
  const prometheus = prometheusSource(config, now);
  return prometheus && chain([prometheus]);
}

function prometheusSource(config: SourceSettings, now: () => number): AlertStateSource | undefined {
  const prometheus = prometheusEndpoint(config);
  const client = prometheus && new PrometheusClient(prometheus, { queryTimeoutMs: config.enrichment.queryTimeoutMs });
  return client && prometheusAlertState(client, now);
}

/**
 * Asks each source in turn about the alerts the previous ones left `unknown`. Alerts Grafana sent are
 * `unknown` without asking: Prometheus's `ALERTS` and `ALERTMANAGER_URL`'s Alertmanager never hold them,
 * and "not listed" there must not read as "resolved".
 */
export function chain(sources: AlertStateSource[]): AlertStateSource {
  return {
    async statesOf(alerts, signal) {
      const verdicts = new Map<string, Verdict>();
      for (const a of alerts.filter(sentByGrafana))
        verdicts.set(a.fingerprint, { state: 'unknown', source: 'none', reason: 'sent by Grafana' });
      let open = alerts.filter((a) => !sentByGrafana(a));
      for (const source of sources) {
        if (open.length === 0) break;
        const answers = await source.statesOf(open, signal);
        for (const alert of open) {
          const v = answers.get(alert.fingerprint);
          if (v && (v.state !== 'unknown' || !verdicts.has(alert.fingerprint))) verdicts.set(alert.fingerprint, v);
        }
        open = open.filter((a) => verdicts.get(a.fingerprint)?.state === 'unknown' || !verdicts.has(a.fingerprint));
      }
      return verdicts;
    },
  };
}
