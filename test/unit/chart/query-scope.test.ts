/**
 * The chart's range query is the alert's own rule expression (`generatorURL`'s `g0.expr`), which
 * whoever posts to Alertmanager's API writes: every selector in it is narrowed to the alert's
 * identifying labels, and an expression that would still read series it does not name exactly (or
 * that the reader cannot follow) is never charted.
 */
import { describe, expect, it } from 'vitest';
import { chartSpec } from '../../../shared/chart/spec.js';
import type { EnrichedAlert } from '../../../shared/enrich/types.js';
import { scopeSelectors } from '../../../shared/prometheus/scope-selectors.js';
import { fixture } from '../../helpers/fixtures.js';

/** The KV-cache alert (model_name, instance, job …) with `expr` as its rule expression. */
function alertWith(expr: string, labels?: Record<string, string>): EnrichedAlert {
  const alert = fixture('firing-kv-cache-critical').alerts[0]!;
  return {
    ...alert,
    labels: labels ?? alert.labels,
    generatorURL: `http://prometheus:9090/graph?g0.expr=${encodeURIComponent(expr)}&g0.tab=1`,
    enrichment: { status: 'unavailable', kind: 'kv_cache', reason: 'no data' },
  };
}

const SCOPE = 'model_name="qwen3-8b",instance="127.0.0.1:9800",job="vllm"';

describe("the chart of a rule expression reads only the alert's series", () => {
  it.each([
    [
      'sum by (model_name) (vllm:num_requests_waiting) > 50',
      `sum by (model_name) (vllm:num_requests_waiting{${SCOPE}})`,
    ],
    [
      'histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:e2e_request_latency_seconds_bucket{model_name!=""}[5m]))) > 20',
      `histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:e2e_request_latency_seconds_bucket{model_name!="",${SCOPE}}[5m])))`,
    ],
    [
      'vllm:a / on(instance) group_left(gpu) vllm:b offset 5m > 0.9',
      `vllm:a{${SCOPE}} / on(instance) group_left(gpu) vllm:b{${SCOPE}} offset 5m`,
    ],
    ['count({__name__=~".+"}) > 0', 'count({__name__=~".+",instance="127.0.0.1:9800",job="vllm"})'],
    ['absent(vllm:x)', `absent(vllm:x{${SCOPE}})`],
  ])('%s', (expr, query) => {
    expect(chartSpec(alertWith(expr))?.query).toBe(query);
  });

  it('never charts a selector that reads every metric when the alert names none of its series', () => {
    const labels = { alertname: 'Anything', severity: 'critical' };
    expect(chartSpec(alertWith('count({__name__=~".+"}) > 0', labels))).toBeUndefined();
    expect(chartSpec(alertWith('count_over_time({job=~".+"}[1w])', labels))).toBeUndefined();
    // An exactly named metric reads what the rule itself reads at each evaluation.
    expect(chartSpec(alertWith('sum(rate(http_requests_total[5m])) > 5', labels))?.query).toBe(
      'sum(rate(http_requests_total[5m]))',
    );
  });

  it('never charts what the reader cannot follow', () => {
    expect(chartSpec(alertWith('vllm:x{model_name="a > 1'))).toBeUndefined();
    expect(chartSpec(alertWith('vllm:x[5m > 1'))).toBeUndefined();
  });
});

describe('scopeSelectors', () => {
  const add = () => ['job="a"'];
  it.each([
    ['x', 'x{job="a"}'],
    ['x{}', 'x{job="a"}'],
    ['x{b="}"}', 'x{b="}",job="a"}'],
    ['x{b="c",}', 'x{b="c",job="a"}'],
    ["x{b='c'} and on (d) y", `x{b='c',job="a"} and on (d) y{job="a"}`],
    ['SUM BY (x) (y)', 'SUM BY (x) (y{job="a"})'],
    ['sum without (x) (y) * 1e-3 + Inf', 'sum without (x) (y{job="a"}) * 1e-3 + Inf'],
    ['rate(x[5m:1m] @ start())', 'rate(x{job="a"}[5m:1m] @ start())'],
    ['x # a comment naming y\n+ z', 'x{job="a"} # a comment naming y\n+ z{job="a"}'],
    ['label_replace(x, "dst", "$1", "src", "(.*)")', 'label_replace(x{job="a"}, "dst", "$1", "src", "(.*)")'],
  ])('%s', (expr, scoped) => {
    expect(scopeSelectors(expr, add)).toBe(scoped);
  });
});
