import { describe, expect, it } from 'vitest';
import { formEncode } from '../../../shared/prometheus/form.js';

/** Every code point class a query may hold: ASCII (all of it), Latin-1, CJK, emoji (surrogate pairs), lone surrogates, NUL. */
const AWKWARD = [
  Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)).join(''),
  'histogram_quantile(0.99, sum by (le) (rate(x{a=~"b|c\\\\.d"}[5m]))) > 0',
  "!'()~*-._ +%&=#?/\\",
  'é ü ß 模型 🚀 \ufffd',
  'lone \ud800 high, lone \udc00 low, pair \ud83d\ude80',
  '',
];

describe('formEncode', () => {
  it('writes exactly what URLSearchParams writes', () => {
    for (const value of AWKWARD) {
      const params = { query: value, time: '1700000000.5', [value || 'k']: value };
      expect(formEncode(params), JSON.stringify(value)).toBe(new URLSearchParams(params).toString());
    }
  });
});
