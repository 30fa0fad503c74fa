/**
 * Signal definitions on vLLM engine metrics, shared by the enrichers (a group holding, say, a
 * queue and a latency alert for one model asks Prometheus once per signal and kind).
 *
 * Both engine generations are read: V1 renamed `vllm:gpu_cache_usage_perc` to
 * `vllm:kv_cache_usage_perc` and `vllm:time_per_output_token_seconds` to
 * `vllm:inter_token_latency_seconds`, and put an `engine` label on every series. Queries join the
 * two names with `or` (V1's wins where both exist); `engine` is an identifying label when the alert
 * carries it. A metric neither generation exposes gives no series: "no data", never 0.
 * @see https://docs.vllm.ai/en/latest/design/metrics.html
 */
import { aggregate, selector } from '../../prometheus/promql.js';
import { RATE_WINDOW, type QueryScope, type SignalDef } from '../enricher.js';
import { VLLM_SCOPE_LABELS } from './scope.js';

const sel = (metric: string, scope: QueryScope) => selector(metric, scope.matchers);
const rate = (metric: string, scope: QueryScope) => `rate(${sel(metric, scope)}[${RATE_WINDOW}])`;
const sumRate = (metric: string, scope: QueryScope) => aggregate('sum', scope.by, rate(metric, scope));

/** A gauge summed over the alert's series. */
function gauge(name: string, label: string, metric: string): SignalDef {
  return { name, label, unit: 'count', scopeLabels: VLLM_SCOPE_LABELS, expr: (s) => aggregate('sum', s.by, sel(metric, s)) };
}

/** `vllm:num_requests_waiting`: requests queued, not yet scheduled (count). */
export const REQUESTS_WAITING = gauge('requests_waiting', 'Requests waiting', 'vllm:num_requests_waiting');

/** `vllm:num_requests_running`: requests in the running batch (count). */
export const REQUESTS_RUNNING = gauge('requests_running', 'Requests running', 'vllm:num_requests_running');

/** KV-cache usage, ratio 0–1 (despite "perc" both generations' gauges are ratios); the fullest engine. */
export const KV_CACHE_USAGE: SignalDef = {
  name: 'kv_cache_usage_ratio',
  label: 'KV cache usage',
  unit: 'ratio',
  scopeLabels: VLLM_SCOPE_LABELS,
  expr: (s) => aggregate('max', s.by, `${sel('vllm:kv_cache_usage_perc', s)} or ${sel('vllm:gpu_cache_usage_perc', s)}`),
};

/** Preemptions per second over the rate window (`vllm:num_preemptions_total`). */
export const PREEMPTIONS_PER_SECOND: SignalDef = {
  name: 'preemptions_per_second',
  label: 'Preemptions',
  unit: 'per_second',
  scopeLabels: VLLM_SCOPE_LABELS,
  expr: (s) => sumRate('vllm:num_preemptions_total', s),
};

/** Prompt (prefill) tokens per second (`vllm:prompt_tokens_total`). */
export const PROMPT_TOKENS_PER_SECOND: SignalDef = {
  name: 'prompt_tokens_per_second',
  label: 'Prompt tokens',
  unit: 'per_second',
  scopeLabels: VLLM_SCOPE_LABELS,
  expr: (s) => sumRate('vllm:prompt_tokens_total', s),
};

/** Generated tokens per second (`vllm:generation_tokens_total`). */
export const GENERATION_TOKENS_PER_SECOND: SignalDef = {
  name: 'generation_tokens_per_second',
  label: 'Generation tokens',
  unit: 'per_second',
  scopeLabels: VLLM_SCOPE_LABELS,
  expr: (s) => sumRate('vllm:generation_tokens_total', s),
};

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
 * A quantile of a latency histogram over the rate window, seconds. NaN when no request was observed
 * in the window; the top finite bucket when the quantile lies beyond it.
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
    expr: (s) => `histogram_quantile(${q}, ${aggregate('sum', ['le', ...s.by], buckets.map((b) => rate(b, s)).join(' or '))})`,
  };
}

/** TTFT histogram (same name in both generations). */
export const TTFT_BUCKETS = ['vllm:time_to_first_token_seconds_bucket'] as const;

/** Inter-token latency histogram: V1's name, then V0's. */
export const ITL_BUCKETS = ['vllm:inter_token_latency_seconds_bucket', 'vllm:time_per_output_token_seconds_bucket'] as const;
