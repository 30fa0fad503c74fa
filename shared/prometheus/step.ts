/**
 * Choosing a range query's `step`.
 *
 * Prometheus refuses a range query when `(end - start) / step > 11000` ("exceeded maximum resolution
 * of 11,000 points per timeseries").
 * @see https://github.com/prometheus/prometheus/blob/v2.42.0/web/api/v1/api.go (queryRange)
 */

/** Prometheus's limit on `(end - start) / step` for one range query. */
export const MAX_POINTS_PER_SERIES = 11_000;

/** Default number of intervals a range is split into: a 6 h window gives a 60 s step. */
export const DEFAULT_TARGET_POINTS = 360;

/**
 * A step that splits `rangeSeconds` into about `targetPoints` intervals, never more than
 * {@link MAX_POINTS_PER_SERIES}, and never finer than 1 s.
 * @param rangeSeconds `end - start`, seconds (≥ 0)
 * @param targetPoints wanted number of intervals (the series holds one point more)
 * @returns the step, whole seconds
 * @throws RangeError when `rangeSeconds` is negative or not finite, or `targetPoints` is not ≥ 1
 * @example rangeStep(6 * 3600) // 60
 */
export function rangeStep(rangeSeconds: number, targetPoints = DEFAULT_TARGET_POINTS): number {
  if (!Number.isFinite(rangeSeconds) || rangeSeconds < 0)
    throw new RangeError(`range must be ≥ 0 seconds, got ${rangeSeconds}`);
  if (!(targetPoints >= 1)) throw new RangeError(`targetPoints must be ≥ 1, got ${targetPoints}`);
  const intervals = Math.min(Math.floor(targetPoints), MAX_POINTS_PER_SERIES);
  return Math.max(1, Math.ceil(rangeSeconds / intervals));
}
