/** The enrichers' queries and value picking, with an in-memory context in place of Prometheus. */
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../../shared/alertmanager/schema.js';
import { EnrichmentUnavailable } from '../../../shared/enrich/enricher.js';
import { ENRICHERS } from '../../../shared/enrich/kinds/index.js';
import { DCGM_SCOPE_LABELS, scopeOf, VLLM_SCOPE_LABELS } from '../../../shared/enrich/signals/scope.js';
import { ruleAlert } from '../../fixtures/prometheus/alerts.js';
import { fakeContext, NOW, sample } from './fake-context.js';

const routingLabels = { alertname: 'A', severity: 'critical', kind: 'queue', team: 'inference' };
const at = (alert: Alert) => Date.parse(alert.startsAt) / 1000;

describe('scope', () => {
  it('uses only series-identifying labels, never alertname, severity, kind or routing labels', () => {
    const alert = {
      labels: { ...routingLabels, model_name: 'm', engine: '0', pod: 'p', namespace: 'ns', instance: 'i', job: 'j' },
    };
    expect(scopeOf(alert, VLLM_SCOPE_LABELS)).toEqual([
      'model_name="m"',
      'instance="i"',
      'job="j"',
      'namespace="ns"',
      'pod="p"',
      'engine="0"',
    ]);
    expect(
      scopeOf(
        { labels: { ...routingLabels, UUID: 'GPU-1', gpu: '0', Hostname: 'h', modelName: 'NVIDIA H100' } },
        DCGM_SCOPE_LABELS,
      ),
    ).toEqual(['gpu="0"', 'Hostname="h"', 'UUID="GPU-1"']);
  });

  it('escapes label values inside the queries sent, and aggregates by the identifying labels', async () => {
    const alert = ruleAlert({ ...routingLabels, model_name: 'org/"model"\\v2\n' }, 'x > 1', 'f');
    const { ctx, queries } = fakeContext([alert]);
    await ENRICHERS.queue.enrich(alert, ctx);
    expect(queries()[0]).toBe(
      'sum by (model_name) (vllm:num_requests_waiting{model_name="org/\\"model\\"\\\\v2\\n",model_name!=""})',
    );
  });

  it('queries the whole fleet when the alert has no identifying label', async () => {
    const alert = ruleAlert(routingLabels, 'x > 1', 'f');
    const { ctx, queries } = fakeContext([alert]);
    await ENRICHERS.queue.enrich(alert, ctx);
    // The engines' series only: production-stack's router re-exports the queue gauges with no model_name.
    expect(queries().slice(0, 2)).toEqual([
      'sum(vllm:num_requests_waiting{model_name!=""})',
      'sum(vllm:num_requests_waiting_by_reason{model_name!="",reason="capacity"})',
    ]);
  });

  it('scopes HTTP counters by target labels only (they carry no model_name)', async () => {
    const alert = ruleAlert({ ...routingLabels, model_name: 'm', job: 'vllm' }, 'x > 1', 'f');
    const { ctx, queries } = fakeContext([alert]);
    await ENRICHERS.error_rate.enrich(alert, ctx);
    expect(queries()[0]).toBe(
      '(sum by (job) (rate(http_requests_total{status="5xx",job="vllm"}[5m])) or 0 * sum by (job) (rate(http_requests_total{job="vllm"}[5m]))) / sum by (job) (rate(http_requests_total{job="vllm"}[5m]))',
    );
    expect(queries()[1]).toContain(
      'rate(vllm:request_failure_total{code!~"4..",model_name="m",job="vllm",model_name!=""}[5m])',
    );
  });
});

