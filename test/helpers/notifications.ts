/**
 * Notifications for channel tests: the real Alertmanager webhook fixtures, validated with the
 * webhook schema, with hand-built enrichments keyed by alert fingerprint.
 */
import { webhookSchema, type WebhookMessage } from '../../shared/alertmanager/schema.js';
import type { EnrichedAlert, Enrichment } from '../../shared/enrich/types.js';
import { buildNotification, type Notification } from '../../shared/render/notification.js';

import { fixtureText, type FixtureName } from './fixtures.js';

export type { FixtureName };

/** A fixture validated with the webhook schema, as the pipeline sees it. */
export function loadFixture(name: FixtureName): WebhookMessage {
  return webhookSchema.parse(JSON.parse(fixtureText(name)));
}

export const KV_CACHE_ENRICHMENT: Enrichment = {
  status: 'enriched',
  kind: 'kv_cache',
  signals: [
    {
      name: 'kv_cache_usage_ratio',
      label: 'KV cache usage',
      value: 0.973,
      unit: 'ratio',
      query: 'max(vllm:gpu_cache_usage_perc)',
    },
    {
      name: 'num_requests_waiting',
      label: 'Waiting requests',
      value: 12,
      unit: 'count',
      query: 'sum(vllm:num_requests_waiting)',
    },
    {
      name: 'preemptions_per_second',
      label: 'Preemptions',
      value: 1.2,
      unit: 'per_second',
      query: 'sum(rate(vllm:num_preemptions_total[5m]))',
    },
    { name: 'ttft_p95_seconds', label: 'TTFT p95', value: 0.85, unit: 'seconds', query: 'histogram_quantile(0.95, …)' },
  ],
};

export const MEMORY_ENRICHMENT: Enrichment = {
  status: 'enriched',
  kind: 'gpu_memory',
  signals: [
    { name: 'fb_used_mib', label: 'GPU memory used', value: 61440, unit: 'mebibytes', query: 'DCGM_FI_DEV_FB_USED' },
  ],
  trend: {
    growthMiBPerHour: 1200,
    rSquared: 0.98,
    usedMiB: 61440,
    capacityMiB: 72960,
    hoursToFull: 9.6,
    windowSeconds: 21600,
    points: 360,
  },
};

export const QUEUE_ENRICHMENT: Enrichment = {
  status: 'enriched',
  kind: 'queue',
  signals: [
    {
      name: 'num_requests_waiting',
      label: 'Waiting requests',
      value: 85,
      unit: 'count',
      query: 'sum(vllm:num_requests_waiting)',
    },
    {
      name: 'ttft_p95_seconds',
      label: 'TTFT p95',
      value: Number.NaN,
      unit: 'seconds',
      query: 'histogram_quantile(0.95, …)',
    },
    {
      name: 'num_requests_running',
      label: 'Running requests',
      value: null,
      unit: 'count',
      query: 'sum(vllm:num_requests_running)',
    },
  ],
};

export const UNAVAILABLE: Enrichment = {
  status: 'unavailable',
  kind: 'queue',
  reason: 'Prometheus query timed out after 2000 ms',
};

/** Enrichment per fingerprint across the fixtures. */
const ENRICHMENTS: Record<string, Enrichment> = {
  '936e109b8c52c001': KV_CACHE_ENRICHMENT,
  ea8519d6e086bfe0: MEMORY_ENRICHMENT,
  c10780c1bb3d6376: QUEUE_ENRICHMENT,
  b70e989fd7d03295: UNAVAILABLE,
};

/** The fixture's notification with all its alerts, enriched. */
export function fixtureNotification(name: FixtureName): Notification {
  const message = loadFixture(name);
  const alerts: EnrichedAlert[] = message.alerts.map((a) => ({
    ...a,
    enrichment: ENRICHMENTS[a.fingerprint] ?? UNAVAILABLE,
  }));
  return buildNotification(message, alerts);
}

/** A firing notification of `count` queue alerts (one per model `model-1`…), for limit tests. */
export function manyAlertsNotification(count: number, truncatedAlerts = 0): Notification {
  const message = loadFixture('firing-queue-backlog-two-models');
  const template = message.alerts[0]!;
  const alerts: EnrichedAlert[] = Array.from({ length: count }, (_, i) => ({
    ...template,
    labels: { ...template.labels, model_name: `model-${i + 1}` },
    annotations: { ...template.annotations, summary: `model-${i + 1}: requests waiting` },
    fingerprint: `f${i}`,
    enrichment: QUEUE_ENRICHMENT,
  }));
  return buildNotification({ ...message, truncatedAlerts }, alerts);
}

/** The shipped rules' alert names with their severity and kind (infra/prometheus/vllm-rules.yml). */
export const SHIPPED_ALERTS = [
  { alertname: 'VLLMQueueBacklog', severity: 'warning', kind: 'queue' },
  { alertname: 'VLLMTimeToFirstTokenHigh', severity: 'warning', kind: 'latency' },
  { alertname: 'VLLMKVCacheNearlyFull', severity: 'critical', kind: 'kv_cache' },
  { alertname: 'VLLMErrorRateHigh', severity: 'critical', kind: 'error_rate' },
  { alertname: 'GPUMemoryLeak', severity: 'warning', kind: 'gpu_memory' },
] as const;

/**
 * A storm: `count` firing alerts cycling through the shipped rules and 12 models (`model-0`…),
 * each with its own instance and fingerprint, not enriched; `truncatedAlerts` as Alertmanager's
 * `max_alerts` would report.
 */
export function stormNotification(count: number, truncatedAlerts = 0): Notification {
  const message = loadFixture('firing-queue-backlog-two-models');
  const template = message.alerts[0]!;
  const alerts: EnrichedAlert[] = Array.from({ length: count }, (_, i) => {
    const rule = SHIPPED_ALERTS[i % SHIPPED_ALERTS.length]!;
    const model = `model-${i % 12}`;
    return {
      ...template,
      labels: {
        alertname: rule.alertname,
        severity: rule.severity,
        kind: rule.kind,
        cluster: 'prod-eu',
        model_name: model,
        instance: `10.0.${Math.floor(i / 250)}.${i % 250}:8000`,
      },
      annotations: { summary: `${model}: ${rule.alertname} on replica ${i}`, description: 'storm' },
      fingerprint: `storm${i.toString(16).padStart(12, '0')}`,
      enrichment: { status: 'unavailable', kind: rule.kind, reason: 'not enriched' },
    };
  });
  return buildNotification(
    { ...message, truncatedAlerts, groupLabels: { cluster: 'prod-eu' }, commonLabels: { cluster: 'prod-eu' } },
    alerts,
  );
}
