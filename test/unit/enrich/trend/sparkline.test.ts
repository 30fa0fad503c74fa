import { describe, expect, it } from 'vitest';
import { BLOCKS, sparkline, SPARKLINE_WIDTH } from '../../../../shared/enrich/trend/sparkline.js';

describe('sparkline', () => {
  it('scales the values between the lowest and the highest block', () => {
    expect(sparkline([1, 2, 3, 4, 5, 6, 7, 8], 8)).toBe('▁▂▃▄▅▆▇█');
    expect(sparkline([0, 10, 0], 3)).toBe('▁█▁');
  });

  it('averages into at most `width` buckets, oldest first', () => {
    const line = sparkline(Array.from({ length: 361 }, (_, i) => i));
    expect(line).toHaveLength(SPARKLINE_WIDTH);
    expect(line[0]).toBe(BLOCKS[0]);
    expect(line[SPARKLINE_WIDTH - 1]).toBe(BLOCKS[7]);
  });

  it('draws a flat series as middle blocks, skips non-finite values, and is empty without data', () => {
    expect(sparkline([5, 5, 5], 3)).toBe('▄▄▄');
    expect(sparkline([1, Number.NaN, Infinity, 2], 4)).toBe('▁█');
    expect(sparkline([])).toBe('');
  });
});