describe('metric names of both vLLM generations', () => {
  const alert = ruleAlert({ alertname: 'A', model_name: 'm', engine: '0' }, 'x > 1', 'f');

  it('reads KV-cache usage from the V1 gauge or the V0 one, keeping the engine label', async () => {
    const { ctx, queries } = fakeContext([alert]);
    await ENRICHERS.kv_cache.enrich(alert, ctx);
    expect(queries()[0]).toBe(
      'max by (model_name, engine) (vllm:kv_cache_usage_perc{model_name="m",engine="0",model_name!=""} or vllm:gpu_cache_usage_perc{model_name="m",engine="0",model_name!=""})',
    );
  });

  it('reads inter-token latency from the V1 histogram or the V0 one, and its top bucket from either', async () => {
    const { ctx, queries } = fakeContext([alert]);
    await ENRICHERS.latency.enrich(alert, ctx);
    const tag = (e: string) =>
      `label_replace(label_replace(${e}, "engine_generation", "v0", "engine", ""), "engine_generation", "v1", "engine", ".+")`;
    expect(queries()).toContain(
      `histogram_quantile(0.95, sum by (le, engine_generation, model_name, engine) (${tag('rate(vllm:inter_token_latency_seconds_bucket{model_name="m",engine="0",model_name!=""}[5m]) or rate(vllm:time_per_output_token_seconds_bucket{model_name="m",engine="0",model_name!=""}[5m])')}))`,
    );
    expect(queries()).toContain(
      `count by (le, engine_generation, model_name, engine) (${tag('vllm:inter_token_latency_seconds_bucket{model_name="m",engine="0"} or vllm:time_per_output_token_seconds_bucket{model_name="m",engine="0"}')})`,
    );
  });
});

describe('signal values', () => {
  it('no series is null (no data, never 0), NaN stays NaN, and the value when the alert fired is read at startsAt', async () => {
    const alert = ruleAlert({}, 'x > 1', 'f');
    const waiting = 'sum(vllm:num_requests_waiting{model_name!=""})';
    const { ctx, asked } = fakeContext([alert], {
      instant: {
        [`${waiting} @${NOW.getTime() / 1000}`]: [sample({}, Number.NaN)],
        [`${waiting} @${at(alert)}`]: [sample({}, 7)],
      },
    });
    const { signals } = await ENRICHERS.queue.enrich(alert, ctx);
    expect(signals.map((s) => [s.name, s.value, s.atStart])).toEqual([
      ['requests_waiting', Number.NaN, 7],
      ['requests_waiting_capacity', null, null],
      ['requests_deferred', null, null],
      ['requests_running', null, null],
      ['generation_tokens_per_second', null, null],
      ['tpot_mean_seconds', null, null],
      ['kv_cache_usage_ratio', null, null],
      ['preemptions_per_second', null, null],
      ['gpu_utilization_ratio', null, null],
    ]);
    expect(asked).toContain(`instant @${at(alert)} ${waiting}`);
  });
});

describe('gpu_memory', () => {
  const alert = ruleAlert({ gpu: '1' }, 'x > 1', 'f');

  it('gives no trend when the range query returns no series', async () => {
    const { ctx, asked } = fakeContext([alert], {
      instant: {
        'sum by (gpu) (max by (gpu, Hostname, hostname, instance, UUID, GPU_I_ID) (DCGM_FI_DEV_FB_USED{gpu="1"}))': [
          sample({ gpu: '1' }, 100),
        ],
      },
    });
    const result = await ENRICHERS.gpu_memory.enrich(alert, ctx);
    expect(result.trend).toBeUndefined();
    expect(result.signals.map((s) => [s.name, s.value])).toEqual([
      ['gpu_memory_used_mib', 100],
      ['gpu_memory_total_mib', null],
    ]);
    expect(asked).toContain(
      'range 21600 sum by (gpu) (max by (gpu, Hostname, hostname, instance, UUID, GPU_I_ID) (DCGM_FI_DEV_FB_USED{gpu="1"}))',
    );
  });

  it('reads a configured series in bytes as MiB, scoped by target labels, and names it in the trend', async () => {
    const rss = ruleAlert({ instance: 'i', job: 'vllm', gpu: '1' }, 'x > 1', 'r');
    const expr = 'sum by (instance, job) (process_resident_memory_bytes{instance="i",job="vllm"}) / 1048576';
    const points = Array.from({ length: 61 }, (_, i) => ({ time: 1_795_935_000 + i * 60, value: 2048 + i }));
    const { ctx, queries } = fakeContext(
      [rss],
      { range: { [expr]: [{ metric: { instance: 'i', job: 'vllm' }, points }] } },
      { series: 'process_resident_memory_bytes', unit: 'bytes' },
    );
    const result = await ENRICHERS.gpu_memory.enrich(rss, ctx);
    expect(queries()).toEqual([expr]);
    expect(result.signals.map((s) => [s.name, s.label, s.unit])).toEqual([
      ['memory_used_mib', 'Memory used (process_resident_memory_bytes)', 'mebibytes'],
    ]);
    expect(result.trend).toMatchObject({ series: 'process_resident_memory_bytes', capacityMiB: null, growing: true });
    expect(result.trend!.growthMiBPerHour).toBeCloseTo(60, 9);
  });
});

