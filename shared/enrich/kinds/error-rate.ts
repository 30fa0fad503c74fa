/**
 * Enricher for error-rate alerts.
 * vLLM's OpenAI API server exposes prometheus-fastapi-instrumentator's
 * `http_requests_total{handler,method,status}` with `status` grouped as `2xx`/`4xx`/`5xx`; the engine
 * counts finished requests in `vllm:request_success_total{finished_reason}` (`stop`, `length`,
 * `repetition`, `error` in later V1 builds; `abort` exists at 0 on V1 but is never incremented).
 * vLLM main (after 0.30) counts the API server's error answers in
 * `vllm:request_failure_total{model_name, stage, code}`: every HTTP status ≥ 400 before generation
 * (`stage="input_processing"`, a client's over-long prompt as much as a crash) and a stream broken
 * after it started (`stage="streaming"`, code 500). Its 5xx are failures; its 4xx are rejected input.
 * @see https://github.com/trallnag/prometheus-fastapi-instrumentator
 */
import { aggregate, selector } from '../../prometheus/promql.js';
import { RATE_WINDOW, type Enricher, type QueryScope, type SignalDef } from '../enricher.js';
import { GPU_MEMORY_USED_RATIO, GPU_XID, readGpuSignals, type GpuSignalDef } from '../signals/dcgm.js';
import { readEngineSignals } from '../signals/profiles.js';
import { ABORTED_RATIO } from '../signals/sglang.js';
import { ENGINE_SERIES, HTTP_SCOPE_LABELS, TARGET_SCOPE_LABELS, VLLM_SCOPE_LABELS } from '../signals/scope.js';

const sumRate = (metric: string, extra: readonly string[], s: QueryScope) =>
  aggregate('sum', s.by, `rate(${selector(metric, [...extra, ...s.matchers])}[${RATE_WINDOW}])`);
/** {@link sumRate} of an engine metric: the engines' own series ({@link ENGINE_SERIES}). */
const engineRate = (metric: string, extra: readonly string[], s: QueryScope) =>
  aggregate('sum', s.by, `rate(${selector(metric, [...extra, ...s.matchers, ENGINE_SERIES])}[${RATE_WINDOW}])`);

/**
 * A share of a total (ratio 0–1): `part` is 0 while its series do not exist yet but the total's do
 * (`or 0 * total`), and NaN when there was no traffic at all (0/0).
 */
function share(
  { name, label, scopeLabels }: Pick<SignalDef, 'name' | 'label' | 'scopeLabels'>,
  metric: string,
  part: string,
): SignalDef {
  return {
    name,
    label,
    unit: 'ratio',
    scopeLabels,
    nanMeans: 'no_requests',
    expr: (s) => `(${sumRate(metric, [part], s)} or 0 * ${sumRate(metric, [], s)}) / ${sumRate(metric, [], s)}`,
  };
}

/** The API server's failures: 5xx, and any counted without a code; 4xx are {@link REJECTED_CODES}. */
const FAILED_CODES = 'code!~"4.."';
/** The API server's rejections of a request (HTTP 4xx): the input was wrong, not the server. */
const REJECTED_CODES = 'code=~"4.."';

/**
 * Requests that failed per second, from the two counters of the one fact: the API server's failures
 * (`vllm:request_failure_total`, 5xx) and the engine's (`request_success_total{finished_reason="error"}`).
 * A request can be in both (an engine error breaking a stream), so they are not added: the larger
 * of the two is read, each kept apart (`source`) so that a series of one at rate 0 (a single old 400
 * created it) can never hide the other's failures, as an `or` of the two would. Neither series: no
 * data — never 0, since a fleet without either counter may still fail.
 */
const failedRate = (s: QueryScope) =>
  aggregate(
    'max',
    s.by,
    `label_replace(${engineRate('vllm:request_failure_total', [FAILED_CODES], s)}, "source", "api", "", "") or label_replace(${engineRate('vllm:request_success_total', ['finished_reason="error"'], s)}, "source", "engine", "", "")`,
  );

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
  expr: (s) =>
    `(${failedRate(s)}) / (${engineRate('vllm:request_success_total', ['finished_reason!~"abort|error"'], s)} + (${failedRate(s)}))`,
};

/** Requests the API server rejected per second (`vllm:request_failure_total`, HTTP 4xx; vLLM main after 0.30). */
export const REJECTED_PER_SECOND: SignalDef = {
  name: 'rejected_per_second',
  label: 'Rejected (4xx, vLLM)',
  unit: 'per_second',
  scopeLabels: VLLM_SCOPE_LABELS,
  expr: (s) => engineRate('vllm:request_failure_total', [REJECTED_CODES], s),
};

