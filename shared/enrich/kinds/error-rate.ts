/**
 * Enricher for error-rate alerts.
 * vLLM's OpenAI API server exposes prometheus-fastapi-instrumentator's
 * `http_requests_total{handler,method,status}` with `status` grouped as `2xx`/`4xx`/`5xx`; the engine
 * counts finished requests in `vllm:request_success_total{finished_reason}` (`stop`, `length`,
 * `abort`, …).
 * @see https://github.com/trallnag/prometheus-fastapi-instrumentator
 */
import { aggregate, selector } from '../../prometheus/promql.js';
import { RATE_WINDOW, type Enricher, type QueryScope, type SignalDef } from '../enricher.js';
import { readSignals } from '../signals/read.js';
import { HTTP_SCOPE_LABELS, VLLM_SCOPE_LABELS } from '../signals/scope.js';

const sumRate = (metric: string, extra: readonly string[], s: QueryScope) =>
  aggregate('sum', s.by, `rate(${selector(metric, [...extra, ...s.matchers])}[${RATE_WINDOW}])`);

/**
 * A share of a total (ratio 0–1): `part` is 0 while its series do not exist yet but the total's do
 * (`or 0 * total`), and NaN when there was no traffic at all (0/0).
 */
function share(name: string, label: string, metric: string, part: string, scopeLabels: readonly string[]): SignalDef {
  return {
    name,
    label,
    unit: 'ratio',
    scopeLabels,
    nanMeans: 'no_requests',
    expr: (s) => `(${sumRate(metric, [part], s)} or 0 * ${sumRate(metric, [], s)}) / ${sumRate(metric, [], s)}`,
  };
}

/** The failure ratio (5xx share of HTTP requests), the aborted share of finished requests, and finished requests/s by `finished_reason`. */
export const ERROR_RATE_SIGNALS: readonly SignalDef[] = [
  share('http_5xx_ratio', 'HTTP 5xx share', 'http_requests_total', 'status="5xx"', HTTP_SCOPE_LABELS),
  share('aborted_ratio', 'Aborted share', 'vllm:request_success_total', 'finished_reason="abort"', VLLM_SCOPE_LABELS),
  {
    name: 'finished_per_second',
    label: 'Finished',
    unit: 'per_second',
    scopeLabels: VLLM_SCOPE_LABELS,
    breakdown: 'finished_reason',
    expr: (s) => sumRate('vllm:request_success_total', [], s),
  },
];

export const errorRateEnricher: Enricher<'error_rate'> = {
  kind: 'error_rate',
  enrich: async (alert, ctx) => ({ signals: await readSignals(ctx, alert, ERROR_RATE_SIGNALS) }),
};
