/**
 * The Prometheus adapter of the {@link Metrics} port (`npm start`): prom-client counters,
 * histograms and gauges in their own registry, plus the Node process metrics, served as
 * `GET /metrics` in the Prometheus text format.
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { COUNTERS, GAUGES, HISTOGRAMS, KNOWN_VALUES, METRIC_PREFIX, type Metrics } from './catalogue.js';

export interface PrometheusMetrics {
  metrics: Metrics;
  /** The exposition: content type and body for `GET /metrics`. */
  scrape(): Promise<{ contentType: string; body: string }>;
  /**
   * Creates the `notifications_total` series of these channel instances at 0, so `increase()` in
   * alert rules sees their first failure (a series born at 1 shows no increase).
   */
  startChannels(channels: string[]): void;
}

/** A fresh registry with every metric of the catalogue and the Node process metrics. */
export function prometheusMetrics(): PrometheusMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const make = <T>(
    defs: Record<string, { help: string; labels: readonly string[] }>,
    create: (name: string, help: string, labelNames: string[], def: never) => T,
  ) =>
    new Map(
      Object.entries(defs).map(([name, def]) => [
        name,
        create(`${METRIC_PREFIX}${name}`, def.help, [...def.labels], def as never),
      ]),
    );
  const counters = make(
    COUNTERS,
    (name, help, labelNames) => new Counter({ name, help, labelNames, registers: [registry] }),
  );
  const histograms = make(
    HISTOGRAMS,
    (name, help, labelNames, def: { buckets: readonly number[] }) =>
      new Histogram({ name, help, labelNames, buckets: [...def.buckets], registers: [registry] }),
  );
  const gauges = make(GAUGES, (name, help, labelNames) => new Gauge({ name, help, labelNames, registers: [registry] }));
  startAtZero(counters, []);
  const metrics: Metrics = {
    inc: (name, labels, value = 1) => counters.get(name)?.inc(labels, value),
    observe: (name, labels, seconds) => histograms.get(name)?.observe(labels, seconds),
    set: (name, labels, value) => gauges.get(name)?.set(labels, value),
    forget: (name, labels) => gauges.get(name)?.remove(labels),
  };
  return {
    metrics,
    scrape: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    startChannels: (channels) => startAtZero(counters, channels),
  };
}

function startAtZero(counters: Map<string, Counter>, channels: string[]): void {
  for (const decision of KNOWN_VALUES.decision) counters.get('dedupe_decisions_total')?.inc({ decision }, 0);
  for (const reason of KNOWN_VALUES.unauthenticated) counters.get('webhook_unauthenticated_total')?.inc({ reason }, 0);
  for (const code of KNOWN_VALUES.webhookCode) counters.get('webhook_requests_total')?.inc({ code }, 0);
  counters.get('webhook_wrong_token_total')?.inc({}, 0);
  for (const reason of KNOWN_VALUES.unsolicited) counters.get('unsolicited_requests_total')?.inc({ reason }, 0);
  for (const reason of KNOWN_VALUES.heartbeatIgnored) counters.get('heartbeats_ignored_total')?.inc({ reason }, 0);
  for (const channel of channels) {
    counters.get('notifications_total')?.inc({ channel, outcome: 'delivered', reason: 'ok' }, 0);
    for (const reason of KNOWN_VALUES.failureReason)
      counters.get('notifications_total')?.inc({ channel, outcome: 'failed', reason }, 0);
  }
}
