/**
 * What real servers expose, against the real Prometheus back-filled (promtool) with
 * series shaped as real vLLM and dcgm-exporter releases print them (test/fixtures/exposition →
 * test/fixtures/prometheus/exposition-scenarios.ts): no signal shows an invented zero, quantiles are
 * never summed across engine generations, GPUs are matched to their vLLM server, and the shipped
 * error rule reads vLLM's own evidence. One Prometheus serves the whole file.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { enrichAlerts } from '../../shared/enrich/index.js';
import type { Enrichment, Signal } from '../../shared/enrich/types.js';
import { silentLogger } from '../../shared/core/logger.js';
import { PrometheusClient } from '../../shared/prometheus/client.js';
import { alertLines, PLAIN } from '../../shared/render/content.js';
import * as down from '../fixtures/prometheus/down-alerts.js';
import * as expo from '../fixtures/prometheus/exposition-alerts.js';
import { latencyGroup } from '../fixtures/prometheus/scenario-alerts.js';
import { startPrometheus, type RunningPrometheus } from '../fixtures/prometheus/real-prometheus.js';
import { SCENARIO_END, scenarioOpenMetrics } from '../fixtures/prometheus/scenarios.js';
import { SHIPPED } from '../helpers/processes.js';

let prometheus: RunningPrometheus;
let result: Map<string, Enrichment>;
const ALERTS: Alert[] = [...Object.values(expo), latencyGroup.queue, down.xidDown, down.plainDown, ...down.edgeDown];

beforeAll(async () => {
  prometheus = await startPrometheus(scenarioOpenMetrics());
  result = await enrichAlerts(ALERTS, {
    prometheusUrl: prometheus.url,
    timeoutMs: 20_000,
    memoryTrendWindowHours: 6,
    logger: silentLogger,
    now: () => SCENARIO_END,
  });
});

afterAll(async () => {
  await prometheus?.stop();
});

/** The alert's signals by name, and its message as plain text. */
function read(alert: Alert): { s: Record<string, Signal>; text: string } {
  const e = result.get(alert.fingerprint);
  if (e?.status !== 'enriched') throw new Error(`not enriched: ${JSON.stringify(e)}`);
  return {
    s: Object.fromEntries(e.signals.map((x) => [x.name, x])),
    text: alertLines({ ...alert, enrichment: e }, PLAIN).join('\n'),
  };
}

describe('error evidence', () => {
  it('a V0 server (no HTTP counters, no failure counter): no data where vLLM exposes nothing, never a 0% abort share; real finish reasons', () => {
    const { s, text } = read(expo.legacyErrors);
    expect(s.http_5xx_ratio!.value).toBeNull();
    expect(s.failed_ratio!.value).toBeNull();
    expect(s.failed_per_second!.value).toBeNull();
    expect(Object.keys(s).filter((n) => n.includes('abort'))).toEqual([]);
    expect(text).not.toMatch(/abort/i);
    expect(s['finished_per_second:stop']!.value).toBe(3);
    expect(s['finished_per_second:length']!.value).toBe(0.5);
    expect(s.length_capped_ratio!.value).toBeCloseTo(0.5 / 3.5, 9);
    expect(text).toMatch(/signals not exposed by this server: HTTP 5xx share, Failed share \(vLLM\), Failed \(vLLM\)/);
  });

  it('a V1 0.10 server: the engine finished 10% as errors while HTTP shows 1% 5xx; the abort series at 0 and the _created samples are not read', () => {
    const { s } = read(expo.newErrors);
    expect(s.http_5xx_ratio!.value).toBeCloseTo(0.01, 3);
    expect(s.failed_ratio!.value).toBeCloseTo(0.1, 9);
    expect(s.failed_per_second!.value).toBe(1);
    expect(
      Object.keys(s)
        .filter((n) => n.startsWith('finished_per_second'))
        .sort(),
    ).toEqual(['finished_per_second:error', 'finished_per_second:length', 'finished_per_second:stop']);
    expect(s.gpu_xid_last).toMatchObject({ value: 79, atStart: 79 });
  });

  it('the shipped VLLMErrorRateHigh expression selects the V1 server by its engine failures, and not the FastAPI service failing half its requests', async () => {
    const doc = parse(await readFile(SHIPPED.rules, 'utf8')) as {
      groups: Array<{ rules: Array<{ alert?: string; expr: string }> }>;
    };
    const expr = doc.groups.flatMap((g) => g.rules).find((r) => r.alert === 'VLLMErrorRateHigh')!.expr;
    const { result: samples } = await new PrometheusClient(prometheus.url).instantQuery(expr, { time: SCENARIO_END });
    expect(samples.map((x) => [x.metric, x.value])).toEqual([
      [{ instance: '10.0.4.1:8000', job: 'vllm' }, expect.closeTo(0.1, 9)],
    ]);
  });
});