/**
 * Rejected share of every request the server answered (rejected, finished or failed), ratio 0–1;
 * no data without the API server's failure counter; NaN without traffic.
 */
export const REJECTED_RATIO: SignalDef = {
  name: 'rejected_ratio',
  label: 'Rejected share (4xx, vLLM)',
  unit: 'ratio',
  scopeLabels: VLLM_SCOPE_LABELS,
  nanMeans: 'no_requests',
  expr: (s) => {
    const rejected = engineRate('vllm:request_failure_total', [REJECTED_CODES], s);
    const answered = `${engineRate('vllm:request_success_total', [NOT_ABORT], s)} + ${engineRate('vllm:request_failure_total', [], s)}`;
    return `${rejected} / (${answered})`;
  },
};

/** Finished requests per second by `finished_reason` (`stop`, `length`, `error`, …; never the false-zero `abort`). */
export const FINISHED_PER_SECOND: SignalDef = {
  name: 'finished_per_second',
  label: 'Finished',
  unit: 'per_second',
  scopeLabels: VLLM_SCOPE_LABELS,
  breakdown: 'finished_reason',
  expr: (s) => engineRate('vllm:request_success_total', [NOT_ABORT], s),
};

/**
 * The share of its GPU's memory the server was configured to take (`--gpu-memory-utilization`),
 * ratio 0–1: vLLM preallocates it at start and holds it for its whole life, so memory "used" at
 * that share is its steady state, not exhaustion. Read from the `gpu_memory_utilization` label of
 * `vllm:cache_config_info` (every version; a target label set, no `model_name`); the largest of
 * the alert's servers.
 */
export const GPU_MEMORY_CONFIGURED_RATIO: SignalDef = {
  name: 'gpu_memory_configured_ratio',
  label: 'GPU memory share configured',
  unit: 'ratio',
  scopeLabels: TARGET_SCOPE_LABELS,
  valueLabel: 'gpu_memory_utilization',
  expr: (s) => aggregate('max', [...s.by, 'gpu_memory_utilization'], selector('vllm:cache_config_info', s.matchers)),
};

/**
 * The HTTP 5xx share (vLLM ≥ 0.8.3 under V1 only: V0 servers have no HTTP counters, so "no data"
 * there), the engine's own failure evidence (failed/s and share), the length-capped share of
 * finished requests, and finished requests/s by `finished_reason`. No aborted share: vLLM produces
 * no evidence of client aborts.
 */
export const ERROR_RATE_SIGNALS: readonly SignalDef[] = [
  share(
    { name: 'http_5xx_ratio', label: 'HTTP 5xx share', scopeLabels: HTTP_SCOPE_LABELS },
    'http_requests_total',
    'status="5xx"',
  ),
  FAILED_RATIO,
  FAILED_PER_SECOND,
  FINISHED_PER_SECOND,
  // Rejected input (validation, prompts over the context length): answered 4xx before the engine sees it.
  share(
    { name: 'http_4xx_ratio', label: 'HTTP 4xx share', scopeLabels: HTTP_SCOPE_LABELS },
    'http_requests_total',
    'status="4xx"',
  ),
  REJECTED_PER_SECOND,
  REJECTED_RATIO,
  GPU_MEMORY_CONFIGURED_RATIO,
  // Finished at the length limit (prompt + output reached --max-model-len or max_tokens): counted by every
  // version, so a 0 here is real; abort (always 0) adds nothing to the total.
  share(
    { name: 'length_capped_ratio', label: 'Length-capped share', scopeLabels: VLLM_SCOPE_LABELS },
    'vllm:request_success_total',
    'finished_reason="length"',
  ),
];

/**
 * The last XID error code of the server's GPUs (DCGM matched to the server): a GPU fault behind
 * failures; and the fullest GPU's memory used (ratio): out of memory behind failures.
 */
export const ERROR_RATE_GPU_SIGNALS: readonly GpuSignalDef[] = [GPU_XID, GPU_MEMORY_USED_RATIO];

export const errorRateEnricher: Enricher<'error_rate'> = {
  kind: 'error_rate',
  enrich: async (alert, ctx) => {
    const [vllm, gpu] = await Promise.all([
      readEngineSignals(ctx, alert, ERROR_RATE_SIGNALS, { sglang: [ABORTED_RATIO] }),
      readGpuSignals(ctx, alert, ERROR_RATE_GPU_SIGNALS),
    ]);
    return { signals: [...vllm, ...gpu] };
  },
};
