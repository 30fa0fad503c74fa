/**
 * Where fleets really run, against the real Prometheus back-filled (promtool) with series shaped as
 * the newest releases print them (test/fixtures/exposition → test/fixtures/prometheus/engine-scenarios.ts):
 * Kubernetes pods and their GPUs, vLLM main's API-server failures and configured memory share, the
 * waiting queue split by reason, production-stack's router beside the engines, dcgm-exporter's
 * per-process series, a bare-metal host with an idle GPU. Each shape has a twin without the
 * evidence, which must stay silent. One Prometheus serves the whole file.
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
import * as alerts from '../fixtures/prometheus/engine-alerts.js';
import { engineOpenMetrics, HIDDEN, OOM, PS, REJECTING, STEADY } from '../fixtures/prometheus/engine-scenarios.js';
import { startPrometheus, type RunningPrometheus } from '../fixtures/prometheus/real-prometheus.js';
import { SCENARIO_END } from '../fixtures/prometheus/scenarios.js';
import { SHIPPED } from '../helpers/processes.js';

let prometheus: RunningPrometheus;
let result: Map<string, Enrichment>;

beforeAll(async () => {
  prometheus = await startPrometheus(engineOpenMetrics());
  result = await enrichAlerts(Object.values(alerts), {
    prometheusUrl: prometheus.url,
    timeoutMs: 20_000,
    memoryTrendWindowHours: 1,
    logger: silentLogger,
    now: () => SCENARIO_END,
  });
});

afterAll(async () => {
  await prometheus?.stop();
});

/** The alert's enrichment, its signals by name, and its message as plain text. */
function read(alert: Alert): {
  e: Extract<Enrichment, { status: 'enriched' }>;
  s: Record<string, Signal>;
  text: string;
} {
  const e = result.get(alert.fingerprint);
  if (e?.status !== 'enriched') throw new Error(`not enriched: ${JSON.stringify(e)}`);
  return {
    e,
    s: Object.fromEntries(e.signals.map((x) => [x.name, x])),
    text: alertLines({ ...alert, enrichment: e }, PLAIN).join('\n'),
  };
}

/** The samples a shipped rule's expression gives now: its alerts before `for`. */
async function shippedRule(name: string): Promise<Array<{ metric: Record<string, string>; value: number }>> {
  const doc = parse(await readFile(SHIPPED.rules, 'utf8')) as {
    groups: Array<{ rules: Array<{ alert?: string; expr: string }> }>;
  };
  const expr = doc.groups.flatMap((g) => g.rules).find((r) => r.alert === name)!.expr;
  return (await new PrometheusClient(prometheus.url).instantQuery(expr, { time: SCENARIO_END })).result;
}

describe('Kubernetes: an alert reaches the GPUs of its pods', () => {
  it('a model-wide queue alert (model_name only) finds its pod and its GPU: busy, flat tokens, slow tokens → decode-bound', () => {
    const { e, s } = read(alerts.k8sDecodeQueue);
    expect(s.gpu_utilization_ratio!.value).toBeCloseTo(0.97, 9);
    expect(e.likelyCause?.rule).toBe('decode_bound');
  });

  it('twin: the pod has no GPU series → GPU utilization stays unknown and the cause stays queueing', () => {
    const { e, s } = read(alerts.k8sNoGpuQueue);
    expect(s.gpu_utilization_ratio!.value).toBeNull();
    expect(e.likelyCause?.rule).toBe('queueing');
  });

  it('a KV-cache alert by pod IP (instance) finds the pod: an idle GPU with a full cache → memory-bound, not KV-cache pressure', () => {
    const { e, s } = read(alerts.k8sMemoryKv);
    expect(s.gpu_utilization_ratio!.value).toBeCloseTo(0.2, 9);
    expect(e.likelyCause?.rule).toBe('memory_bound');
  });
});

