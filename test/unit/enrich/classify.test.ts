import { describe, expect, it } from 'vitest';
import { webhookSchema } from '../../../shared/alertmanager/schema.js';
import { classifyAlert } from '../../../shared/enrich/classify.js';
import type { AlertKind } from '../../../shared/enrich/types.js';
import { fixtureText, type FixtureName } from '../../helpers/fixtures.js';

const graph = (expr: string) =>
  `http://prometheus:9090/graph?${new URLSearchParams({ 'g0.expr': expr, 'g0.tab': '1' })}`;
const alert = (labels: Record<string, string>, expr?: string) => ({
  labels,
  generatorURL: expr === undefined ? '' : graph(expr),
});

describe('classifyAlert from the kind label', () => {
  it.each<[string, AlertKind]>([
    ['cache', 'kv_cache'],
    ['kv_cache', 'kv_cache'],
    ['kv-cache', 'kv_cache'],
    ['memory', 'gpu_memory'],
    ['gpu_memory', 'gpu_memory'],
    ['latency', 'latency'],
    ['ttft', 'latency'],
    ['queue', 'queue'],
    ['error', 'error_rate'],
    ['errors', 'error_rate'],
    ['error_rate', 'error_rate'],
    [' Cache ', 'kv_cache'],
    ['TTFT', 'latency'],
    ['target_down', 'target_down'],
    ['down', 'target_down'],
  ])('kind=%j → %s', (kind, expected) => {
    expect(classifyAlert(alert({ alertname: 'Whatever', kind }))).toBe(expected);
  });

  it('wins over the expression and the name', () => {
    expect(
      classifyAlert(alert({ alertname: 'VLLMQueueBacklog', kind: 'memory' }, 'vllm:num_requests_waiting > 5')),
    ).toBe('gpu_memory');
  });

  it('an unrecognised kind falls through to the expression', () => {
    for (const kind of ['disk', 'constructor', 'toString', '']) {
      expect(classifyAlert(alert({ alertname: 'X', kind }, 'vllm:num_requests_waiting > 5'))).toBe('queue');
    }
  });
});

describe('classifyAlert from the rule expression', () => {
  it.each<[string, AlertKind]>([
    ['histogram_quantile(0.95, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2', 'latency'],
    ['vllm:gpu_cache_usage_perc > 0.95', 'kv_cache'],
    ['max by (job, instance, model_name) (vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc) > 0.95', 'kv_cache'],
    ['sum by (model_name) (vllm:num_requests_waiting) > 50', 'queue'],
    ['deriv(DCGM_FI_DEV_FB_USED[30m]) * 3600 > 500', 'gpu_memory'],
    ['sum(rate(http_requests_total{status="5xx"}[5m])) / sum(rate(http_requests_total[5m])) > 0.05', 'error_rate'],
    ['rate(request_failure_total[5m]) > 1', 'error_rate'],
    // vLLM's own failure evidence where HTTP counters are missing (V0, V1 before 0.8.3).
    ['sum by (instance) (rate(vllm:request_success_total{finished_reason="error"}[5m])) > 0', 'error_rate'],
    // A target that stopped answering scrapes, with or without matchers (the shipped VLLMServerDown's shape).
    ['up == 0', 'target_down'],
    [
      'up{job=~"(?i).*vllm.*"} == 0 or (up == 0 and on (job, instance) group by (job, instance) (present_over_time(vllm:num_requests_running[1d])))',
      'target_down',
    ],
    ['up == 1', 'unknown'],
    ['up == 0.5', 'unknown'],
    ['node_up == 0', 'unknown'],
    ['sum(rate(http_requests_total[5m])) < 1', 'unknown'],
    ['vllm:num_requests_waiting_total > 1', 'unknown'],
    ['my_vllm:num_requests_waiting > 1', 'unknown'],
  ])('%s → %s', (expr, expected) => {
    expect(classifyAlert(alert({ alertname: 'Rule' }, expr))).toBe(expected);
  });

  it('wins over the name', () => {
    expect(classifyAlert(alert({ alertname: 'HighLatency' }, 'vllm:num_requests_waiting > 5'))).toBe('queue');
  });

  it('ignores an unparsable generatorURL', () => {
    expect(classifyAlert({ labels: { alertname: 'QueueFull' }, generatorURL: 'not a url' })).toBe('queue');
  });
});

describe('classifyAlert from the alertname', () => {
  it.each<[string, AlertKind]>([
    ['VLLMHighTTFT', 'latency'],
    ['VLLMTTFTHigh', 'latency'],
    ['P95Latency', 'latency'],
    ['VLLMKVCacheNearlyFull', 'kv_cache'],
    ['prefix_cache_miss', 'kv_cache'],
    ['RequestQueueLong', 'queue'],
    ['VLLMBacklog', 'queue'],
    ['APIErrors', 'error_rate'],
    ['GPUMemoryHigh', 'gpu_memory'],
    ['GPUOOMKilled', 'gpu_memory'],
    ['GpuOom', 'gpu_memory'],
    ['gpu_oom', 'gpu_memory'],
    ['FramebufferLeak', 'gpu_memory'],
    ['ZoomRoomFull', 'unknown'],
    ['InstanceDown', 'unknown'],
    ['', 'unknown'],
  ])('%j → %s', (name, expected) => {
    expect(classifyAlert(alert({ alertname: name }))).toBe(expected);
  });

  it('is unknown without any alertname', () => {
    expect(classifyAlert(alert({}))).toBe('unknown');
  });
});

describe('classifyAlert on the real fixtures', () => {
  it.each<[FixtureName, AlertKind]>([
    ['firing-kv-cache-critical', 'kv_cache'],
    ['firing-gpu-memory-leak', 'gpu_memory'],
    ['firing-queue-backlog-two-models', 'queue'],
    ['resolved-queue-backlog-two-models', 'queue'],
  ])('%s → %s, by label and by expression alike', (name, expected) => {
    for (const a of webhookSchema.parse(JSON.parse(fixtureText(name))).alerts) {
      expect(classifyAlert(a)).toBe(expected);
      const { kind: _kind, ...withoutKind } = a.labels;
      expect(classifyAlert({ ...a, labels: withoutKind })).toBe(expected);
    }
  });
});
