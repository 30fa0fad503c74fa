/**
 * Signal definitions on vLLM engine metrics, shared by the enrichers (a group holding, say, a
 * queue and a latency alert for one model asks Prometheus once per signal and kind).
 *
 * Both engine generations are read: V1 renamed `vllm:gpu_cache_usage_perc` to
 * `vllm:kv_cache_usage_perc` and `vllm:time_per_output_token_seconds` to
 * `vllm:inter_token_latency_seconds`, and put an `engine` label on every series. Queries join the
 * two names with `or` (V1's wins where both exist); `engine` is an identifying label when the alert
 * carries it. A metric neither generation exposes gives no series: "no data", never 0. Every
 * selector keeps the engines' own series ({@link ENGINE_SERIES}), never a router's copies.
 * @see https://docs.vllm.ai/en/latest/design/metrics.html
 */
import { aggregate, selector } from '../../prometheus/promql.js';
import { RATE_WINDOW, type QueryScope, type SignalDef, type SignalSplit } from '../enricher.js';
import { ENGINE_SERIES, VLLM_SCOPE_LABELS } from './scope.js';

const sel = (metric: string, scope: QueryScope) => selector(metric, [...scope.matchers, ENGINE_SERIES]);
const rate = (metric: string, scope: QueryScope) => `rate(${sel(metric, scope)}[${RATE_WINDOW}])`;
const sumRate = (metric: string, scope: QueryScope) => aggregate('sum', scope.by, rate(metric, scope));

/** A gauge summed over the alert's series (an engine's own series: {@link ENGINE_SERIES}). */
export function gauge(name: string, label: string, metric: string): SignalDef {
  return {
    name,
    label,
    unit: 'count',
    scopeLabels: VLLM_SCOPE_LABELS,
    expr: (s) => aggregate('sum', s.by, sel(metric, s)),
  };
}

/** `vllm:num_requests_waiting`: requests queued, not yet scheduled (count). */
export const REQUESTS_WAITING = gauge('requests_waiting', 'Requests waiting', 'vllm:num_requests_waiting');

/** `vllm:num_requests_running`: requests in the running batch (count). */
export const REQUESTS_RUNNING = gauge('requests_running', 'Requests running', 'vllm:num_requests_running');

/** A reason of `vllm:num_requests_waiting_by_reason` (vLLM main after 0.30), summed over the alert's series. */
function waitingFor(name: string, label: string, reason: 'capacity' | 'deferred'): SignalDef {
  return {
    name,
    label,
    unit: 'count',
    scopeLabels: VLLM_SCOPE_LABELS,
    expr: (s) =>
      aggregate(
        'sum',
        s.by,
        selector('vllm:num_requests_waiting_by_reason', [...s.matchers, ENGINE_SERIES, `reason="${reason}"`]),
      ),
  };
}

/**
 * Requests waiting for room in the running batch (count): the capacity queue, what more replicas
 * or a larger batch shorten. No data before the split by reason existed.
 */
export const REQUESTS_WAITING_CAPACITY = waitingFor('requests_waiting_capacity', 'Waiting for capacity', 'capacity');

/**
 * Requests waiting, deferred (count): counted in `vllm:num_requests_waiting` but waiting for their KV
 * cache to arrive from a prefill instance (disaggregated serving) or for a LoRA adapter's turn, not
 * for capacity. No data before the split by reason existed.
 */
export const REQUESTS_DEFERRED = waitingFor('requests_deferred', 'Waiting, deferred (KV transfer, LoRA)', 'deferred');

/** KV-cache usage, ratio 0–1 (despite "perc" both generations' gauges are ratios); the fullest engine. */
export const KV_CACHE_USAGE: SignalDef = {
  name: 'kv_cache_usage_ratio',
  label: 'KV cache usage',
  unit: 'ratio',
  scopeLabels: VLLM_SCOPE_LABELS,
  expr: (s) =>
    aggregate('max', s.by, `${sel('vllm:kv_cache_usage_perc', s)} or ${sel('vllm:gpu_cache_usage_perc', s)}`),
};

