/**
 * The configured source of truth for candidate re-fires: Prometheus (`PROMETHEUS_URL`) first, since
 * it decides whether an alert fires; Alertmanager (`ALERTMANAGER_URL`) for the alerts Prometheus
 * cannot speak for; `undefined` when neither is set (every candidate is then announced).
 */
import type { Config } from './config.js';
import { PrometheusClient } from '../prometheus/client.js';
import { alertmanagerAlertState } from '../alert-state/alertmanager.js';
import { prometheusAlertState } from '../alert-state/prometheus.js';
import type { AlertStateSource, Verdict } from '../alert-state/types.js';

export type { AlertStateSource } from '../alert-state/types.js';

/** The sources `config` names, chained; `undefined` when none. */
export function createAlertStateSource(config: Pick<Config, 'prometheusUrl' | 'alertmanagerUrl' | 'enrichment'>): AlertStateSource | undefined {
  const sources: AlertStateSource[] = [];
  if (config.prometheusUrl) sources.push(prometheusAlertState(new PrometheusClient(config.prometheusUrl, { queryTimeoutMs: config.enrichment.queryTimeoutMs })));
  if (config.alertmanagerUrl) sources.push(alertmanagerAlertState(config.alertmanagerUrl, config.enrichment.timeoutMs));
  return sources.length ? chain(sources) : undefined;
}

/** Asks each source in turn about the alerts the previous ones left `unknown`. */
export function chain(sources: AlertStateSource[]): AlertStateSource {
  return {
    async statesOf(alerts, signal) {
      const verdicts = new Map<string, Verdict>();
      let open = alerts;
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