describe('a vLLM server that stopped answering scrapes (VLLMServerDown)', () => {
  /** The enrichment of a down alert, and its message's lines. */
  const enriched = (alert: Alert) => {
    const e = result.get(alert.fingerprint);
    if (e?.status !== 'enriched') throw new Error(`not enriched: ${JSON.stringify(e)}`);
    return e;
  };

  it('the shipped rule labels it target_down, and the enrichment reads that kind', async () => {
    const doc = parse(await readFile(SHIPPED.rules, 'utf8')) as {
      groups: Array<{ rules: Array<{ alert?: string; labels?: Record<string, string> }> }>;
    };
    expect(doc.groups.flatMap((g) => g.rules).find((r) => r.alert === 'VLLMServerDown')?.labels?.kind).toBe(
      'target_down',
    );
    expect(enriched(down.xidDown).kind).toBe('target_down');
  });

  it('XID 79 on its host: down for 12 minutes, one of two GPUs still reporting, the rest of the job up → GPU fault; no "no data" lines', () => {
    const { s, text } = read(down.xidDown);
    expect(s.down_for_seconds!.value).toBeGreaterThanOrEqual(12 * 60);
    expect(s.down_for_seconds!.value).toBeLessThan(13 * 60);
    expect(s.job_targets_up).toMatchObject({ value: 1 });
    expect(s.job_targets).toMatchObject({ value: 3 });
    expect(s.gpus_reporting).toMatchObject({ value: 1 });
    expect(s.gpu_xid_last).toMatchObject({ value: 79 });
    // 12 of the last 60 minutes down.
    expect(s.up_ratio_1h!.value).toBeCloseTo((60 - 12) / 60, 1);
    expect(enriched(down.xidDown).likelyCause).toMatchObject({ rule: 'gpu_fault' });
    expect(text).not.toMatch(/no data/);
  });

  it('no XID on its host, the rest of the job up → the server process; GPUs reporting, XID 0', () => {
    const { s, text } = read(down.plainDown);
    expect(s.down_for_seconds!.value).toBeGreaterThanOrEqual(8 * 60);
    expect(s.down_for_seconds!.value).toBeLessThan(9 * 60);
    expect(s.gpus_reporting).toMatchObject({ value: 2 });
    expect(s.gpu_xid_last).toMatchObject({ value: 0 });
    expect(enriched(down.plainDown).likelyCause).toMatchObject({ rule: 'server_process_down' });
    expect(text).not.toMatch(/no data/);
  });

  it('every target of the job down, no DCGM on the hosts → the scrape path; the GPU signals are left out, not "no data"', () => {
    for (const alert of down.edgeDown) {
      const { s, text } = read(alert);
      expect(Object.keys(s).sort()).toEqual(['down_for_seconds', 'job_targets', 'job_targets_up', 'up_ratio_1h']);
      expect(s.job_targets_up).toMatchObject({ value: 0 });
      expect(enriched(alert).likelyCause).toMatchObject({ rule: 'scrape_path_down' });
      expect(text).not.toMatch(/no data/);
    }
  });
});

