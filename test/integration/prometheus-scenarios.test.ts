/**
 * The six scenarios of "enrichment that explains", against the real Prometheus binary back-filled
 * (promtool) with six hours of synthetic vLLM (V0 and V1 metric names) and DCGM history: each
 * message names the right evidence and cause. One Prometheus serves the whole file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { alertLines, PLAIN } from '../../shared/render/content.js';
import { enrichAlerts, type EnrichDeps } from '../../shared/enrich/index.js';
import type { Enrichment } from '../../shared/enrich/types.js';
import { createLogger, silentLogger } from '../../shared/core/logger.js';
import { PrometheusClient } from '../../shared/prometheus/client.js';
import { startPrometheus, type RunningPrometheus } from '../fixtures/prometheus/real-prometheus.js';
import { gpuGroup, kvAlert, latencyGroup, rssAlert } from '../fixtures/prometheus/scenario-alerts.js';
import {
  GPU_CAPACITY_MIB,
  GPU_SLOPES,
  RSS_MIB_PER_HOUR,
  SCENARIO_END,
  scenarioOpenMetrics,
} from '../fixtures/prometheus/scenarios.js';

let prometheus: RunningPrometheus;

beforeAll(async () => {
  prometheus = await startPrometheus(scenarioOpenMetrics());
});

afterAll(async () => {
  await prometheus?.stop();
});

async function enrich(group: Alert[], extra: Partial<EnrichDeps> = {}): Promise<Map<string, Enrichment>> {
  return enrichAlerts(group, {
    prometheusUrl: prometheus.url,
    timeoutMs: 10_000,
    memoryTrendWindowHours: 6,
    logger: silentLogger,
    now: () => SCENARIO_END,
    ...extra,
  });
}

/** The enrichment of `alert` and its message as plain text. */
function message(
  result: Map<string, Enrichment>,
  alert: Alert,
): { e: Extract<Enrichment, { status: 'enriched' }>; text: string } {
  const e = result.get(alert.fingerprint);
  if (e?.status !== 'enriched') throw new Error(`not enriched: ${JSON.stringify(e)}`);
  return { e, text: alertLines({ ...alert, enrichment: e }, PLAIN).join('\n') };
}

const value = (e: Extract<Enrichment, { status: 'enriched' }>, name: string) => e.signals.find((s) => s.name === name);
const relativeError = (actual: number, expected: number) => Math.abs(actual - expected) / expected;

describe('latency alerts of one group (fired at different times)', () => {
  let result: Map<string, Enrichment>;
  let queries: unknown;
  let requests: unknown;

  beforeAll(async () => {
    const lines: string[] = [];
    result = await enrich(Object.values(latencyGroup), { logger: createLogger('debug', (l) => lines.push(l)) });
    const done = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.event === 'enrich.done');
    ({ queries, requests } = done ?? {});
  });

  it('queueing: requests waiting, growing since the alert fired, names queueing', () => {
    const { e, text } = message(result, latencyGroup.queue);
    expect(value(e, 'requests_waiting')).toMatchObject({ value: 40 });
    expect(value(e, 'requests_waiting')!.atStart).toBeLessThan(40);
    expect(value(e, 'ttft_p99_seconds')).toMatchObject({ value: 10, topBucket: 10 });
    expect(e.likelyCause).toMatchObject({ rule: 'queueing', evidence: ['Requests waiting 40 (≥ 1)'] });
    expect(text).toContain('TTFT p99: ≥ 10.0 s → ≥ 10.0 s');
    expect(text).toContain('Likely cause: Queueing');
  });

  it('prefill-bound: no queue, 12,000-token prompts (V0 metric names), names prefill', () => {
    const { e, text } = message(result, latencyGroup.prefill);
    expect(value(e, 'requests_waiting')!.value).toBe(0);
    expect(value(e, 'prompt_tokens_mean')!.value).toBeCloseTo(12_000, 6);
    expect(value(e, 'kv_cache_usage_ratio')!.value).toBe(0.5);
    expect(value(e, 'itl_p95_seconds')!.value).toBeGreaterThan(0);
    expect(e.likelyCause).toMatchObject({
      rule: 'prefill_bound',
      evidence: ['Requests waiting 0 (< 1)', 'Mean prompt (tokens) 12,000 (≥ 2,048)'],
    });
    expect(text).toContain('--enable-chunked-prefill');
  });

  it('low traffic: quantiles with no requests are named, not 0, and no cause is guessed', () => {
    const { e, text } = message(result, latencyGroup.idle);
    expect(value(e, 'ttft_p95_seconds')!.value).toBeNaN();
    expect(text).toContain('TTFT p95: no requests → no requests');
    expect(e.likelyCause).toBeUndefined();
    expect(text).not.toContain('Likely cause');
  });

  it('costs the same queries as one alert would: one per signal now, one range for the starts, one per histogram', () => {
    // 20 vLLM signals now + one range each for the starts + 3 histograms' bucket bounds + the servers'
    // lookup + GPU utilization (now, range).
    expect(queries).toBe(46);
  });

  it('sends those queries in two requests: the instant ones now together, the range ones together', () => {
    // The servers' lookup finds the instances the alerts name: the GPU queries asked with them stand.
    expect(requests).toBe(2);
  });
});