describe("vLLM main's API-server failures: 4xx are rejected input, 5xx are failures", () => {
  it('only 400s at gpu_memory_utilization 0.95: no failure, rejected input, never out of memory', () => {
    const { e, s, text } = read(alerts.rejectingErrors);
    expect(s.failed_per_second!.value).toBe(0);
    expect(s.rejected_per_second!.value).toBeCloseTo(3, 9);
    expect(s.gpu_memory_used_ratio!.value).toBeGreaterThan(0.95);
    expect(e.likelyCause?.rule).toBe('input_validation');
    expect(text).not.toMatch(/Failed \(vLLM\): [^·]*3\/s/);
  });

  it('the shipped VLLMErrorRateHigh does not evaluate a server that failed nothing', async () => {
    const samples = await shippedRule('VLLMErrorRateHigh');
    expect(samples.filter((x) => x.metric.instance === REJECTING.instance)).toEqual([]);
  });

  it('one old 500 (and 400) does not hide the engine errors after it: both sources count', async () => {
    expect(read(alerts.hiddenErrors).s.failed_per_second!.value).toBeCloseTo(1, 9);
    const samples = await shippedRule('VLLMErrorRateHigh');
    expect(samples.find((x) => x.metric.instance === HIDDEN.instance)?.value).toBeCloseTo(0.1, 9);
  });

  it('real 5xx on a server within the memory share it was configured to take: not out of memory', () => {
    const { e, s } = read(alerts.steadyErrors);
    expect(s.failed_per_second!.value).toBeCloseTo(1, 9);
    expect(s.gpu_memory_configured_ratio!.value).toBe(0.95);
    expect(e.likelyCause?.rule).not.toBe('out_of_memory');
  });

  it('real 5xx on a server using more GPU memory than its configured share: out of memory', () => {
    const { e, s } = read(alerts.oomErrors);
    expect(s.gpu_memory_configured_ratio!.value).toBe(0.9);
    expect(e.likelyCause?.rule).toBe('out_of_memory');
    expect(e.likelyCause?.evidence.join(' ')).toContain('90%');
  });

  it('the shipped VLLMErrorRateHigh still sees the real 5xx', async () => {
    const samples = await shippedRule('VLLMErrorRateHigh');
    for (const server of [STEADY, OOM])
      expect(samples.find((x) => x.metric.instance === server.instance)?.value).toBeCloseTo(0.1, 9);
  });
});

describe('deferred requests are not a capacity queue', () => {
  it('a disaggregated decode pod waiting on KV transfers: named for what it is, not "add replicas"', () => {
    const { e, s } = read(alerts.pdQueue);
    expect(s.requests_waiting!.value).toBe(12);
    expect(s.requests_deferred!.value).toBe(12);
    expect(s.requests_waiting_capacity!.value).toBe(0);
    expect(e.likelyCause?.rule).toBe('deferred_requests');
  });

  it('twin: the same queue waiting for capacity is queueing', () => {
    const { e } = read(alerts.capacityQueue);
    expect(e.likelyCause?.rule).toBe('queueing');
  });
});

describe("production-stack's router beside the engines", () => {
  it('a namespace queue alert reads the engines only: 60 waiting, not the 120 of engines and router copies', () => {
    expect(read(alerts.namespaceQueue).s.requests_waiting!.value).toBe(60);
  });

  it('the shipped VLLMQueueBacklog raises one alert for the model and none without a model', async () => {
    const samples = await shippedRule('VLLMQueueBacklog');
    expect(samples.filter((x) => !x.metric.model_name)).toEqual([]);
    expect(samples.find((x) => x.metric.model_name === PS.model)?.value).toBe(60);
  });
});