describe('quantiles per engine generation', () => {
  it('a model served by a V0 and a V1 server reads one end-to-end quantile per generation, each within its own buckets', () => {
    const { s, text } = read(expo.mixedLatency);
    expect(s.e2e_p99_seconds).toBeUndefined();
    expect(s['e2e_p99_seconds:v0']).toMatchObject({ label: 'End-to-end latency p99 (V0 engine)', topBucket: 60 });
    expect(s['e2e_p99_seconds:v0']!.value).toBeGreaterThan(40);
    expect(s['e2e_p99_seconds:v0']!.value).toBeLessThanOrEqual(50);
    expect(s['e2e_p99_seconds:v1']).toMatchObject({ label: 'End-to-end latency p99 (V1 engine)', topBucket: 7680 });
    expect(s['e2e_p99_seconds:v1']!.value).toBeGreaterThan(0.3);
    expect(s['e2e_p99_seconds:v1']!.value).toBeLessThanOrEqual(0.5);
    expect(text).toContain('End-to-end latency p99 (V0 engine)');
  });

  it('one server of one generation reads the plain quantile', () => {
    const { s } = read(expo.mixedV0Latency);
    expect(s.e2e_p50_seconds!.value).toBeGreaterThan(40);
    expect(s['e2e_p50_seconds:v0']).toBeUndefined();
  });
});

describe('prefix cache and request phases, by version', () => {
  it("reads the prefix-cache hit rate from V0's gauge, early V1's gpu_ counters and 0.10's new names", () => {
    expect(read(expo.mixedV0Latency).s.prefix_cache_hit_ratio!.value).toBe(0.3);
    expect(read(expo.earlyLatency).s.prefix_cache_hit_ratio!.value).toBe(0.5);
    expect(read(expo.mixedV1Latency).s.prefix_cache_hit_ratio!.value).toBe(0.25);
  });

  it("V0 with prefix caching off (the gauge's -1 sentinel) reads no data, never -100%", () => {
    const { s, text } = read(expo.legacyLatency);
    expect(s.prefix_cache_hit_ratio!.value).toBeNull();
    expect(text).toMatch(/signals not exposed by this server: [^\n]*Prefix-cache hit rate/);
    expect(text).not.toContain('-100%');
  });

  it('reads the mean queue, prefill, decode and per-token times of V1; V0 has none: no data', () => {
    const { s } = read(expo.mixedV1Latency);
    expect(s.queue_time_mean_seconds!.value).toBeCloseTo(0.1, 9);
    expect(s.prefill_time_mean_seconds!.value).toBeCloseTo(0.2, 9);
    expect(s.decode_time_mean_seconds!.value).toBeCloseTo(0.1, 9);
    expect(s.tpot_mean_seconds!.value).toBeCloseTo(0.02, 9);
    expect(read(expo.mixedV0Latency).s.queue_time_mean_seconds!.value).toBeNull();
  });
});

describe('label sets of each release', () => {
  it('V1 0.8 (no engine label, the old KV gauge name) reads its KV cache and requests', () => {
    const { s } = read(expo.earlyKv);
    expect(s.kv_cache_usage_ratio!.value).toBe(0.25);
    expect(s.requests_running!.value).toBe(4);
  });

  it('data-parallel engines: the server sums them, an engine alert reads its own', () => {
    expect(read(expo.dpQueue).s.requests_running!.value).toBe(8);
    expect(read(expo.dpEngineQueue).s.requests_running!.value).toBe(3);
    expect(read(expo.dpQueue).s.kv_cache_usage_ratio!.value).toBe(0.7);
  });
});

describe('GPU utilization from dcgm-exporter, matched to the vLLM server', () => {
  it("bare metal (dcgm 3.x Hostname): the mean of the GPUs on the engine host, by the instances' host", () => {
    expect(read(latencyGroup.queue).s.gpu_utilization_ratio!.value).toBeCloseTo(0.8, 9);
  });

  it("Kubernetes (dcgm 2026 hostname, MIG, pod mapping): the pod's own MIG slice, never the GPU of the pod next to it", () => {
    expect(read(expo.k8sQueue).s.gpu_utilization_ratio).toMatchObject({ value: 0.35, unit: 'ratio' });
  });

  it('no DCGM for the server: no data, never 0', () => {
    const { s, text } = read(expo.dpQueue);
    expect(s.gpu_utilization_ratio!.value).toBeNull();
    expect(text).toMatch(/signals not exposed by this server: [^\n]*GPU utilization/);
  });
});
