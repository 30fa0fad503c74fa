/**
 * SGLang's signals, under the names vLLM's have (so the likely-cause rules read them alike), from
 * the metrics SGLang 0.5 exports with `--enable-metrics` (its scheduler and tokenizer metrics
 * collectors; labels `model_name` and the rank labels). What SGLang has no metric for is absent here
 * and reads "not exposed by SGLang" (`profiles.ts`), never 0.
 * - queue: `sglang:num_queue_reqs`, running: `sglang:num_running_reqs`;
 * - KV cache: `sglang:token_usage`, the KV pool's used share (ratio 0–1);
 * - preemptions: `sglang:num_retracted_requests_total`, requests retracted to free KV cache (created
 *   at the first retraction: before it, "no data", so no rule takes it for 0);
 * - tokens/s: `sglang:prompt_tokens_total`, `sglang:generation_tokens_total`;
 * - latency histograms: `sglang:time_to_first_token_seconds`, `sglang:inter_token_latency_seconds`,
 *   `sglang:e2e_request_latency_seconds`, `sglang:queue_time_seconds`;
 * - prefix cache: `sglang:cache_hit_rate` (RadixAttention's hit rate, ratio 0–1);
 * - aborted requests: `sglang:num_aborted_requests_total` of `sglang:num_requests_total` (SGLang
 *   counts a client's abort, which vLLM never does).
 */
import { aggregate, selector } from '../../prometheus/promql.js';
import { RATE_WINDOW, type QueryScope, type SignalDef } from '../enricher.js';
import { ENGINE_SERIES, VLLM_SCOPE_LABELS } from './scope.js';
import { gauge, histogramMean, latencyQuantile, perSecond } from './vllm.js';

const sumRate = (metric: string, s: QueryScope) =>
  aggregate('sum', s.by, `rate(${selector(metric, [...s.matchers, ENGINE_SERIES])}[${RATE_WINDOW}])`);

const TTFT = ['sglang:time_to_first_token_seconds_bucket'] as const;
const ITL = ['sglang:inter_token_latency_seconds_bucket'] as const;
const E2E = ['sglang:e2e_request_latency_seconds_bucket'] as const;

/** The KV pool's used share (ratio 0–1), the fullest of the alert's series. */
const KV_CACHE_USAGE: SignalDef = {
  name: 'kv_cache_usage_ratio',
  label: 'KV cache usage',
  unit: 'ratio',
  scopeLabels: VLLM_SCOPE_LABELS,
  expr: (s) => aggregate('max', s.by, selector('sglang:token_usage', [...s.matchers, ENGINE_SERIES])),
};

/** RadixAttention's prefix-cache hit rate (ratio 0–1), the mean of the alert's series. */
const PREFIX_CACHE_HIT_RATIO: SignalDef = {
  name: 'prefix_cache_hit_ratio',
  label: 'Prefix-cache hit rate',
  unit: 'ratio',
  scopeLabels: VLLM_SCOPE_LABELS,
  expr: (s) => aggregate('avg', s.by, selector('sglang:cache_hit_rate', [...s.matchers, ENGINE_SERIES])),
};

/**
 * Requests aborted (by the client: a cancelled stream, a time-out) per request received, ratio 0–1;
 * NaN without traffic.
 */
export const ABORTED_RATIO: SignalDef = {
  name: 'aborted_ratio',
  label: 'Aborted share',
  unit: 'ratio',
  scopeLabels: VLLM_SCOPE_LABELS,
  nanMeans: 'no_requests',
  expr: (s) => `${sumRate('sglang:num_aborted_requests_total', s)} / ${sumRate('sglang:num_requests_total', s)}`,
};

/** SGLang's signals by the name of the vLLM signal they stand for. */
export const SGLANG_SIGNALS: ReadonlyMap<string, SignalDef> = new Map(
  [
    latencyQuantile('ttft_p50_seconds', 'TTFT p50', 0.5, TTFT),
    latencyQuantile('ttft_p95_seconds', 'TTFT p95', 0.95, TTFT),
    latencyQuantile('ttft_p99_seconds', 'TTFT p99', 0.99, TTFT),
    latencyQuantile('itl_p95_seconds', 'Inter-token latency p95', 0.95, ITL),
    histogramMean('tpot_mean_seconds', 'Time per output token (mean)', 'seconds', [
      'sglang:inter_token_latency_seconds',
    ]),
    latencyQuantile('e2e_p50_seconds', 'End-to-end latency p50', 0.5, E2E),
    latencyQuantile('e2e_p99_seconds', 'End-to-end latency p99', 0.99, E2E),
    gauge('requests_waiting', 'Requests waiting', 'sglang:num_queue_reqs'),
    gauge('requests_running', 'Requests running', 'sglang:num_running_reqs'),
    KV_CACHE_USAGE,
    perSecond('preemptions_per_second', 'Retractions (preemptions)', 'sglang:num_retracted_requests_total'),
    perSecond('prompt_tokens_per_second', 'Prompt tokens', 'sglang:prompt_tokens_total'),
    perSecond('generation_tokens_per_second', 'Generation tokens', 'sglang:generation_tokens_total'),
    histogramMean('queue_time_mean_seconds', 'Queue time (mean)', 'seconds', ['sglang:queue_time_seconds']),
    PREFIX_CACHE_HIT_RATIO,
  ].map((def) => [def.name, def]),
);