describe("what each alert of a group keeps: its own query, not the group's", () => {
  it('names no peer, and asked alone gives the value the group query gave that alert', async () => {
    const group = Object.values(latencyGroup);
    const result = await enrich(group);
    const client = new PrometheusClient(prometheus.url);
    let checked = 0;
    for (const alert of group) {
      const { e } = message(result, alert);
      const peers = group.filter((p) => p !== alert).map((p) => p.labels.model_name!);
      for (const s of e.signals) {
        for (const peer of peers) expect(s.query, `${alert.labels.model_name} ${s.name}`).not.toContain(peer);
        if (typeof s.value !== 'number' || !Number.isFinite(s.value) || s.name.includes(':')) continue;
        const alone = (await client.instantQuery(s.query, { time: SCENARIO_END })).result.map((x) => x.value);
        // A GPU signal combines the server's GPUs (their mean); a vLLM signal is one series.
        const mean = alone.reduce((sum, v) => sum + v, 0) / alone.length;
        if (s.query.includes('DCGM_')) expect(mean, `${alert.labels.model_name} ${s.name}`).toBeCloseTo(s.value, 9);
        else expect(alone, `${alert.labels.model_name} ${s.name}`).toContain(s.value);
        checked++;
      }
    }
    // Most signals have data in these scenarios: the check above ran, not vacuously.
    expect(checked).toBeGreaterThan(20);
  });
});

describe('KV-cache pressure with preemptions rising', () => {
  it('names KV-cache pressure with usage and preemption rate, then and now', async () => {
    const { e, text } = message(await enrich([kvAlert]), kvAlert);
    expect(value(e, 'kv_cache_usage_ratio')!.value).toBeCloseTo(0.97, 9);
    expect(value(e, 'preemptions_per_second')!.value!).toBeGreaterThan(value(e, 'preemptions_per_second')!.atStart!);
    expect(e.likelyCause?.rule).toBe('kv_cache_pressure');
    expect(e.likelyCause?.evidence[0]).toBe('KV cache usage 97% (≥ 90%)');
    expect(text).toMatch(/Preemptions: 0\.\d+\/s → 0\.\d+\/s/);
    expect(text).toContain('--gpu-memory-utilization');
  });
});

describe('GPU memory (one group of four GPUs)', () => {
  let result: Map<string, Enrichment>;
  const [leak, flat, restart, sawtooth] = gpuGroup;

  beforeAll(async () => {
    result = await enrich(gpuGroup);
  });

  it('steady leak: growth within 5% of the generated slope despite noise, a spike and GC dips; forecast and cause', () => {
    const { e, text } = message(result, leak!);
    expect(relativeError(e.trend!.growthMiBPerHour, GPU_SLOPES.leak)).toBeLessThan(0.05);
    expect(e.trend).toMatchObject({ growing: true, capacityMiB: GPU_CAPACITY_MIB, windowSeconds: 6 * 3600 });
    expect(e.trend!.restartedAt).toBeUndefined();
    expect(e.trend!.hoursToFull).toBeCloseTo((GPU_CAPACITY_MIB - e.trend!.usedMiB) / e.trend!.growthMiBPerHour, 6);
    expect(e.likelyCause?.rule).toBe('memory_leak');
    expect(text).toMatch(/Memory over the window: [▁-█]{24}/);
  });

  it('flat memory: no upward trend, no forecast, no cause', () => {
    const { e, text } = message(result, flat!);
    expect(e.trend).toMatchObject({ growing: false, hoursToFull: null });
    expect(e.likelyCause).toBeUndefined();
    expect(text).toContain('Memory trend: no upward trend');
  });

  it('restart mid-window: fitted only since the restart, growth within 5% of the slope', () => {
    const { e, text } = message(result, restart!);
    expect(relativeError(e.trend!.growthMiBPerHour, GPU_SLOPES.restart)).toBeLessThan(0.05);
    expect(e.trend!.restartedAt).toBe('2026-11-29T10:16:00.000Z');
    expect(e.trend!.windowSeconds).toBeLessThan(2.6 * 3600);
    expect(e.likelyCause?.rule).toBe('memory_leak');
    expect(text).toContain('since a restart at 2026-11-29 10:16:00 UTC');
  });

  it('sawtooth: no forecast for garbage-collection waves', () => {
    const { e } = message(result, sawtooth!);
    expect(e.trend).toMatchObject({ growing: false, hoursToFull: null });
    expect(e.trend!.restartedAt).toBeUndefined();
    expect(e.likelyCause).toBeUndefined();
  });
});

describe('host memory from process_resident_memory_bytes', () => {
  it('reads bytes as MiB and fits the leak of the configured series', async () => {
    const { e, text } = message(await enrich([rssAlert], { memorySeries: 'process_resident_memory_bytes' }), rssAlert);
    expect(relativeError(e.trend!.growthMiBPerHour, RSS_MIB_PER_HOUR)).toBeLessThan(0.05);
    expect(value(e, 'memory_used_mib')!.value).toBeCloseTo(2048 + 6 * RSS_MIB_PER_HOUR, -1);
    expect(text).toContain('of process_resident_memory_bytes');
  });
});
