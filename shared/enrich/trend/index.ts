/**
 * The leak trend of a memory series: restart detection, a robust (Theil–Sen) fit since the last
 * restart, and a forecast only when the trend is real. Pure: no I/O.
 */
import type { Point } from '../../prometheus/client.js';
import { median } from 'simple-statistics';
import { robustFit } from './theil-sen.js';
import { sparkline } from './sparkline.js';
import type { MemoryTrend, NoForecast } from '../types.js';

/** Fewer finite points than this give no trend at all. */
export const MIN_TREND_POINTS = 3;

/**
 * Growth over the fitted window below this is no growth, MiB. `DCGM_FI_DEV_FB_USED` counts whole
 * MiB, and noise on a flat series would otherwise forecast "full in 10^15 hours".
 */
export const MIN_WINDOW_GROWTH_MIB = 1;

/** A fit explaining less than this share of the variance (R², 0–1) is no trend: noise, a sawtooth. */
export const MIN_FORECAST_R_SQUARED = 0.7;

/** A forecast needs at least this many points since the last restart… */
export const MIN_FORECAST_POINTS = 10;

/** …spread over at least this many seconds (half an hour). */
export const MIN_FORECAST_SECONDS = 1800;

/**
 * A fall to at least this share (0–1) below the level just before it is a restart: the process or
 * GPU context started over. Garbage-collection drops are smaller; the robust fit absorbs them.
 */
export const RESTART_DROP_RATIO = 0.3;

/**
 * The level before a sample is the median of this many samples before it, so that the fall back
 * from a one-sample spike is not taken for a restart.
 */
export const RESTART_LEVEL_POINTS = 5;

const SECONDS_PER_HOUR = 3600;

/**
 * Index of the first point after the last restart in `points` (0 when there was none). A sample is
 * low when it lies at least {@link RESTART_DROP_RATIO} below the median of the
 * {@link RESTART_LEVEL_POINTS} samples before it; a restart is the last run of low samples, and the
 * fit starts after the run's lowest sample (the trough), so neither the old level nor the trough is fitted.
 * @param points in time order, finite values
 */
export function lastRestartIndex(points: readonly Point[]): number {
  const low = (i: number) => {
    const level = median(points.slice(Math.max(0, i - RESTART_LEVEL_POINTS), i).map((p) => p.value));
    return level > 0 && (level - points[i]!.value) / level >= RESTART_DROP_RATIO;
  };
  let last = points.length - 1;
  while (last > 0 && !low(last)) last--;
  if (last === 0) return 0;
  let first = last;
  while (first > 1 && low(first - 1)) first--;
  let trough = first;
  for (let i = first; i <= last; i++) if (points[i]!.value <= points[trough]!.value) trough = i;
  return Math.min(trough + 1, points.length - 1);
}

/**
 * Fits the growth of a memory series and forecasts when it reaches capacity.
 * @param points samples in time order: `time` in Unix seconds, `value` in MiB (non-finite values are ignored)
 * @param capacityMiB total memory, MiB, or `null` when unknown
 * @returns `undefined` with fewer than {@link MIN_TREND_POINTS} finite points; otherwise the trend of
 *   the points since the last restart ({@link lastRestartIndex}): growth in MiB/hour and R² of the
 *   Theil–Sen line, `growing` when growth is positive, at least {@link MIN_WINDOW_GROWTH_MIB} over the
 *   window and fitted with R² ≥ {@link MIN_FORECAST_R_SQUARED} on enough points, and `hoursToFull`
 *   only then (and when capacity is known); otherwise `noForecast` says why ({@link noForecastReason}).
 *   Fewer than 3 points since a restart give growth 0.
 *   The sparkline covers every finite point, before the restart too.
 */
export function fitMemoryTrend(points: readonly Point[], capacityMiB: number | null): MemoryTrend | undefined {
  const finite = points.filter((p) => Number.isFinite(p.value) && Number.isFinite(p.time));
  if (finite.length < MIN_TREND_POINTS) return undefined;
  const start = lastRestartIndex(finite);
  const segment = finite.slice(start);
  const first = segment[0]!;
  const last = segment[segment.length - 1]!;
  return {
    usedMiB: last.value,
    capacityMiB,
    windowSeconds: last.time - first.time,
    points: segment.length,
    method: 'theil-sen' as const,
    ...(start > 0 ? { restartedAt: new Date(first.time * 1000).toISOString() } : {}),
    sparkline: sparkline(finite.map((p) => p.value)),
    ...growthOf(segment, capacityMiB),
  };
}

/**
 * The growth of `segment` (the samples since the last restart, oldest first): its robust slope, how
 * well it fits, and when it reaches `capacityMiB`; no forecast (and why) when the segment is too short
 * or the fit is no evidence of growth.
 */
function growthOf(
  segment: readonly Point[],
  capacityMiB: number | null,
): Pick<MemoryTrend, 'growthMiBPerHour' | 'rSquared' | 'hoursToFull' | 'growing' | 'outliers' | 'noForecast'> {
  const first = segment[0]!;
  const last = segment[segment.length - 1]!;
  const windowSeconds = last.time - first.time;
  if (segment.length < MIN_TREND_POINTS) {
    const noForecast = noForecastReason({ slope: 0, rSquared: 0 }, segment.length, windowSeconds);
    return {
      growthMiBPerHour: 0,
      rSquared: 0,
      hoursToFull: null,
      growing: false,
      outliers: 0,
      ...(noForecast ? { noForecast } : {}),
    };
  }
  // Hours since the first point: Unix seconds would make every pairwise slope lose precision.
  const fit = robustFit(
    segment.map((p) => (p.time - first.time) / SECONDS_PER_HOUR),
    segment.map((p) => p.value),
  );
  const noForecast = noForecastReason(fit, segment.length, windowSeconds);
  const growing = noForecast === undefined;
  return {
    growthMiBPerHour: fit.slope,
    rSquared: fit.rSquared,
    hoursToFull: growing && capacityMiB !== null ? Math.max(0, (capacityMiB - last.value) / fit.slope) : null,
    growing,
    outliers: fit.outliers,
    ...(noForecast ? { noForecast } : {}),
  };
}

/**
 * Why a fit of `points` samples over `windowSeconds` gives no forecast, or `undefined` when it
 * gives one. History and samples come first: on a short window no slope, rising or not, is evidence,
 * and the message must say so rather than "no upward trend" over a rising sparkline.
 */
export function noForecastReason(
  fit: { slope: number; rSquared: number },
  points: number,
  windowSeconds: number,
): NoForecast | undefined {
  if (windowSeconds < MIN_FORECAST_SECONDS)
    return { reason: 'short_history', seconds: windowSeconds, neededSeconds: MIN_FORECAST_SECONDS };
  if (points < MIN_FORECAST_POINTS) return { reason: 'few_points', points, neededPoints: MIN_FORECAST_POINTS };
  if (!(fit.slope > 0) || fit.slope * (windowSeconds / SECONDS_PER_HOUR) < MIN_WINDOW_GROWTH_MIB)
    return { reason: 'not_growing' };
  if (!(fit.rSquared >= MIN_FORECAST_R_SQUARED))
    return { reason: 'poor_fit', rSquared: fit.rSquared, neededRSquared: MIN_FORECAST_R_SQUARED };
  return undefined;
}
