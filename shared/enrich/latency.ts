/** Enricher for time-to-first-token alerts: TTFT quantiles and the queue behind them. */
import { selector } from '../prometheus/promql.js';
import { RATE_WINDOW, readSignals, type Enricher, type SignalSpec } from './enricher.js';
import { scopeOf, VLLM_SCOPE_LABELS } from './scope.js';
import { requestsWaiting } from './vllm-signals.js';

const QUANTILES = [
  [0.5, 'p50'],
  [0.95, 'p95'],
  [0.99, 'p99'],
] as const;

/**
 * TTFT p50/p95/p99 in seconds over the last 5 minutes, from the `vllm:time_to_first_token_seconds`
 * histogram (NaN when no request finished its first token in the window), and requests waiting.
 */
export const latencyEnricher: Enricher<'latency'> = {
  kind: 'latency',
  enrich: async (alert, ctx) => {
    const scope = scopeOf(alert, VLLM_SCOPE_LABELS);
    const buckets = `rate(${selector('vllm:time_to_first_token_seconds_bucket', scope)}[${RATE_WINDOW}])`;
    const specs: SignalSpec[] = QUANTILES.map(([q, p]) => ({
      name: `ttft_${p}_seconds`,
      label: `TTFT ${p}`,
      unit: 'seconds',
      query: `histogram_quantile(${q}, sum by (le) (${buckets}))`,
    }));
    return { signals: await readSignals(ctx, [...specs, requestsWaiting(scope)]) };
  },
};
