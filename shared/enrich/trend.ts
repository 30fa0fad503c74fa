/**
 * Least-squares trend of a GPU memory series, for memory-leak alerts. Pure: no I/O.
 * @see https://simple-statistics.github.io/docs/#linearregression
 */
import { linearRegression, linearRegressionLine, rSquared } from 'simple-statistics';
import type { Point } from '../prometheus/client.js';
import type { MemoryTrend } from './types.js';

/** Fewer points than this give no trend: two points always fit a line perfectly. */
export const MIN_TREND_POINTS = 3;

/**
 * Growth over the whole window below this is no growth. `DCGM_FI_DEV_FB_USED` counts whole MiB, and
 * floating-point noise on a flat series would otherwise forecast "full in 10^15 hours".
 */
export const MIN_WINDOW_GROWTH_MIB = 1;

const SECONDS_PER_HOUR = 3600;

/**
 * Fits `used = a + growth · t` to a memory series.
 * @param points samples in time order: `time` in Unix seconds, `value` in MiB (non-finite values are ignored)
 * @param capacityMiB total memory, MiB, or `null` when unknown
 * @returns the trend (growth in MiB/hour, R² 0–1, hours to full only when growing and capacity is
 *   known), or `undefined` with fewer than {@link MIN_TREND_POINTS} finite points. A constant series
 *   has growth 0 and R² 1 (the line fits exactly).
 */
export function fitMemoryTrend(points: readonly Point[], capacityMiB: number | null): MemoryTrend | undefined {
  const finite = points.filter((p) => Number.isFinite(p.value) && Number.isFinite(p.time));
  const first = finite[0];
  const last = finite[finite.length - 1];
  if (!first || !last || finite.length < MIN_TREND_POINTS) return undefined;
  // Hours since the first point: Unix seconds squared would lose precision in the sums.
  const data = finite.map((p) => [(p.time - first.time) / SECONDS_PER_HOUR, p.value]);
  const constant = finite.every((p) => p.value === first.value);
  const line = constant ? { m: 0, b: first.value } : linearRegression(data);
  const fit = constant ? 1 : clamp01(rSquared(data, linearRegressionLine(line)));
  const windowSeconds = last.time - first.time;
  const growing = line.m > 0 && line.m * (windowSeconds / SECONDS_PER_HOUR) >= MIN_WINDOW_GROWTH_MIB;
  return {
    growthMiBPerHour: line.m,
    rSquared: fit,
    usedMiB: last.value,
    capacityMiB,
    hoursToFull: growing && capacityMiB !== null ? Math.max(0, (capacityMiB - last.value) / line.m) : null,
    windowSeconds,
    points: finite.length,
  };
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}
