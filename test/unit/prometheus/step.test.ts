import { describe, expect, it } from 'vitest';
import { DEFAULT_TARGET_POINTS, MAX_POINTS_PER_SERIES, rangeStep } from '../../../shared/prometheus/step.js';

describe('rangeStep', () => {
  it('splits a 6 h window into 360 one-minute steps by default', () => {
    expect(DEFAULT_TARGET_POINTS).toBe(360);
    expect(rangeStep(6 * 3600)).toBe(60);
  });

  it('rounds up to whole seconds and never goes below 1 s', () => {
    expect(rangeStep(1000, 360)).toBe(3);
    expect(rangeStep(10, 360)).toBe(1);
    expect(rangeStep(0)).toBe(1);
  });

  it.each([11_000, 11_001, 22_000, 86_400 * 30, 86_400 * 365])(
    'keeps %i s under the 11,000-point limit even when asked for more',
    (range) => {
      const step = rangeStep(range, 1_000_000);
      expect(range / step).toBeLessThanOrEqual(MAX_POINTS_PER_SERIES);
      expect(range / (step - 1)).toBeGreaterThan(MAX_POINTS_PER_SERIES);
    },
  );

  it('throws on a negative or infinite range and on no points', () => {
    expect(() => rangeStep(-1)).toThrow(RangeError);
    expect(() => rangeStep(Infinity)).toThrow(RangeError);
    expect(() => rangeStep(60, 0)).toThrow(RangeError);
  });
});