describe('unknown', () => {
  const alert: Alert = ruleAlert(
    { alertname: 'Busy', severity: 'info', model_name: 'b', instance: 'i' },
    'vllm:num_requests_running > 10',
    'f',
  );

  const SCOPED = 'vllm:num_requests_running{model_name="b",instance="i"}';

  it('re-evaluates the expression without its threshold, scoped to the alert, now and at startsAt, and picks the series of the alert', async () => {
    const { ctx, queries } = fakeContext([alert], {
      instant: {
        [SCOPED]: [
          sample({ __name__: 'vllm:num_requests_running', model_name: 'a', instance: 'i' }, 1),
          sample({ __name__: 'vllm:num_requests_running', model_name: 'b', instance: 'i' }, 2),
        ],
      },
    });
    const { signals } = await ENRICHERS.unknown.enrich(alert, ctx);
    expect(queries()).toEqual([SCOPED]);
    expect(signals).toEqual([
      {
        name: 'expression_value',
        label: 'Rule expression',
        value: 2,
        atStart: 2,
        unit: 'none',
        query: SCOPED,
      },
    ]);
  });

  it('scopes a rule shared by several alerts to the labels they share, so they still share its queries', async () => {
    const other = ruleAlert({ ...alert.labels, model_name: 'c' }, 'vllm:num_requests_running > 10', 'g');
    const { ctx, queries } = fakeContext([alert, other]);
    await ENRICHERS.unknown.enrich(alert, ctx);
    await ENRICHERS.unknown.enrich(other, ctx);
    expect(queries()).toEqual(['vllm:num_requests_running{instance="i"}']);
  });

  it.each([
    '{__name__=~".+"} > 0',
    'count({__name__=~"node_.*"}) > 0',
    '{job="x"} > 1',
    'sum(rate({__name__=~".+_total"}[5m])) > 1',
    'up{job="x" > 0',
  ])('runs no expression the alert cannot narrow, nor one it cannot read: %s', async (expr) => {
    const hostile = ruleAlert({ alertname: 'Odd', severity: 'info' }, expr, 'h');
    const { ctx, asked } = fakeContext([hostile]);
    await expect(ENRICHERS.unknown.enrich(hostile, ctx)).rejects.toBeInstanceOf(EnrichmentUnavailable);
    expect(asked).toEqual([]);
  });

  it('is null when no series has the alert labels', async () => {
    const { ctx } = fakeContext([alert], {
      instant: { [SCOPED]: [sample({ model_name: 'c', instance: 'i' }, 3)] },
    });
    expect((await ENRICHERS.unknown.enrich(alert, ctx)).signals[0]?.value).toBeNull();
  });

  it('is unavailable when the alert carries no expression', async () => {
    const bare = { ...alert, generatorURL: '' };
    const { ctx, asked } = fakeContext([bare]);
    await expect(ENRICHERS.unknown.enrich(bare, ctx)).rejects.toBeInstanceOf(EnrichmentUnavailable);
    expect(asked).toEqual([]);
  });
});

describe('ENRICHERS', () => {
  it('has one enricher per kind, each under its own kind', () => {
    for (const [kind, enricher] of Object.entries(ENRICHERS)) expect(enricher.kind).toBe(kind);
    expect(Object.keys(ENRICHERS).sort()).toEqual([
      'error_rate',
      'gpu_memory',
      'kv_cache',
      'latency',
      'queue',
      'target_down',
      'unknown',
    ]);
  });
});