/** A counter's rate over the rate window, summed over the alert's series (an engine's own). */
export function perSecond(name: string, label: string, metric: string): SignalDef {
  return { name, label, unit: 'per_second', scopeLabels: VLLM_SCOPE_LABELS, expr: (s) => sumRate(metric, s) };
}

/** Preemptions per second over the rate window (`vllm:num_preemptions_total`). */
export const PREEMPTIONS_PER_SECOND = perSecond('preemptions_per_second', 'Preemptions', 'vllm:num_preemptions_total');

/** Prompt (prefill) tokens per second (`vllm:prompt_tokens_total`). */
export const PROMPT_TOKENS_PER_SECOND = perSecond(
  'prompt_tokens_per_second',
  'Prompt tokens',
  'vllm:prompt_tokens_total',
);

/** Generated tokens per second (`vllm:generation_tokens_total`). */
export const GENERATION_TOKENS_PER_SECOND = perSecond(
  'generation_tokens_per_second',
  'Generation tokens',
  'vllm:generation_tokens_total',
);

/** Mean prompt length of the requests finished in the rate window, tokens (`vllm:request_prompt_tokens` histogram). */
export const PROMPT_TOKENS_MEAN: SignalDef = {
  name: 'prompt_tokens_mean',
  label: 'Mean prompt (tokens)',
  unit: 'count',
  scopeLabels: VLLM_SCOPE_LABELS,
  nanMeans: 'no_requests',
  expr: (s) => `${sumRate('vllm:request_prompt_tokens_sum', s)} / ${sumRate('vllm:request_prompt_tokens_count', s)}`,
};

/**
 * Keeps the engine generations apart: V0 and V1 declare different bucket sets, so a quantile of
 * their summed buckets (a fleet mid-migration) is distorted. The generation is told by the `engine`
 * label, which V1 puts on every series (0.10 does; 0.8.0/0.8.1 do not, and read as `v0` here: their
 * request-latency buckets stop at 60 s like V0's, while 0.10's go on to 7,680 s).
 */
export const ENGINE_GENERATION: SignalSplit = {
  label: 'engine_generation',
  labels: { v0: 'V0 engine', v1: 'V1 engine' },
  tag: (expr) =>
    `label_replace(label_replace(${expr}, "engine_generation", "v0", "engine", ""), "engine_generation", "v1", "engine", ".+")`,
};

/**
 * A quantile of a latency histogram over the rate window, seconds, per engine generation
 * ({@link ENGINE_GENERATION}). NaN when no request was observed in the window; the top finite
 * bucket when the quantile lies beyond it.
 * @param buckets the `…_bucket` metric, V1's name first when the generations differ
 */
export function latencyQuantile(name: string, label: string, q: number, buckets: readonly string[]): SignalDef {
  return {
    name,
    label,
    unit: 'seconds',
    scopeLabels: VLLM_SCOPE_LABELS,
    nanMeans: 'no_requests',
    histogram: buckets,
    split: ENGINE_GENERATION,
    expr: (s) =>
      `histogram_quantile(${q}, ${aggregate('sum', ['le', ENGINE_GENERATION.label, ...s.by], ENGINE_GENERATION.tag(buckets.map((b) => rate(b, s)).join(' or ')))})`,
  };
}

/**
 * The mean of a histogram over the rate window (`rate(_sum) / rate(_count)`), in its unit: unlike a
 * quantile it is exact whatever the bucket sets, so it is summed across generations. NaN when no
 * request was observed. `names` are the histogram's base names, V1's first (`or`: V1's wins).
 */
export function histogramMean(
  name: string,
  label: string,
  unit: SignalDef['unit'],
  names: readonly string[],
): SignalDef {
  const part = (suffix: string, s: QueryScope) => names.map((n) => sumRate(`${n}${suffix}`, s)).join(' or ');
  return {
    name,
    label,
    unit,
    scopeLabels: VLLM_SCOPE_LABELS,
    nanMeans: 'no_requests',
    expr: (s) => `(${part('_sum', s)}) / (${part('_count', s)})`,
  };
}

