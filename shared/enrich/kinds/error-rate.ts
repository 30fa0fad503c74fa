/**
 * Enricher for error-rate alerts.
 * vLLM's OpenAI API server exposes prometheus-fastapi-instrumentator's
 * `http_requests_total{handler,method,status}` with `status` grouped as `2xx`/`4xx`/`5xx`; the engine
 * counts finished requests in `vllm:request_success_total{finished_reason}` (`stop`, `length`,
 * `error` in later V1 builds; `abort` exists at 0 on V1 but is never incremented).
 * @see https://github.com/trallnag/prometheus-fastapi-instrumentator
 */
import { aggregate, selector } from '../../prometheus/promql.js';
import { RATE_WINDOW, type Enricher, type QueryScope, type SignalDef } from '../enricher.js';
import { GPU_MEMORY_USED_RATIO, GPU_XID, readGpuSignals, type GpuSignalDef } from '../signals/dcgm.js';
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

/**
 * Requests the engine failed per second: `vllm:request_failure_total` where a build counts failures
 * apart, else `request_success_total{finished_reason="error"}` (V1 builds that finish a request as an
 * error). Neither series: no data — never 0, since a fleet without either counter may still fail.
 */
const failedRate = (s: QueryScope) => `${sumRate('vllm:request_failure_total', [], s)} or ${sumRate('vllm:request_success_total', ['finished_reason="error"'], s)}`;

/**
 * `finished_reason="abort"` is left out everywhere: V1 creates that series at 0 and no vLLM version
 * increments it (aborted requests are not counted as finished), so it would read as a false 0.
 */
const NOT_ABORT = 'finished_reason!="abort"';

/** Requests the engine failed per second (see {@link failedRate}). */
export const FAILED_PER_SECOND: SignalDef = {
  name: 'failed_per_second',
  label: 'Failed (vLLM)',
  unit: 'per_second',
  scopeLabels: VLLM_SCOPE_LABELS,
  expr: (s) => failedRate(s),
};

/** Failed share of the requests the engine finished or failed, ratio 0–1; no data without a failure counter; NaN without traffic. */
export const FAILED_RATIO: SignalDef = {
  name: 'failed_ratio',
  label: 'Failed share (vLLM)',
  unit: 'ratio',
  scopeLabels: VLLM_SCOPE_LABELS,
  nanMeans: 'no_requests',
  expr: (s) => `(${failedRate(s)}) / (${sumRate('vllm:request_success_total', ['finished_reason!~"abort|error"'], s)} + (${failedRate(s)}))`,
};

/** Finished requests per second by `finished_reason` (`stop`, `length`, `error`, …; never the false-zero `abort`). */
export const FINISHED_PER_SECOND: SignalDef = {
  name: 'finished_per_second',
  label: 'Finished',
  unit: 'per_second',
  scopeLabels: VLLM_SCOPE_LABELS,
  breakdown: 'finished_reason',
  expr: (s) => sumRate('vllm:request_success_total', [NOT_ABORT], s),
};

/**
 * The HTTP 5xx share (vLLM ≥ 0.8.3 under V1 only: V0 servers have no HTTP counters, so "no data"
 * there), the engine's own failure evidence (failed/s and share), the length-capped share of
 * finished requests, and finished requests/s by `finished_reason`. No aborted share: vLLM produces
 * no evidence of client aborts.
 */
export const ERROR_RATE_SIGNALS: readonly SignalDef[] = [
  share('http_5xx_ratio', 'HTTP 5xx share', 'http_requests_total', 'status="5xx"', HTTP_SCOPE_LABELS),
  FAILED_RATIO,
  FAILED_PER_SECOND,
  FINISHED_PER_SECOND,
  // Rejected input (validation, prompts over the context length): answered 4xx before the engine sees it.
  share('http_4xx_ratio', 'HTTP 4xx share', 'http_requests_total', 'status="4xx"', HTTP_SCOPE_LABELS),
  // Finished at the length limit (prompt + output reached --max-model-len or max_tokens): counted by every
  // version, so a 0 here is real; abort (always 0) adds nothing to the total.
  share('length_capped_ratio', 'Length-capped share', 'vllm:request_success_total', 'finished_reason="length"', VLLM_SCOPE_LABELS),
];

/**
 * The last XID error code of the server's GPUs (DCGM matched to the server): a GPU fault behind
 * failures; and the fullest GPU's memory used (ratio): out of memory behind failures.
 */
export const ERROR_RATE_GPU_SIGNALS: readonly GpuSignalDef[] = [GPU_XID, GPU_MEMORY_USED_RATIO];

export const errorRateEnricher: Enricher<'error_rate'> = {
  kind: 'error_rate',
  enrich: async (alert, ctx) => {
    const [vllm, gpu] = await Promise.all([readSignals(ctx, alert, ERROR_RATE_SIGNALS), readGpuSignals(ctx, alert, ERROR_RATE_GPU_SIGNALS)]);
    return { signals: [...vllm, ...gpu] };
  },
};
