/**
 * Against the real Prometheus binary, back-filled (promtool) with a few hours of a GPU whose used
 * memory grows linearly: the fitted leak trend, the 11,000-points limit the step helper respects,
 * and batched queries answering as each query alone would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrichAlerts } from '../../shared/enrich/index.js';
import { silentLogger } from '../../shared/core/logger.js';
import { MAX_BATCH_MEMBERS, QueryBatcher } from '../../shared/prometheus/batch.js';
import { PrometheusClient } from '../../shared/prometheus/client.js';
import { MAX_POINTS_PER_SERIES, rangeStep } from '../../shared/prometheus/step.js';
import { ruleAlert } from '../fixtures/prometheus/alerts.js';
import { openMetricsLine, startPrometheus, type RunningPrometheus } from '../fixtures/prometheus/real-prometheus.js';

const SLOPE_MIB_PER_HOUR = 512;
const CAPACITY_MIB = 81_559;
const HOURS = 4;
const INTERVAL_SECONDS = 15;
const GPU = {
  Hostname: 'gpu-node-7',
  gpu: '3',
  UUID: 'GPU-0d9c3b1e-7a6f-4c2e-8b1d-5e4f3a2b1c0d',
  instance: '10.0.0.7:9400',
  job: 'dcgm',
};
const OTHER_GPU = { ...GPU, gpu: '2', UUID: 'GPU-11111111-2222-3333-4444-555555555555' };

/** The leaking GPU (with ±24 MiB of deterministic allocator noise) and a flat neighbour that must not be mixed in. */
function dcgmOpenMetrics(end: number): string {
  const start = end - HOURS * 3600;
  const used = (t: number) => Math.round(30_000 + (SLOPE_MIB_PER_HOUR * (t - start)) / 3600 + 24 * Math.sin(t / 97));
  const lines = ['# TYPE DCGM_FI_DEV_FB_USED gauge'];
  for (let t = start; t <= end; t += INTERVAL_SECONDS)
    lines.push(openMetricsLine('DCGM_FI_DEV_FB_USED', GPU, used(t), t));
  for (let t = start; t <= end; t += INTERVAL_SECONDS)
    lines.push(openMetricsLine('DCGM_FI_DEV_FB_USED', OTHER_GPU, 70_000, t));
  lines.push('# TYPE DCGM_FI_DEV_FB_FREE gauge');
  for (let t = start; t <= end; t += INTERVAL_SECONDS)
    lines.push(openMetricsLine('DCGM_FI_DEV_FB_FREE', GPU, CAPACITY_MIB - used(t), t));
  lines.push('# EOF', '');
  return lines.join('\n');
}

let prometheus: RunningPrometheus;
let now: Date;

beforeAll(async () => {
  now = new Date();
  prometheus = await startPrometheus(dcgmOpenMetrics(Math.floor(now.getTime() / 1000) - 30));
});

afterAll(async () => {
  await prometheus?.stop();
});

describe('real Prometheus 2.42', () => {
  it('fits the leak within 5% of the generated growth', async () => {
    const alert = ruleAlert(
      { alertname: 'GPUMemoryLeak', kind: 'gpu_memory', severity: 'warning', ...GPU },
      'deriv(DCGM_FI_DEV_FB_USED[30m]) * 3600 > 500',
      'f00df00df00df00d',
    );
    const result = await enrichAlerts([alert], {
      prometheusUrl: prometheus.url,
      timeoutMs: 10_000,
      memoryTrendWindowHours: 3,
      logger: silentLogger,
      now: () => now,
    });
    const enrichment = result.get(alert.fingerprint);
    if (enrichment?.status !== 'enriched' || !enrichment.trend)
      throw new Error(`no trend: ${JSON.stringify(enrichment)}`);
    const { trend, signals } = enrichment;
    expect(Math.abs(trend.growthMiBPerHour - SLOPE_MIB_PER_HOUR) / SLOPE_MIB_PER_HOUR).toBeLessThan(0.05);
    expect(trend.rSquared).toBeGreaterThan(0.99);
    expect(trend.capacityMiB).toBe(CAPACITY_MIB);
    expect(trend.points).toBeGreaterThan(170);
    expect(trend.hoursToFull).toBeCloseTo((CAPACITY_MIB - trend.usedMiB) / trend.growthMiBPerHour, 6);
    const used = signals.find((s) => s.name === 'gpu_memory_used_mib')?.value;
    expect(used).toBeGreaterThan(30_000 + SLOPE_MIB_PER_HOUR * (HOURS - 0.1));
    expect(used).toBeLessThan(40_000);
  });

  it('accepts exactly 11,000 intervals and refuses more, so rangeStep is at the real limit', async () => {
    const client = new PrometheusClient(prometheus.url);
    const rangeSeconds = 2 * MAX_POINTS_PER_SERIES;
    const end = now;
    const start = new Date(end.getTime() - rangeSeconds * 1000);
    const step = rangeStep(rangeSeconds, 1_000_000);
    expect(step).toBe(2);
    await expect(client.rangeQuery('vector(1)', { start, end, step })).resolves.toMatchObject({
      result: [{ metric: {} }],
    });
    await expect(client.rangeQuery('vector(1)', { start, end, step: 1.99 })).rejects.toMatchObject({
      errorType: 'bad_data',
      httpStatus: 400,
    });
  });
});

