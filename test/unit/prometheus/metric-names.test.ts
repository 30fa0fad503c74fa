/** The metric names a rule expression reads, and the labels its alerts keep. */
import { describe, expect, it } from 'vitest';
import { keptLabels, metricNames } from '../../../shared/prometheus/metric-names.js';

describe('metricNames', () => {
  it('finds the selectors, not functions, aggregations, keywords, label names, strings or durations', () => {
    expect(
      metricNames(
        'max by (job, instance) (label_replace(sum by (job) (rate(vllm:request_failure_total{code!~"4..",job="a b"}[5m] offset 1h)), "source", "api", "", "") or on (job) group_left (x) vllm:x_total) > 0.05',
      ),
    ).toEqual(['vllm:request_failure_total', 'vllm:x_total']);
    expect(metricNames('sum(rate(vllm:request_duration_seconds_bucket[5m])) by (le)')).toEqual([
      'vllm:request_duration_seconds_bucket',
    ]);
    expect(metricNames('up{job=~"(?i).*vllm.*"} == 0 unless absent(foo)')).toEqual(['up', 'foo']);
  });

  it('reads {__name__="…"} selectors, and skips quotes and braces inside strings', () => {
    expect(metricNames('{__name__="vllm:num_requests_waiting", job="}{"} > 1')).toEqual(['vllm:num_requests_waiting']);
    expect(metricNames("count_values('v', DCGM_FI_DEV_XID_ERRORS) * 2e3")).toEqual(['DCGM_FI_DEV_XID_ERRORS']);
  });

  it('is linear in the length of an expression (a 100,000-character expression scans at once)', () => {
    const long = `${'a or '.repeat(20_000)}b`;
    expect(metricNames(long)).toEqual(['a', 'b']);
  });
});

describe('keptLabels', () => {
  it('reads the grouping of the aggregation that begins the expression', () => {
    expect(keptLabels('max by (job, instance, namespace, pod) (x) > 0.05')).toEqual([
      'job',
      'instance',
      'namespace',
      'pod',
    ]);
    expect(keptLabels('sum(rate(x[5m])) by (model_name) > 1')).toEqual(['model_name']);
    expect(keptLabels('histogram_quantile(0.95, sum by (le, model_name) (rate(x_bucket[5m]))) > 2')).toEqual([
      'model_name',
    ]);
    expect(keptLabels('histogram_quantile(0.95, sum(rate(x_bucket[5m])) by (le)) > 10')).toEqual([]);
    expect(keptLabels('sum(rate(x[5m])) / sum(rate(y[5m])) > 0.05')).toEqual([]);
  });

  it("is `all` when no aggregation begins it (the series' own labels) or one keeps all but some", () => {
    expect(keptLabels('deriv(DCGM_FI_DEV_FB_USED[30m]) * 3600 > 500')).toBe('all');
    expect(
      keptLabels('up{job=~"(?i).*vllm.*"} == 0 or (up == 0 and on (job, instance) group by (job, instance) (z))'),
    ).toBe('all');
    expect(keptLabels('sum without (engine) (x) > 1')).toBe('all');
  });
});
