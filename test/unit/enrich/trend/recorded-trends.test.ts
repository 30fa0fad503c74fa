/**
 * The trend on range answers recorded from Prometheus 2.42 (recorded/memory-ranges.json, made by
 * record.ts from scenarios.ts): a leak with a spike and GC dips, a noisy flat series, a restart
 * mid-window, a sawtooth.
 */
import { describe, expect, it } from 'vitest';
import { fitMemoryTrend } from '../../../../shared/enrich/trend/index.js';
import { envelopeSchema, queryDataSchema } from '../../../../shared/prometheus/wire.js';
import { loadExchanges } from '../../../fixtures/prometheus/exchanges.js';
import { GPU_CAPACITY_MIB, GPU_SLOPES } from '../../../fixtures/prometheus/scenarios.js';

/** The recorded window of GPU `gpu`, parsed as the client parses it. */
function recordedPoints(gpu: number) {
  const exchange = loadExchanges('memory-ranges').find((e) =>
    e.params.query?.startsWith(`DCGM_FI_DEV_FB_USED{gpu="${gpu}"`),
  );
  const data = queryDataSchema.parse(envelopeSchema.parse(exchange!.body).data);
  if (data.resultType !== 'matrix') throw new Error(data.resultType);
  return data.result[0]!.values;
}

describe('fitMemoryTrend on recorded range answers', () => {
  it('a leak under noise, a 20 GiB spike and GC dips: growth within 5%, the spike an outlier', () => {
    const points = recordedPoints(0);
    expect(points).toHaveLength(361);
    expect(Math.max(...points.map((p) => p.value))).toBeGreaterThan(50_000);
    const trend = fitMemoryTrend(points, GPU_CAPACITY_MIB)!;
    expect(Math.abs(trend.growthMiBPerHour - GPU_SLOPES.leak) / GPU_SLOPES.leak).toBeLessThan(0.05);
    expect(trend).toMatchObject({ growing: true, points: 361 });
    expect(trend.outliers).toBeGreaterThanOrEqual(1);
  });

  it('a noisy flat series: no upward trend', () => {
    expect(fitMemoryTrend(recordedPoints(1), GPU_CAPACITY_MIB)).toMatchObject({ growing: false, hoursToFull: null });
  });

  it('a restart mid-window: fitted since the restart only', () => {
    const trend = fitMemoryTrend(recordedPoints(2), GPU_CAPACITY_MIB)!;
    expect(trend.restartedAt).toBe('2026-11-29T10:16:00.000Z');
    expect(Math.abs(trend.growthMiBPerHour - GPU_SLOPES.restart) / GPU_SLOPES.restart).toBeLessThan(0.05);
  });

  it('a sawtooth: no upward trend and no restart', () => {
    const trend = fitMemoryTrend(recordedPoints(3), GPU_CAPACITY_MIB)!;
    expect(trend).toMatchObject({ growing: false, hoursToFull: null });
    expect(trend.restartedAt).toBeUndefined();
  });
});
