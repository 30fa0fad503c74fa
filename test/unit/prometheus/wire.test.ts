import { describe, expect, it } from 'vitest';
import { parseSampleValue, queryDataSchema } from '../../../shared/prometheus/wire.js';

describe('parseSampleValue', () => {
  it('parses the special values by hand (Number("+Inf") would be NaN)', () => {
    expect(Number('+Inf')).toBeNaN();
    expect(parseSampleValue('+Inf')).toBe(Number.POSITIVE_INFINITY);
    expect(parseSampleValue('Inf')).toBe(Number.POSITIVE_INFINITY);
    expect(parseSampleValue('-Inf')).toBe(Number.NEGATIVE_INFINITY);
    expect(parseSampleValue('NaN')).toBeNaN();
  });

  it.each([
    ['0', 0],
    ['85', 85],
    ['-3.5', -3.5],
    ['0.97', 0.97],
    ['1e-05', 0.00001],
    ['2.4999999999999996', 2.4999999999999996],
    ['1.7976931348623157e+308', Number.MAX_VALUE],
  ])('parses %s', (text, value) => {
    expect(parseSampleValue(text)).toBe(value);
  });

  it.each(['', 'abc', '12abc', 'inf', 'nan', '0x1F', ' 1', 'toString', 'constructor'])('rejects %j', (text) => {
    expect(() => parseSampleValue(text)).toThrow(RangeError);
  });
});

describe('queryDataSchema', () => {
  it('turns vector values into numbers and keeps labels as sent', () => {
    const data = queryDataSchema.parse({
      resultType: 'vector',
      result: [{ metric: { Hostname: 'gpu-node-1' }, value: [1.5, '-Inf'] }],
    });
    expect(data).toEqual({
      resultType: 'vector',
      result: [{ metric: { Hostname: 'gpu-node-1' }, value: { time: 1.5, value: -Infinity } }],
    });
  });

  it('reads a matrix series without values as one without points, and a bad sample value by its path', () => {
    expect(queryDataSchema.parse({ resultType: 'matrix', result: [{ metric: { a: 'b' } }] })).toEqual({
      resultType: 'matrix',
      result: [{ metric: { a: 'b' }, values: [] }],
    });
    const issue = queryDataSchema.safeParse({
      resultType: 'matrix',
      result: [
        {
          metric: {},
          values: [
            [1, '1'],
            [2, 'x'],
          ],
        },
      ],
    }).error!.issues[0]!;
    expect([issue.path, issue.message]).toEqual([['result', 0, 'values', 1, 1], 'not a Prometheus sample value']);
  });

  it('rejects a vector sample without a value (a native histogram)', () => {
    expect(
      queryDataSchema.safeParse({ resultType: 'vector', result: [{ metric: {}, histogram: [1, { count: '1' }] }] })
        .success,
    ).toBe(false);
  });
});
