/** The enrichers' queries and value picking, with an in-memory context in place of Prometheus. */
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../../shared/alertmanager/schema.js';
import { EnrichmentUnavailable, type EnrichContext } from '../../../shared/enrich/enricher.js';
import { ENRICHERS } from '../../../shared/enrich/enrichers.js';
import { DCGM_SCOPE_LABELS, scopeOf, VLLM_SCOPE_LABELS } from '../../../shared/enrich/scope.js';
import type { Sample } from '../../../shared/prometheus/client.js';
import { ruleAlert } from '../../fixtures/prometheus/alerts.js';

/** A context answering instant queries from `answers` (no series for anything else) and recording them. */
function fakeContext(answers: Record<string, Sample[]> = {}) {
  const asked: string[] = [];
  const ctx: EnrichContext = {
    instant: async (expr) => {
      asked.push(expr);
      return answers[expr] ?? [];
    },
    range: async (expr) => {
      asked.push(`range ${expr}`);
      return [];
    },
    now: new Date('2026-11-29T12:45:00Z'),
    memoryTrendWindowHours: 6,
  };
  return { ctx, asked };
}

const sample = (metric: Record<string, string>, value: number): Sample => ({ metric, time: 1795956300, value });

const routingLabels = { alertname: 'A', severity: 'critical', kind: 'queue', team: 'inference' };

describe('scope', () => {
  it('uses only series-identifying labels, never alertname, severity, kind or routing labels', () => {
    const alert = { labels: { ...routingLabels, model_name: 'm', engine: '0', pod: 'p', namespace: 'ns', instance: 'i', job: 'j' } };
    expect(scopeOf(alert, VLLM_SCOPE_LABELS)).toEqual(['model_name="m"', 'instance="i"', 'job="j"', 'namespace="ns"', 'pod="p"', 'engine="0"']);
    expect(scopeOf({ labels: { ...routingLabels, UUID: 'GPU-1', gpu: '0', Hostname: 'h', modelName: 'NVIDIA H100' } }, DCGM_SCOPE_LABELS))
      .toEqual(['gpu="0"', 'Hostname="h"', 'UUID="GPU-1"']);
  });

  it('escapes label values inside the queries sent', async () => {
    const { ctx, asked } = fakeContext();
    const alert = ruleAlert({ ...routingLabels, model_name: 'org/"model"\\v2\n' }, 'x > 1', 'f');
    await ENRICHERS.queue.enrich(alert, ctx);
    expect(asked).toEqual([
      'sum(vllm:num_requests_waiting{model_name="org/\\"model\\"\\\\v2\\n"})',
      'sum(vllm:num_requests_running{model_name="org/\\"model\\"\\\\v2\\n"})',
    ]);
  });

  it('queries the whole fleet when the alert has no identifying label', async () => {
    const { ctx, asked } = fakeContext();
    await ENRICHERS.queue.enrich(ruleAlert(routingLabels, 'x > 1', 'f'), ctx);
    expect(asked).toEqual(['sum(vllm:num_requests_waiting)', 'sum(vllm:num_requests_running)']);
  });

  it('scopes HTTP counters by target labels only (they carry no model_name)', async () => {
    const { ctx, asked } = fakeContext();
    await ENRICHERS.error_rate.enrich(ruleAlert({ ...routingLabels, model_name: 'm', job: 'vllm' }, 'x > 1', 'f'), ctx);
    expect(asked[0]).toBe('(sum(rate(http_requests_total{status="5xx",job="vllm"}[5m])) or vector(0)) / sum(rate(http_requests_total{job="vllm"}[5m]))');
    expect(asked[1]).toContain('vllm:request_success_total{finished_reason="abort",model_name="m",job="vllm"}');
  });
});

describe('readSignal values', () => {
  it('no series is null, NaN stays NaN', async () => {
    const query = 'sum(vllm:num_requests_waiting)';
    const { ctx } = fakeContext({ [query]: [sample({}, Number.NaN)] });
    const { signals } = await ENRICHERS.queue.enrich(ruleAlert({}, 'x > 1', 'f'), ctx);
    expect(signals.map((s) => s.value)).toEqual([Number.NaN, null]);
  });
});

describe('gpu_memory', () => {
  it('gives no trend when the range query returns no series', async () => {
    const { ctx, asked } = fakeContext({ 'sum(DCGM_FI_DEV_FB_USED{gpu="1"})': [sample({}, 100)] });
    const result = await ENRICHERS.gpu_memory.enrich(ruleAlert({ gpu: '1' }, 'x > 1', 'f'), ctx);
    expect(result.trend).toBeUndefined();
    expect(result.signals.map((s) => s.value)).toEqual([100, null]);
    expect(asked).toContain('range sum(DCGM_FI_DEV_FB_USED{gpu="1"})');
  });
});

describe('unknown', () => {
  const alert: Alert = ruleAlert({ alertname: 'Busy', severity: 'info', model_name: 'b', instance: 'i' }, 'vllm:num_requests_running > 10', 'f');

  it('re-evaluates the expression without its threshold and picks the series of the alert, ignoring __name__', async () => {
    const { ctx, asked } = fakeContext({
      'vllm:num_requests_running': [
        sample({ __name__: 'vllm:num_requests_running', model_name: 'a', instance: 'i' }, 1),
        sample({ __name__: 'vllm:num_requests_running', model_name: 'b', instance: 'i' }, 2),
      ],
    });
    const { signals } = await ENRICHERS.unknown.enrich(alert, ctx);
    expect(asked).toEqual(['vllm:num_requests_running']);
    expect(signals).toEqual([{ name: 'expression_value', label: 'Rule expression', value: 2, unit: 'none', query: 'vllm:num_requests_running' }]);
  });

  it('is null when no series has the alert labels', async () => {
    const { ctx } = fakeContext({ 'vllm:num_requests_running': [sample({ model_name: 'c', instance: 'i' }, 3)] });
    expect((await ENRICHERS.unknown.enrich(alert, ctx)).signals[0]?.value).toBeNull();
  });

  it('is unavailable when the alert carries no expression', async () => {
    const { ctx, asked } = fakeContext();
    await expect(ENRICHERS.unknown.enrich({ ...alert, generatorURL: '' }, ctx)).rejects.toBeInstanceOf(EnrichmentUnavailable);
    expect(asked).toEqual([]);
  });
});

describe('ENRICHERS', () => {
  it('has one enricher per kind, each under its own kind', () => {
    for (const [kind, enricher] of Object.entries(ENRICHERS)) expect(enricher.kind).toBe(kind);
    expect(Object.keys(ENRICHERS).sort()).toEqual(['error_rate', 'gpu_memory', 'kv_cache', 'latency', 'queue', 'unknown']);
  });
});