/** TTFT histogram (same name in both generations). */
export const TTFT_BUCKETS = ['vllm:time_to_first_token_seconds_bucket'] as const;

/** Inter-token latency histogram: V1's name, then V0's. */
export const ITL_BUCKETS = [
  'vllm:inter_token_latency_seconds_bucket',
  'vllm:time_per_output_token_seconds_bucket',
] as const;

/** End-to-end request latency histogram (the same name in every version; `vllm:request_duration_seconds` never was vLLM's). */
export const E2E_BUCKETS = ['vllm:e2e_request_latency_seconds_bucket'] as const;

/** End-to-end latency p50, seconds, per engine generation. */
export const E2E_P50 = latencyQuantile('e2e_p50_seconds', 'End-to-end latency p50', 0.5, E2E_BUCKETS);

/** End-to-end latency p99, seconds, per engine generation: with p50, the tail an occasional slow request makes. */
export const E2E_P99 = latencyQuantile('e2e_p99_seconds', 'End-to-end latency p99', 0.99, E2E_BUCKETS);

/** Time per output token p95, seconds (V1: inter-token latency), per engine generation. */
export const ITL_P95 = latencyQuantile('itl_p95_seconds', 'Inter-token latency p95', 0.95, ITL_BUCKETS);

/** Mean time per output token, seconds (V1: inter-token latency), both generations. */
export const TPOT_MEAN = histogramMean('tpot_mean_seconds', 'Time per output token (mean)', 'seconds', [
  'vllm:inter_token_latency_seconds',
  'vllm:time_per_output_token_seconds',
]);

/** Mean time a finished request waited in the queue, seconds (`vllm:request_queue_time_seconds`). */
export const QUEUE_TIME_MEAN = histogramMean('queue_time_mean_seconds', 'Queue time (mean)', 'seconds', [
  'vllm:request_queue_time_seconds',
]);

/** Mean time a finished request spent in prefill, seconds (`vllm:request_prefill_time_seconds`). */
export const PREFILL_TIME_MEAN = histogramMean('prefill_time_mean_seconds', 'Prefill time (mean)', 'seconds', [
  'vllm:request_prefill_time_seconds',
]);

/** Mean time a finished request spent in decode, seconds (`vllm:request_decode_time_seconds`). */
export const DECODE_TIME_MEAN = histogramMean('decode_time_mean_seconds', 'Decode time (mean)', 'seconds', [
  'vllm:request_decode_time_seconds',
]);

/**
 * Prefix-cache hit rate over the rate window, ratio 0–1. Names differ by version: V1 ≥ 0.10
 * `prefix_cache_hits_total / prefix_cache_queries_total`, V1 before it `gpu_prefix_cache_hits_total
 * / gpu_prefix_cache_queries_total` (both counted in tokens), V0 the gauge `gpu_prefix_cache_hit_rate`
 * (already a ratio, the mean over the alert's series). NaN when no token was looked up.
 * V0 sets the gauge to -1 where prefix caching is off (its default): "not supported or disabled"
 * (vllm/core/interfaces.py, `get_prefix_cache_hit_rate`). A ratio cannot be negative, so the query
 * drops negative samples before averaging (`>= 0`): such a server reads "no data" and never pulls a
 * fleet's mean down.
 */
export const PREFIX_CACHE_HIT_RATIO: SignalDef = {
  name: 'prefix_cache_hit_ratio',
  label: 'Prefix-cache hit rate',
  unit: 'ratio',
  scopeLabels: VLLM_SCOPE_LABELS,
  nanMeans: 'no_requests',
  expr: (s) =>
    [
      `${sumRate('vllm:prefix_cache_hits_total', s)} / ${sumRate('vllm:prefix_cache_queries_total', s)}`,
      `${sumRate('vllm:gpu_prefix_cache_hits_total', s)} / ${sumRate('vllm:gpu_prefix_cache_queries_total', s)}`,
      aggregate('avg', s.by, `${sel('vllm:gpu_prefix_cache_hit_rate', s)} >= 0`),
    ].join(' or '),
};