describe('batched queries on real Prometheus 2.42', () => {
  const EXPRS = [
    'DCGM_FI_DEV_FB_USED',
    'sum by (gpu) (DCGM_FI_DEV_FB_USED) / 1024',
    'DCGM_FI_DEV_FB_USED{gpu="3"} + DCGM_FI_DEV_FB_FREE',
    'DCGM_FI_DEV_FB_USED{gpu="9"}',
    'vector(1) or DCGM_FI_DEV_FB_FREE',
  ];

  it('one request answers each expression exactly as its own query does', async () => {
    const client = new PrometheusClient(prometheus.url);
    const batcher = new QueryBatcher(client);
    const alone = await Promise.all(EXPRS.map((e) => client.instantQuery(e, { time: now })));
    const batched = await Promise.all(EXPRS.map((e) => batcher.instant(e, now)));
    expect(batcher.requests).toBe(1);
    expect(batched).toEqual(alone.map((a) => a.result));
    expect(batched[3]).toEqual([]);

    const start = new Date(now.getTime() - 3600_000);
    const ranges = await Promise.all(EXPRS.slice(0, 2).map((e) => batcher.range(e, { start, end: now, step: 300 })));
    expect(batcher.requests).toBe(2);
    expect(ranges).toEqual(
      (await Promise.all(EXPRS.slice(0, 2).map((e) => client.rangeQuery(e, { start, end: now, step: 300 })))).map(
        (a) => a.result,
      ),
    );
  });

  it('an expression Prometheus refuses fails alone: the others answer from requests of their own', async () => {
    const client = new PrometheusClient(prometheus.url);
    const batcher = new QueryBatcher(client);
    const answers = await Promise.allSettled([
      batcher.instant(EXPRS[0]!, now),
      batcher.instant('sum(DCGM_FI_DEV_FB_USED', now),
      batcher.instant('scalar(vector(1))', now),
    ]);
    expect(answers[0]).toMatchObject({
      status: 'fulfilled',
      value: (await client.instantQuery(EXPRS[0]!, { time: now })).result,
    });
    expect(answers[1]).toMatchObject({ status: 'rejected', reason: { errorType: 'bad_data', httpStatus: 400 } });
    // A scalar cannot be tagged in a batch, but alone it answers as before.
    expect(answers[2]).toMatchObject({ status: 'fulfilled', value: [{ metric: {}, value: 1 }] });
    expect(batcher.requests).toBe(4);
  });

  it('instants at different times, and more expressions than one batch holds, go in separate requests', async () => {
    const batcher = new QueryBatcher(new PrometheusClient(prometheus.url));
    const earlier = new Date(now.getTime() - 600_000);
    const many = Array.from({ length: MAX_BATCH_MEMBERS + 1 }, (_, i) =>
      batcher.instant(`DCGM_FI_DEV_FB_USED{gpu="${i % 4}"}`, now),
    );
    const [last] = await Promise.all([batcher.instant('DCGM_FI_DEV_FB_USED{gpu="3"}', earlier), ...many]);
    expect(batcher.requests).toBe(3);
    expect(last).toHaveLength(1);
    expect((await Promise.all(many)).map((r) => r.length)).toEqual(
      Array.from({ length: MAX_BATCH_MEMBERS + 1 }, (_, i) => (i % 4 >= 2 ? 1 : 0)),
    );
  });
});
