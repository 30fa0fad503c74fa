/**
 * The Theil–Sen estimator: the slope is the median of the slopes between all pairs of points, the
 * intercept the median of `y − slope·x`. Up to 29% of the points can be arbitrarily wrong (a spike,
 * a garbage-collection drop) without moving the line, which least squares cannot say.
 *
 * Written here rather than taken from `ml-regression-theil-sen` (mljs): that package allocates an
 * `n²` array of slopes, about 120 million entries for an 11,000-point series; `simple-statistics`
 * has no robust regression. Medians and the MAD come from `simple-statistics`.
 * @see https://en.wikipedia.org/wiki/Theil%E2%80%93Sen_estimator
 */
import { median, medianAbsoluteDeviation } from 'simple-statistics';

/**
 * Above this many points the fit uses this many, evenly spaced (first and last kept): the pairs grow
 * with the square of the points (1,500 points = 1.1 million slopes, tens of milliseconds),
 * and thinning an evenly sampled series keeps its slope.
 */
export const MAX_FIT_POINTS = 1500;

/** Residuals further than this many robust standard deviations (1.4826 × MAD) from their median are outliers. */
export const OUTLIER_SIGMAS = 4;

/** `y = intercept + slope · x`. */
export interface Line {
  slope: number;
  intercept: number;
}

/** A robust fit and how well it describes the points it kept. */
export interface RobustFit extends Line {
  /** 1 − SSres/SStot over the inliers, clamped to 0–1; 1 when the inliers are constant and on the line. */
  rSquared: number;
  /** Points whose residual is an outlier (see {@link OUTLIER_SIGMAS}). */
  outliers: number;
}

/**
 * Fits a line with the Theil–Sen estimator.
 * @param xs abscissae (at least two distinct values for a slope; pairs with equal `x` are skipped)
 * @param ys ordinates, same length as `xs`, all finite
 * @returns the line; slope 0 when no pair has distinct `x`
 * @throws RangeError when the arrays are empty or of different lengths
 */
export function theilSen(xs: readonly number[], ys: readonly number[]): Line {
  if (xs.length !== ys.length || xs.length === 0)
    throw new RangeError(`need equally long, non-empty arrays (got ${xs.length} and ${ys.length})`);
  const keep = thinnedIndices(xs.length, MAX_FIT_POINTS);
  const slopes = new Float64Array((keep.length * (keep.length - 1)) / 2);
  let count = 0;
  for (let a = 0; a < keep.length; a++) {
    const i = keep[a]!;
    for (let b = a + 1; b < keep.length; b++) {
      const j = keep[b]!;
      const dx = xs[j]! - xs[i]!;
      if (dx !== 0) slopes[count++] = (ys[j]! - ys[i]!) / dx;
    }
  }
  // simple-statistics' median (quickselect, linear time) reads any indexable array; its type says number[].
  const slope = count === 0 ? 0 : median(slopes.subarray(0, count) as unknown as number[]);
  const intercept = median(ys.map((y, i) => y - slope * xs[i]!));
  return { slope, intercept };
}

/**
 * {@link theilSen} plus the goodness of fit over the inliers.
 * @see {@link OUTLIER_SIGMAS} for what an outlier is
 */
export function robustFit(xs: readonly number[], ys: readonly number[]): RobustFit {
  const line = theilSen(xs, ys);
  const residuals = ys.map((y, i) => y - (line.intercept + line.slope * xs[i]!));
  const center = median(residuals);
  const sigma = 1.4826 * (residuals.length > 1 ? medianAbsoluteDeviation(residuals) : 0);
  const inlier = residuals.map((r) => Math.abs(r - center) <= OUTLIER_SIGMAS * sigma);
  const kept = ys.filter((_, i) => inlier[i]);
  const mean = kept.reduce((sum, y) => sum + y, 0) / kept.length;
  let ssRes = 0;
  let ssTot = 0;
  residuals.forEach((r, i) => {
    if (!inlier[i]) return;
    ssRes += r * r;
    ssTot += (ys[i]! - mean) ** 2;
  });
  const rSquared = ssTot === 0 ? (ssRes === 0 ? 1 : 0) : Math.min(1, Math.max(0, 1 - ssRes / ssTot));
  return { ...line, rSquared, outliers: inlier.filter((x) => !x).length };
}

/** `count` indices spread evenly over `0..n-1`, first and last included; all of them when `n ≤ count`. */
function thinnedIndices(n: number, count: number): number[] {
  if (n <= count) return Array.from({ length: n }, (_, i) => i);
  return Array.from({ length: count }, (_, k) => Math.round((k * (n - 1)) / (count - 1)));
}