describe("dcgm-exporter's per-process series on a time-shared GPU", () => {
  it('a device alert reads the device: 36,800 MiB used of 45,539, not the 73,600 of device and processes', () => {
    const { s, e } = read(alerts.sharedDeviceLeak);
    expect(s.gpu_memory_used_mib!.value).toBe(36_800);
    expect(s.gpu_memory_total_mib!.value).toBe(45_539);
    expect(e.trend?.usedMiB).toBe(36_800);
  });

  it("a pod's alert reads its own process's utilization", () => {
    expect(read(alerts.sharedPodLatency).s.gpu_utilization_ratio!.value).toBeCloseTo(0.55, 9);
  });
});

describe('a bare-metal host with several GPUs', () => {
  it("the server's GPU utilization leaves out the host's idle, empty GPU, and says it is the host's average", () => {
    const { s, text } = read(alerts.twoGpusLatency);
    expect(s.gpu_utilization_ratio!.value).toBeCloseTo(0.18, 9);
    expect(s.gpu_utilization_ratio!.label).toMatch(/host average/);
    expect(text).toContain('host average');
  });
});

describe('other engines, the same diagnosis', () => {
  it("SGLang: its pool usage and retractions read as KV cache and preemptions → KV-cache pressure, in SGLang's own flags", () => {
    const { e, s, text } = read(alerts.sglangPressureKv);
    expect(e.engine).toBe('SGLang');
    expect(s.kv_cache_usage_ratio!.value).toBe(0.97);
    expect(s.preemptions_per_second!.value).toBeCloseTo(0.3, 2);
    expect(s.requests_waiting!.value).toBe(6);
    expect(e.likelyCause?.rule).toBe('kv_cache_pressure');
    expect(e.likelyCause?.action).toContain('--mem-fraction-static');
    expect(e.likelyCause?.action).not.toContain('--gpu-memory-utilization');
    expect(text).toContain('Likely cause: KV-cache pressure');
  });

  it('twin: an SGLang server that never retracted (no counter yet) reads no preemptions, and no cause is guessed', () => {
    const { e, s } = read(alerts.sglangCalmKv);
    expect(s.kv_cache_usage_ratio!.value).toBe(0.97);
    expect(s.preemptions_per_second!.value).toBeNull();
    expect(e.likelyCause).toBeUndefined();
  });

  it('what SGLang has no metric for reads "not exposed by SGLang", never 0, and is not asked', () => {
    const { s, text } = read(alerts.sglangQueue);
    expect(s.requests_waiting_capacity).toMatchObject({ value: null, query: '', notExposedBy: 'SGLang' });
    expect(text).toContain(
      '2 signals not exposed by SGLang: Waiting for capacity, Waiting, deferred (KV transfer, LoRA)',
    );
    expect(text).not.toMatch(/Waiting for capacity: (no data|0)/);
  });

  it("SGLang counts its clients' aborts: a client-abort cause is possible there", () => {
    const { e, s } = read(alerts.sglangAborts);
    expect(s.aborted_ratio!.value).toBeCloseTo(0.3, 6);
    expect(e.likelyCause?.rule).toBe('client_aborts');
  });

  it("Ray Serve LLM: vLLM's signals read from ray_vllm_* → queueing", () => {
    const { e, s } = read(alerts.rayQueue);
    expect(e.engine).toBe('Ray Serve LLM');
    expect(s.requests_waiting!.value).toBe(72);
    expect(s.requests_running!.value).toBe(64);
    expect(s.requests_waiting!.query).toContain('ray_vllm_num_requests_waiting{');
    expect(e.likelyCause?.rule).toBe('queueing');
  });

  it("NIM: vLLM's names without the prefix", () => {
    const { e, s } = read(alerts.nimLatency);
    expect(e.engine).toBe('NVIDIA NIM');
    expect(s.requests_running!.value).toBe(12);
    expect(s.kv_cache_usage_ratio!.value).toBe(0.42);
    expect(s.ttft_p95_seconds!.value).toBeGreaterThan(2.5);
    expect(s.ttft_p95_seconds!.value).toBeLessThanOrEqual(5);
  });
});
