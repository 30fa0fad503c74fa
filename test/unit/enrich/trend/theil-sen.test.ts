import { describe, expect, it } from 'vitest';
import { MAX_FIT_POINTS, robustFit, theilSen } from '../../../../shared/enrich/trend/theil-sen.js';

describe('theilSen', () => {
  it('is the median of the pairwise slopes, and the median intercept', () => {
    // y = 1, 3, 2, 5, 4 at x = 0..4: the ten slopes sorted are -1, -1, 1/3, 0.5, 0.75, 1, 1, 4/3, 2, 3.
    const line = theilSen([0, 1, 2, 3, 4], [1, 3, 2, 5, 4]);
    expect(line.slope).toBeCloseTo(0.875, 12);
    // y − 0.875·x = 1, 2.125, 0.25, 2.375, 0.5 → median 1.
    expect(line.intercept).toBeCloseTo(1, 12);
  });

  it('ignores up to 29% of wild points, where least squares would not', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i);
    const ys = xs.map((x, i) => (i % 4 === 0 ? 10_000 : 3 * x + 7));
    expect(theilSen(xs, ys)).toEqual({ slope: 3, intercept: 7 });
  });

  it('skips pairs with equal x, and is flat when no pair has distinct x', () => {
    expect(theilSen([1, 1, 2], [0, 2, 4]).slope).toBe(3);
    expect(theilSen([5, 5], [1, 3])).toEqual({ slope: 0, intercept: 2 });
  });

  it('thins more than MAX_FIT_POINTS points evenly and keeps the slope', () => {
    const xs = Array.from({ length: 11_000 }, (_, i) => i / 60);
    const line = theilSen(
      xs,
      xs.map((x) => 500 * x + 1000),
    );
    expect(MAX_FIT_POINTS).toBeLessThan(11_000);
    expect(line.slope).toBeCloseTo(500, 9);
    expect(line.intercept).toBeCloseTo(1000, 6);
  });

  it('throws on empty or unequal arrays', () => {
    expect(() => theilSen([], [])).toThrow(RangeError);
    expect(() => theilSen([1, 2], [1])).toThrow(RangeError);
  });
});

describe('robustFit', () => {
  it('reports R² over the inliers and counts the outliers', () => {
    const xs = Array.from({ length: 50 }, (_, i) => i);
    const ys = xs.map((x, i) => 2 * x + (i % 2 ? 0.5 : -0.5) + (i === 25 ? 1000 : 0));
    const fit = robustFit(xs, ys);
    expect(fit.outliers).toBe(1);
    expect(fit.rSquared).toBeGreaterThan(0.999);
  });

  it('gives R² 1 to a constant series and 0 to pure alternating noise', () => {
    expect(robustFit([0, 1, 2, 3], [5, 5, 5, 5]).rSquared).toBe(1);
    expect(robustFit([0, 1, 2, 3, 4, 5], [1, -1, 1, -1, 1, -1]).rSquared).toBeLessThan(0.2);
  });
});
