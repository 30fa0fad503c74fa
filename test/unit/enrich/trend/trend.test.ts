import { describe, expect, it } from 'vitest';
import type { Point } from '../../../../shared/prometheus/client.js';
import {
  fitMemoryTrend,
  lastRestartIndex,
  MIN_TREND_POINTS,
  RESTART_DROP_RATIO,
} from '../../../../shared/enrich/trend/index.js';

const T0 = 1_795_934_700;

/** `count` points every `stepSeconds`, value `f(hours since T0, index)`. */
function series(count: number, stepSeconds: number, f: (hours: number, i: number) => number): Point[] {
  return Array.from({ length: count }, (_, i) => ({
    time: T0 + i * stepSeconds,
    value: f((i * stepSeconds) / 3600, i),
  }));
}

/** Deterministic noise in [-1, 1). */
const noise = (i: number) => ((((Math.sin(i * 78.233) * 43_758.5453) % 1) + 1) % 1) * 2 - 1;

describe('fitMemoryTrend', () => {
  it('recovers the slope of an exact line with R² 1, and forecasts when memory is full', () => {
    const trend = fitMemoryTrend(
      series(361, 60, (h) => 20_000 + 600 * h),
      81_559,
    );
    expect(trend).toMatchObject({
      usedMiB: 23_600,
      capacityMiB: 81_559,
      windowSeconds: 6 * 3600,
      points: 361,
      method: 'theil-sen',
      growing: true,
      outliers: 0,
    });
    expect(trend!.growthMiBPerHour).toBeCloseTo(600, 9);
    expect(trend!.rSquared).toBeCloseTo(1, 12);
    expect(trend!.hoursToFull).toBeCloseTo((81_559 - 23_600) / 600, 9);
    expect(trend!.restartedAt).toBeUndefined();
  });

  it('is not swung by a spike or by garbage-collection drops: growth within 1% and the outliers named', () => {
    const points = series(
      361,
      60,
      (h, i) => 20_000 + 600 * h + 20 * noise(i) + (i === 180 ? 30_000 : 0) - (i % 40 < 2 ? 400 : 0),
    );
    const trend = fitMemoryTrend(points, 81_559)!;
    expect(Math.abs(trend.growthMiBPerHour - 600) / 600).toBeLessThan(0.01);
    expect(trend.rSquared).toBeGreaterThan(0.99);
    expect(trend.outliers).toBeGreaterThanOrEqual(1);
    expect(trend).toMatchObject({ growing: true, points: 361 });
    expect(trend.restartedAt).toBeUndefined();
  });

  it('fits only since a restart, and says when it was', () => {
    const points = series(361, 60, (h, i) =>
      i < 200 ? 30_000 + 800 * h : i === 200 ? 1_000 : 20_000 + 800 * (h - 200 / 60),
    );
    const trend = fitMemoryTrend(points, 81_559)!;
    expect(trend.restartedAt).toBe(new Date((T0 + 201 * 60) * 1000).toISOString());
    expect(trend.points).toBe(160);
    expect(trend.growthMiBPerHour).toBeCloseTo(800, 6);
    expect(trend.windowSeconds).toBe(159 * 60);
  });

  it('sees no trend in a flat noisy series (no forecast, not growing)', () => {
    const trend = fitMemoryTrend(
      series(361, 60, (_, i) => 50_000 + 200 * noise(i)),
      81_559,
    )!;
    expect(trend).toMatchObject({ growing: false, hoursToFull: null });
    expect(trend.rSquared).toBeLessThan(0.1);
  });

  it('sees no trend in a sawtooth (9% drops are garbage collection, not restarts)', () => {
    const trend = fitMemoryTrend(
      series(361, 60, (_, i) => 40_000 + (4_000 * (i % 45)) / 45),
      81_559,
    )!;
    expect(trend).toMatchObject({ growing: false, hoursToFull: null });
    expect(trend.restartedAt).toBeUndefined();
    expect(trend.sparkline).toMatch(/^[▁-█]{24}$/);
  });

  it('does not forecast a flat, shrinking or barely growing series', () => {
    expect(
      fitMemoryTrend(
        series(361, 60, () => 30_000),
        81_559,
      ),
    ).toMatchObject({ growthMiBPerHour: 0, rSquared: 1, growing: false, hoursToFull: null });
    expect(
      fitMemoryTrend(
        series(100, 60, (h) => 50_000 - 300 * h),
        81_559,
      ),
    ).toMatchObject({ growing: false, hoursToFull: null });
    const slow = fitMemoryTrend(
      series(361, 60, (h) => 40_000 + 0.1 * h),
      81_559,
    )!;
    expect(slow.growthMiBPerHour).toBeCloseTo(0.1, 6);
    expect(slow).toMatchObject({ growing: false, hoursToFull: null });
  });

  it('does not forecast from too few points or too short a window', () => {
    expect(
      fitMemoryTrend(
        series(9, 600, (h) => 1000 + 60 * h),
        10_000,
      ),
    ).toMatchObject({ growing: false, hoursToFull: null });
    expect(
      fitMemoryTrend(
        series(20, 60, (h) => 1000 + 600 * h),
        10_000,
      ),
    ).toMatchObject({ growing: false, hoursToFull: null });
  });

  it('forecasts growth without a capacity only as growth', () => {
    expect(
      fitMemoryTrend(
        series(61, 60, (h) => 1000 + 60 * h),
        null,
      ),
    ).toMatchObject({ capacityMiB: null, hoursToFull: null, growing: true });
  });

  it('says 0 hours when usage already exceeds capacity', () => {
    expect(
      fitMemoryTrend(
        series(10, 3600, (h) => 90_000 + 100 * h),
        81_559,
      )?.hoursToFull,
    ).toBe(0);
  });

  it('ignores non-finite values and needs at least 3 finite points', () => {
    expect(MIN_TREND_POINTS).toBe(3);
    expect(fitMemoryTrend([], 10)).toBeUndefined();
    expect(
      fitMemoryTrend(
        series(2, 60, (h) => h),
        10,
      ),
    ).toBeUndefined();
    const withGaps = [
      ...series(3, 60, (h) => 100 + 60 * h),
      { time: T0 + 180, value: Number.NaN },
      { time: T0 + 240, value: Infinity },
    ];
    expect(fitMemoryTrend(withGaps, 1000)).toMatchObject({ points: 3, usedMiB: 102, windowSeconds: 120 });
  });

  it('gives growth 0 when fewer than 3 points follow a restart', () => {
    const points = series(30, 60, (_, i) => (i === 28 ? 100 : 10_000 + i));
    expect(fitMemoryTrend(points, 81_559)).toMatchObject({ growthMiBPerHour: 0, growing: false, points: 1 });
  });
});

describe('lastRestartIndex', () => {
  const at = (values: number[]) => values.map((value, i) => ({ time: T0 + i * 60, value }));

  it('finds the last fall of at least 30% below the level before it, and starts after the trough', () => {
    expect(RESTART_DROP_RATIO).toBe(0.3);
    expect(lastRestartIndex(at([100, 100, 100, 69, 100, 101]))).toBe(4);
    expect(lastRestartIndex(at([100, 50, 60, 70, 71, 72, 10, 70, 71]))).toBe(7);
  });

  it('does not take a fall of less than 30%, or the fall back from a one-sample spike, for a restart', () => {
    expect(lastRestartIndex(at([100, 100, 100, 71, 100]))).toBe(0);
    expect(lastRestartIndex(at([100, 100, 100, 1000, 100, 100]))).toBe(0);
  });
});
