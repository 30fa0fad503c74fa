import { describe, expect, it } from 'vitest';
import {
  aggregate,
  equalityMatchers,
  escapeRegex,
  groupMatchers,
  labelName,
  quoteString,
  selector,
  stripTrailingComparison,
} from '../../../shared/prometheus/promql.js';

describe('quoteString', () => {
  it.each([
    ['qwen3-8b', '"qwen3-8b"'],
    ['say "hi"', String.raw`"say \"hi\""`],
    [String.raw`C:\models`, String.raw`"C:\\models"`],
    ['a\nb\tc\rd', String.raw`"a\nb\tc\rd"`],
    ['模型/🙂', '"模型/🙂"'],
    // Prometheus's lexer refuses a raw U+FFFD ("invalid UTF-8 rune"): Go's own stand-in for bad bytes.
    ['a\ufffdb', String.raw`"a\ufffdb"`],
  ])('quotes %j as %s', (value, quoted) => {
    expect(quoteString(value)).toBe(quoted);
  });
});

describe('equalityMatchers and selector', () => {
  it('takes the named labels that are present, in the order of the names', () => {
    const labels = { job: 'vllm', alertname: 'X', model_name: 'a"b', severity: 'critical' };
    expect(equalityMatchers(labels, ['model_name', 'instance', 'job'])).toEqual(['model_name="a\\"b"', 'job="vllm"']);
  });

  it('writes a bare metric name when there is nothing to match', () => {
    expect(selector('vllm:num_requests_waiting', [])).toBe('vllm:num_requests_waiting');
    expect(selector('up', ['job="a"', 'instance="b"'])).toBe('up{job="a",instance="b"}');
  });
});

describe('stripTrailingComparison', () => {
  it.each([
    ['sum by (model_name) (vllm:num_requests_waiting) > 50', 'sum by (model_name) (vllm:num_requests_waiting)'],
    ['vllm:gpu_cache_usage_perc > 0.95', 'vllm:gpu_cache_usage_perc'],
    ['deriv(DCGM_FI_DEV_FB_USED[30m]) * 3600 > 500', 'deriv(DCGM_FI_DEV_FB_USED[30m]) * 3600'],
    ['(a / b)>=1e-3\n', '(a / b)'],
    ['x <= -5', 'x'],
    ['x != 0', 'x'],
    ['x == bool 1', 'x'],
    ['x < +Inf', 'x'],
    ['x > 0x1F', 'x'],
    ['sum(x > 5 and y) by (a) > 1', 'sum(x > 5 and y) by (a)'],
    ['vllm:andor_x{a=">1", b=~"or|and"} > 1', 'vllm:andor_x{a=">1", b=~"or|and"}'],
    ['rate(x[5m] offset 1h) # a > 9 or\n < 3', 'rate(x[5m] offset 1h) # a > 9 or'],
  ])('%j → %j', (expr, stripped) => {
    expect(stripTrailingComparison(expr)).toBe(stripped);
  });

  it.each([
    'sum(x > 5)',
    'x > y',
    'up{job=">5"}',
    'rate(x[5m]) - 5',
    'vllm:a > 0.9 and vllm:b > 5',
    'up == 0 or waiting > 50',
    'x > 0 > 1',
    'a > 1 unless on(job) b < 2',
    'x > 5 * 2',
    'x{a="b"} and OR_x > 1 AND y',
  ])('leaves %j without a trailing threshold unchanged', (expr) => {
    expect(stripTrailingComparison(expr)).toBe(expr);
  });
});

describe('escapeRegex', () => {
  it('escapes every RE2 metacharacter and nothing else', () => {
    expect(escapeRegex('a.b+c*d?e(f)g|h[i]j{k}l^m$n\\o')).toBe(
      'a\\.b\\+c\\*d\\?e\\(f\\)g\\|h\\[i\\]j\\{k\\}l\\^m\\$n\\\\o',
    );
    expect(escapeRegex('qwen3-8b_v2/模型')).toBe('qwen3-8b_v2/模型');
  });
});

describe('groupMatchers', () => {
  it('uses equality for one shared value and a sorted alternation for several', () => {
    const sets = [
      { model_name: 'b', job: 'vllm' },
      { model_name: 'a.1', job: 'vllm' },
      { model_name: 'b', job: 'vllm' },
    ];
    expect(groupMatchers(sets, ['model_name', 'job'])).toEqual(['model_name=~"a\\\\.1|b"', 'job="vllm"']);
  });

  it('quotes values after escaping them as regex', () => {
    expect(groupMatchers([{ m: 'x"y' }, { m: 'z' }], ['m'])).toEqual(['m=~"x\\"y|z"']);
  });
});

describe('aggregate', () => {
  it('writes `op by (labels) (inner)`, or `op(inner)` without labels', () => {
    expect(aggregate('sum', ['model_name', 'engine'], 'x')).toBe('sum by (model_name, engine) (x)');
    expect(aggregate('max', [], 'x or y')).toBe('max(x or y)');
  });
});

describe('label and metric names that are not classic identifiers (Prometheus 3 quoted names)', () => {
  it('quotes a name only when it is not [a-zA-Z_][a-zA-Z0-9_]*', () => {
    expect(labelName('model_name')).toBe('model_name');
    expect(labelName('service.name')).toBe('"service.name"');
    expect(labelName('模型')).toBe('"模型"');
    expect(labelName('a"b')).toBe(String.raw`"a\"b"`);
    expect(labelName('9x')).toBe('"9x"');
  });

  it('quotes such names in matchers, groupings and as the metric inside the braces', () => {
    expect(equalityMatchers({ 'service.name': 'vllm', job: 'x' }, ['service.name', 'job'])).toEqual([
      '"service.name"="vllm"',
      'job="x"',
    ]);
    expect(groupMatchers([{ 'k8s.pod.name': 'a' }, { 'k8s.pod.name': 'b' }], ['k8s.pod.name'])).toEqual([
      '"k8s.pod.name"=~"a|b"',
    ]);
    expect(aggregate('sum', ['service.name', 'job'], 'x')).toBe('sum by ("service.name", job) (x)');
    expect(selector('http.server.duration', ['job="a"'])).toBe('{"http.server.duration",job="a"}');
    expect(selector('http.server.duration', [])).toBe('{"http.server.duration"}');
    expect(selector('vllm:num_requests_waiting', ['job="a"'])).toBe('vllm:num_requests_waiting{job="a"}');
  });
});
