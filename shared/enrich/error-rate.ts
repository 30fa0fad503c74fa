/**
 * Enricher for error-rate alerts.
 * vLLM's OpenAI API server exposes prometheus-fastapi-instrumentator's
 * `http_requests_total{handler,method,status}` with `status` grouped as `2xx`/`4xx`/`5xx`.
 * @see https://github.com/trallnag/prometheus-fastapi-instrumentator
 */
import { selector } from '../prometheus/promql.js';
import { RATE_WINDOW, readSignals, type Enricher } from './enricher.js';
import { HTTP_SCOPE_LABELS, scopeOf, VLLM_SCOPE_LABELS } from './scope.js';

/**
 * The 5xx share of HTTP requests over the last 5 minutes (ratio 0–1; `or vector(0)` makes "no 5xx
 * series yet" read 0 while "no traffic series at all" stays no data), and aborted requests per second
 * from `vllm:request_success_total{finished_reason="abort"}` (0 when the engine reports finished
 * requests but none aborted).
 */
export const errorRateEnricher: Enricher<'error_rate'> = {
  kind: 'error_rate',
  enrich: async (alert, ctx) => {
    const http = scopeOf(alert, HTTP_SCOPE_LABELS);
    const vllm = scopeOf(alert, VLLM_SCOPE_LABELS);
    const errors = `sum(rate(${selector('http_requests_total', ['status="5xx"', ...http])}[${RATE_WINDOW}]))`;
    const all = `sum(rate(${selector('http_requests_total', http)}[${RATE_WINDOW}]))`;
    const aborted = `sum(rate(${selector('vllm:request_success_total', ['finished_reason="abort"', ...vllm])}[${RATE_WINDOW}]))`;
    const finished = `sum(rate(${selector('vllm:request_success_total', vllm)}[${RATE_WINDOW}]))`;
    const signals = await readSignals(ctx, [
      { name: 'http_5xx_ratio', label: 'HTTP 5xx share', unit: 'ratio', query: `(${errors} or vector(0)) / ${all}` },
      { name: 'aborted_requests_per_second', label: 'Aborted requests', unit: 'per_second', query: `${aborted} or (0 * ${finished})` },
    ]);
    return { signals };
  },
};
