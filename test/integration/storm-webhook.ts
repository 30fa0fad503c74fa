/**
 * An Alertmanager webhook body (payload version 4) for an alert storm: `count` firing alerts cycling
 * through the shipped rules (infra/prometheus/vllm-rules.yml) over 12 models and many replicas,
 * with `truncatedAlerts` as a `max_alerts` limit would report. Used by the storm test and bench.
 */
import type { WebhookMessage } from '../../shared/alertmanager/schema.js';
import { GO_ZERO_TIME } from '../../shared/alertmanager/schema.js';
import { SHIPPED_ALERTS } from '../helpers/notifications.js';

/**
 * @param startsAt RFC 3339 start of every alert (one storm: they fire together)
 */
export function stormWebhook(
  count: number,
  truncatedAlerts = 0,
  startsAt = '2026-11-29T12:42:23.143Z',
): WebhookMessage {
  const alerts = Array.from({ length: count }, (_, i) => {
    const rule = SHIPPED_ALERTS[i % SHIPPED_ALERTS.length]!;
    const model = `model-${i % 12}`;
    const instance = `10.0.${Math.floor(i / 250)}.${i % 250}:8000`;
    return {
      status: 'firing' as const,
      labels: {
        alertname: rule.alertname,
        severity: rule.severity,
        kind: rule.kind,
        cluster: 'prod-eu',
        job: 'vllm',
        model_name: model,
        instance,
      },
      annotations: {
        summary: `${model}: ${rule.alertname} on ${instance}`,
        description: 'Part of a storm: many replicas crossed the threshold at once.',
        runbook_url: `https://runbooks.example.com/vllm/${rule.kind}`,
      },
      startsAt,
      endsAt: GO_ZERO_TIME,
      generatorURL: 'http://prometheus.example.com:9090/graph?g0.expr=up&g0.tab=1',
      fingerprint: `s${i.toString(16).padStart(15, '0')}`,
    };
  });
  return {
    version: '4',
    groupKey: '{}:{cluster="prod-eu"}',
    truncatedAlerts,
    status: 'firing',
    receiver: 'llm-alert-pipeline',
    groupLabels: { cluster: 'prod-eu' },
    commonLabels: { cluster: 'prod-eu', job: 'vllm' },
    commonAnnotations: {},
    externalURL: 'http://alertmanager.example.com:9093',
    alerts,
  };
}
