/**
 * Wires the catch-up of missed resolves (`shared/pipeline/catch-up.ts`) for `npm start`: the firing
 * records of the table, the sources of truth the configuration names, and the app's pipeline.
 *
 * Prometheus (`PROMETHEUS_URL`) is asked about every alert: its `ALERTS` series say "resolved" only for
 * an alert it saw fire. Alertmanager (`ALERTMANAGER_URL`) lists only what is active, so "not listed" is
 * "resolved" only for an alert that came through that Alertmanager (the record's `externalURL` is
 * `ALERTMANAGER_URL`); for any other (a Grafana-managed alert, another Alertmanager) it cannot tell.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { alertmanagerAlertState } from '../alert-state/alertmanager.js';
import { prometheusAlertState } from '../alert-state/prometheus.js';
import type { Verdict } from '../alert-state/types.js';
import { HEARTBEAT_MISSING_ALERTNAME } from '../heartbeat/alert.js';
import { catchUpResolves, type CatchUpReport } from '../pipeline/catch-up.js';
import { processGroup, type PipelineDeps } from '../pipeline/index.js';
import { PrometheusClient } from '../prometheus/client.js';
import type { AlertRecord } from '../store/alert-record.js';
import { DynamoDbFiringRecords } from '../store/firing-records.js';
import { DEFAULT_TABLE_NAME } from '../store/table.js';
import type { Config } from './config.js';
import { alertmanagerEndpoint, prometheusEndpoint } from './endpoints.js';

/**
 * @returns the catch-up to run once at start (it logs `resolves caught up`)
 */
export function createResolveCatchUp(
  config: Config,
  pipeline: PipelineDeps,
  clients: { dynamodb: DynamoDBClient },
): () => Promise<CatchUpReport | undefined> {
  return () =>
    catchUpResolves({
      records: new DynamoDbFiringRecords(clients.dynamodb, config.tableName ?? DEFAULT_TABLE_NAME),
      statesOf: catchUpStates(config),
      deliver: (message) => processGroup(message, pipeline),
      // Raised and resolved by the pipeline's own heartbeat check; no source knows it.
      skip: (alert) => alert.labels.alertname === HEARTBEAT_MISSING_ALERTNAME,
      timeoutMs: config.enrichment.timeoutMs,
      logger: pipeline.logger,
      now: pipeline.now,
    });
}

/** Prometheus for every record, then Alertmanager for what it left open and that came through it. */
function catchUpStates(
  config: Pick<
    Config,
    'prometheusUrl' | 'prometheusCredentials' | 'alertmanagerUrl' | 'alertmanagerCredentials' | 'enrichment'
  >,
): ((records: AlertRecord[], signal: AbortSignal) => Promise<Map<string, Verdict>>) | undefined {
  const { prometheusUrl, alertmanagerUrl } = config;
  if (!prometheusUrl && !alertmanagerUrl) return undefined;
  const promEndpoint = prometheusEndpoint(config);
  const amEndpoint = alertmanagerEndpoint(config);
  const prometheus =
    promEndpoint &&
    prometheusAlertState(new PrometheusClient(promEndpoint, { queryTimeoutMs: config.enrichment.queryTimeoutMs }));
  const alertmanager = amEndpoint && alertmanagerAlertState(amEndpoint, config.enrichment.timeoutMs);
  return async (records, signal) => {
    const verdicts = prometheus
      ? await prometheus.statesOf(
          records.map((r) => r.alert),
          signal,
        )
      : new Map();
    const open = records.filter(
      (r) =>
        (verdicts.get(r.fingerprint)?.state ?? 'unknown') === 'unknown' &&
        withoutTrailingSlashes(r.externalURL) === alertmanagerUrl,
    );
    if (alertmanager && open.length)
      for (const [fingerprint, verdict] of await alertmanager.statesOf(
        open.map((r) => r.alert),
        signal,
      ))
        verdicts.set(fingerprint, verdict);
    return verdicts;
  };
}

/** `http://am:9093/` → `http://am:9093`, as `ALERTMANAGER_URL` is stored. */
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === '/') end -= 1;
  return url.slice(0, end);
}
