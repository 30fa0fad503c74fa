import { describe, expect, it } from 'vitest';
import type { Point } from '../../../shared/prometheus/client.js';
import { fitMemoryTrend, MIN_TREND_POINTS } from '../../../shared/enrich/trend.js';

const T0 = 1_795_934_700;

/** `count` points every `stepSeconds`, value `f(hours since T0)`. */
function series(count: number, stepSeconds: number, f: (hours: number) => number): Point[] {
  return Array.from({ length: count }, (_, i) => ({ time: T0 + i * stepSeconds, value: f((i * stepSeconds) / 3600) }));
}

describe('fitMemoryTrend', () => {
  it('recovers the slope of an exact line with R² 1, and forecasts when memory is full', () => {
    const trend = fitMemoryTrend(series(361, 60, (h) => 20_000 + 600 * h), 81_559);
    expect(trend).toBeDefined();
    expect(trend!.growthMiBPerHour).toBeCloseTo(600, 9);
    expect(trend!.rSquared).toBeCloseTo(1, 12);
    expect(trend!).toMatchObject({ usedMiB: 23_600, capacityMiB: 81_559, windowSeconds: 6 * 3600, points: 361 });
    expect(trend!.hoursToFull).toBeCloseTo((81_559 - 23_600) / 600, 9);
  });

  it('gives the textbook R² on a known noisy set', () => {
    // y = 1, 3, 2, 5, 4 at x = 0..4 h: slope 0.8 MiB/h, R² = 0.64 (SSres 3.6, SStot 10).
    const points = [1, 3, 2, 5, 4].map((value, i) => ({ time: T0 + i * 3600, value }));
    const trend = fitMemoryTrend(points, 100)!;
    expect(trend.growthMiBPerHour).toBeCloseTo(0.8, 12);
    expect(trend.rSquared).toBeCloseTo(0.64, 12);
    expect(trend.hoursToFull).toBeCloseTo((100 - 4) / 0.8, 9);
  });

  it('does not forecast a flat series: growth 0, R² 1 (exact fit), no hours to full', () => {
    const trend = fitMemoryTrend(series(361, 60, () => 0.3 * 100_000), 81_559)!;
    expect(trend.growthMiBPerHour).toBe(0);
    expect(trend.rSquared).toBe(1);
    expect(trend.hoursToFull).toBeNull();
  });

  it('does not forecast a shrinking series', () => {
    const trend = fitMemoryTrend(series(100, 60, (h) => 50_000 - 300 * h), 81_559)!;
    expect(trend.growthMiBPerHour).toBeCloseTo(-300, 9);
    expect(trend.hoursToFull).toBeNull();
  });

  it('does not forecast growth below 1 MiB over the whole window (DCGM resolution)', () => {
    const trend = fitMemoryTrend(series(361, 60, (h) => 40_000 + 0.1 * h), 81_559)!;
    expect(trend.growthMiBPerHour).toBeCloseTo(0.1, 6);
    expect(trend.hoursToFull).toBeNull();
  });

  it('does not forecast without a capacity', () => {
    expect(fitMemoryTrend(series(10, 60, (h) => 1000 + 60 * h), null)).toMatchObject({ capacityMiB: null, hoursToFull: null });
  });

  it('says 0 hours when usage already exceeds capacity', () => {
    expect(fitMemoryTrend(series(10, 3600, (h) => 90_000 + 100 * h), 81_559)?.hoursToFull).toBe(0);
  });

  it('ignores non-finite values and needs at least 3 finite points', () => {
    expect(MIN_TREND_POINTS).toBe(3);
    expect(fitMemoryTrend([], 10)).toBeUndefined();
    expect(fitMemoryTrend(series(2, 60, (h) => h), 10)).toBeUndefined();
    const withGaps = [...series(3, 60, (h) => 100 + 60 * h), { time: T0 + 180, value: Number.NaN }, { time: T0 + 240, value: Infinity }];
    expect(fitMemoryTrend(withGaps, 1000)).toMatchObject({ points: 3, usedMiB: 102, windowSeconds: 120 });
  });
});
