/**
 * Why a memory trend gives no forecast: a rising series too short to trust must say "not enough
 * history", not "no upward trend" under a rising sparkline.
 */
import { describe, expect, it } from 'vitest';
import type { Point } from '../../../../shared/prometheus/client.js';
import {
  fitMemoryTrend,
  MIN_FORECAST_POINTS,
  MIN_FORECAST_R_SQUARED,
  MIN_FORECAST_SECONDS,
} from '../../../../shared/enrich/trend/index.js';
import { formatMemoryTrend } from '../../../../shared/enrich/values.js';

const T0 = 1_795_934_700;

function series(count: number, stepSeconds: number, f: (hours: number, i: number) => number): Point[] {
  return Array.from({ length: count }, (_, i) => ({
    time: T0 + i * stepSeconds,
    value: f((i * stepSeconds) / 3600, i),
  }));
}

describe('a memory trend without a forecast says why', () => {
  it('6 minutes of steady growth: not enough history (6 min of the 30 min needed)', () => {
    const trend = fitMemoryTrend(
      series(13, 30, (h) => 30_000 + 2_000 * h),
      81_559,
    )!;
    expect(trend).toMatchObject({
      growing: false,
      hoursToFull: null,
      noForecast: { reason: 'short_history', seconds: 360, neededSeconds: MIN_FORECAST_SECONDS },
    });
    expect(trend.growthMiBPerHour).toBeCloseTo(2_000, 6);
    expect(formatMemoryTrend(trend)).toBe('not enough history (6 min of the 30 min needed)');
  });

  it('29.5 minutes reads 29 min, never "30 of the 30 needed"', () => {
    const trend = fitMemoryTrend(
      series(60, 30, (h) => 30_000 + 2_000 * h),
      81_559,
    )!;
    expect(trend.windowSeconds).toBe(1_770);
    expect(formatMemoryTrend(trend)).toBe('not enough history (29 min of the 30 min needed)');
  });

  it('a long window of few samples: not enough samples (5 of the 10 needed)', () => {
    const trend = fitMemoryTrend(
      series(5, 900, (h) => 30_000 + 2_000 * h),
      81_559,
    )!;
    expect(trend.noForecast).toEqual({ reason: 'few_points', points: 5, neededPoints: MIN_FORECAST_POINTS });
    expect(formatMemoryTrend(trend)).toBe('not enough samples (5 of the 10 needed)');
  });

  it('flat or shrinking memory over enough history: no upward trend', () => {
    const flat = fitMemoryTrend(
      series(361, 60, () => 30_000),
      81_559,
    )!;
    expect(flat.noForecast).toEqual({ reason: 'not_growing' });
    expect(formatMemoryTrend(flat)).toBe('no upward trend');
    expect(
      formatMemoryTrend(
        fitMemoryTrend(
          series(100, 60, (h) => 50_000 - 300 * h),
          81_559,
        )!,
      ),
    ).toBe('no upward trend');
  });

  it('growth the line does not explain (a rising sawtooth): no upward trend, with the R² it had', () => {
    const trend = fitMemoryTrend(
      series(361, 60, (h, i) => 40_000 + 10 * h + (4_000 * (i % 45)) / 45),
      81_559,
    )!;
    expect(trend.noForecast).toMatchObject({ reason: 'poor_fit', neededRSquared: MIN_FORECAST_R_SQUARED });
    expect(formatMemoryTrend(trend)).toMatch(/^no upward trend \(R² 0\.\d\d, below the 0\.70 needed\)$/);
  });

  it('a real trend has no reason and forecasts', () => {
    const trend = fitMemoryTrend(
      series(361, 60, (h) => 20_000 + 600 * h),
      81_559,
    )!;
    expect(trend.noForecast).toBeUndefined();
    expect(formatMemoryTrend(trend)).toMatch(/^\+600 MiB\/h · full in ~4 d/);
  });
});
