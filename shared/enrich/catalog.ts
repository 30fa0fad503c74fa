/**
 * The metric names the product knows, by who exposes them and since which version: what a rule may
 * read and still fire (`npm run check-rules`, `shared/enrich/rule-check.ts`). Names as exposed:
 * counters with `_total`, histograms by their base name (`_bucket`, `_sum`, `_count`, `_created`
 * are read as it). Written from each exporter's source (test/fixtures/exposition): vLLM's
 * `vllm/engine/metrics.py` (V0) and `vllm/v1/metrics/loggers.py` (V1, main), production-stack's
 * router `src/vllm_router/services/metrics_service`, prometheus-fastapi-instrumentator, NVIDIA
 * dcgm-exporter's `default-counters.csv`, SGLang's metrics collector (`sglang/srt/.../metrics_collector.py`).
 */

/** Who exposes a name, since which version, and what to know when reading it. */
export interface Exposer {
  /** e.g. `vLLM`, `production-stack router`. */
  by: string;
  /** e.g. `every version`, `V1 0.10+`, `main (after 0.30)`. */
  since: string;
  note?: string;
  /** A router's own series (production-stack), not an engine's. */
  router?: true;
}

const VLLM = (since: string, note?: string): Exposer => ({ by: 'vLLM', since, ...(note ? { note } : {}) });
const ROUTER: Exposer = {
  by: 'production-stack router',
  router: true,
  since: 'every version',
  note: 'per backend (`server` label, no `model_name`): select the engines\' own with model_name!=""',
};
const ROUTER_ONLY = (what: string): Exposer => ({
  by: 'production-stack router',
  router: true,
  since: 'every version',
  note: what,
});
const SGLANG = (note?: string): Exposer => ({
  by: 'SGLang',
  since: '0.5 (with --enable-metrics)',
  ...(note ? { note } : {}),
});

/** Every known name, with its exposers. */
const KNOWN: Readonly<Record<string, readonly Exposer[]>> = {
  'vllm:num_requests_running': [VLLM('every version'), ROUTER],
  'vllm:num_requests_waiting': [
    VLLM('every version', 'from main (after 0.30) it also counts requests deferred for a KV transfer or LoRA'),
    ROUTER,
  ],
  'vllm:num_requests_waiting_by_reason': [VLLM('main (after 0.30)')],
  'vllm:num_requests_swapped': [VLLM('V0 only'), ROUTER],
  'vllm:kv_cache_usage_perc': [VLLM('V1 0.9+')],
  'vllm:gpu_cache_usage_perc': [VLLM('V0, V1 until 0.10', 'hidden from 0.11 (renamed kv_cache_usage_perc)')],
  'vllm:cpu_cache_usage_perc': [VLLM('V0 only')],
  'vllm:gpu_prefix_cache_hit_rate': [VLLM('V0 only'), ROUTER],
  'vllm:cpu_prefix_cache_hit_rate': [VLLM('V0 only')],
  'vllm:gpu_prefix_cache_queries_total': [VLLM('V1 0.8–0.10')],
  'vllm:gpu_prefix_cache_hits_total': [VLLM('V1 0.8–0.10'), ROUTER],
  'vllm:prefix_cache_queries_total': [VLLM('V1 0.9+')],
  'vllm:prefix_cache_hits_total': [VLLM('V1 0.9+')],
  'vllm:num_preemptions_total': [VLLM('every version')],
  'vllm:prompt_tokens_total': [VLLM('every version')],
  'vllm:generation_tokens_total': [VLLM('every version')],
  'vllm:request_success_total': [VLLM('every version', 'finished_reason="abort" exists at 0 on V1, never counted')],
  'vllm:request_failure_total': [
    VLLM('main (after 0.30)', 'the API server\'s answers ≥ 400: 5xx are failures, 4xx rejected input (code=~"4..")'),
  ],
  'vllm:request_prompt_tokens': [VLLM('every version')],
  'vllm:request_generation_tokens': [VLLM('every version')],
  'vllm:request_params_n': [VLLM('every version')],
  'vllm:request_params_max_tokens': [VLLM('every version')],
  'vllm:request_max_num_generation_tokens': [VLLM('every version')],
  'vllm:iteration_tokens_total': [VLLM('every version')],
  'vllm:time_to_first_token_seconds': [VLLM('every version')],
  'vllm:time_per_output_token_seconds': [VLLM('V0, V1 until 0.10', 'renamed inter_token_latency_seconds')],
  'vllm:inter_token_latency_seconds': [VLLM('V1 0.10+')],
  'vllm:e2e_request_latency_seconds': [VLLM('every version')],
  'vllm:request_queue_time_seconds': [VLLM('every version')],
  'vllm:request_inference_time_seconds': [VLLM('every version')],
  'vllm:request_prefill_time_seconds': [VLLM('every version')],
  'vllm:request_decode_time_seconds': [VLLM('every version')],
  'vllm:time_per_prefill_token_request_seconds': [VLLM('V1 0.10+')],
  'vllm:cache_config_info': [VLLM('every version', 'gpu_memory_utilization is a label')],
  'vllm:lora_requests_info': [VLLM('every version', 'with LoRA enabled')],
  'vllm:engine_sleep_state': [VLLM('main (after 0.30)')],
  'vllm:prompt_tokens_by_source_total': [VLLM('main (after 0.30)')],
  'vllm:spec_decode_num_drafts_total': [VLLM('V1 0.9+', 'with speculative decoding')],
  'vllm:spec_decode_num_draft_tokens_total': [VLLM('V1 0.9+', 'with speculative decoding')],
  'vllm:spec_decode_num_accepted_tokens_total': [VLLM('V1 0.9+', 'with speculative decoding')],
  'vllm:current_qps': [ROUTER_ONLY("production-stack's router, per backend")],
  'vllm:avg_latency': [ROUTER_ONLY("production-stack's router, per backend")],
  'vllm:avg_itl': [ROUTER_ONLY("production-stack's router, per backend")],
  'vllm:avg_decoding_length': [ROUTER_ONLY("production-stack's router, per backend")],
  'vllm:num_prefill_requests': [ROUTER_ONLY("production-stack's router, per backend")],
  'vllm:num_decoding_requests': [ROUTER_ONLY("production-stack's router, per backend")],
  'vllm:healthy_pods_total': [ROUTER_ONLY("production-stack's router, per backend")],
  'vllm:num_incoming_requests_total': [ROUTER_ONLY("production-stack's router, per model")],
  'vllm:routing_decisions_total': [ROUTER_ONLY("production-stack's router, per routing decision")],
  'vllm:input_tokens_total': [ROUTER_ONLY("production-stack's router, per backend and model")],
  'vllm:output_tokens_total': [ROUTER_ONLY("production-stack's router, per backend and model")],
  'vllm:request_errors_total': [
    ROUTER_ONLY("production-stack's router counts its own errors per backend (`server`, `model`, `error_type`)"),
  ],
  'vllm:request_latency_seconds': [
    ROUTER_ONLY("production-stack's router times requests per backend (`server`, `model`, `status`)"),
  ],
  http_requests_total: [
    { by: 'vLLM API server (prometheus-fastapi-instrumentator)', since: 'V1 0.8.3+', note: 'status="2xx"|"4xx"|"5xx"' },
  ],
  http_request_duration_seconds: [{ by: 'vLLM API server (prometheus-fastapi-instrumentator)', since: 'V1 0.8.3+' }],
  up: [{ by: 'Prometheus', since: 'every version' }],
  'sglang:num_running_reqs': [SGLANG()],
  'sglang:num_queue_reqs': [SGLANG()],
  'sglang:token_usage': [SGLANG()],
  'sglang:gen_throughput': [SGLANG()],
  'sglang:cache_hit_rate': [SGLANG()],
  'sglang:num_used_tokens': [SGLANG()],
  'sglang:prompt_tokens_total': [SGLANG()],
  'sglang:generation_tokens_total': [SGLANG()],
  'sglang:num_requests_total': [SGLANG()],
  'sglang:num_aborted_requests_total': [SGLANG()],
  'sglang:num_retracted_reqs': [SGLANG("the last batch's retractions (a gauge)")],
  'sglang:num_retracted_requests_total': [SGLANG('created at the first retraction')],
  'sglang:time_to_first_token_seconds': [SGLANG()],
  'sglang:inter_token_latency_seconds': [SGLANG()],
  'sglang:e2e_request_latency_seconds': [SGLANG()],
};

/** Prefixes that mark a name as an engine's or exporter's the product reads (an unknown one never fires). */
const OWN_PREFIXES = ['vllm:', 'sglang:', 'ray_vllm', 'DCGM_FI_'] as const;

/** dcgm-exporter's fields: every `DCGM_FI_*` name is one (the exporter's counters file picks which are exported). */
const DCGM: Exposer = {
  by: 'NVIDIA dcgm-exporter',
  since: 'every version',
  note: 'exported when its counters file lists the field',
};

/** A histogram or counter sample's name as its family's (`…_bucket` → the base name), when that is known. */
function familyOf(name: string): string {
  if (KNOWN[name]) return name;
  for (const suffix of ['_bucket', '_sum', '_count', '_created']) {
    if (name.endsWith(suffix) && KNOWN[name.slice(0, -suffix.length)]) return name.slice(0, -suffix.length);
  }
  return name;
}

/** What the catalog says of a name a rule reads. */
export type NameStatus =
  | { status: 'known'; exposers: readonly Exposer[] }
  /** Only production-stack's router exposes it (its own view, per backend): no engine does. */
  | { status: 'router'; exposers: readonly Exposer[] }
  /** An engine's or exporter's prefix, but no version exposes it: the rule can never fire on it. */
  | { status: 'unknown' }
  /** Another exporter's metric (node_exporter, kube-state-metrics, …): not checked. */
  | { status: 'foreign' };

/** vLLM's name behind Ray Serve LLM's re-export (`ray_vllm_x`, `ray_vllm:x`) or a NIM's bare one, if any. */
function vllmNameOf(name: string): { vllm: string; by: string } | undefined {
  for (const prefix of ['ray_vllm_', 'ray_vllm:']) {
    if (name.startsWith(prefix)) return { vllm: `vllm:${name.slice(prefix.length)}`, by: 'Ray Serve LLM' };
  }
  return KNOWN[familyOf(`vllm:${name}`)] ? { vllm: `vllm:${name}`, by: 'NVIDIA NIM' } : undefined;
}

/** Who exposes `name`, or why nobody known does. */
export function lookUpName(name: string): NameStatus {
  const other = vllmNameOf(name);
  if (other) {
    const vllm = KNOWN[familyOf(other.vllm)]?.find((e) => !e.router);
    if (vllm) return { status: 'known', exposers: [{ by: other.by, since: `where vLLM's does (${vllm.since})` }] };
    if (other.by === 'Ray Serve LLM') return { status: 'unknown' };
  }
  const family = familyOf(name);
  const exposers = KNOWN[family];
  if (exposers) return { status: exposers.every((e) => e.router) ? 'router' : 'known', exposers };
  if (name.startsWith('DCGM_FI_')) return { status: 'known', exposers: [DCGM] };
  return OWN_PREFIXES.some((p) => name.startsWith(p)) ? { status: 'unknown' } : { status: 'foreign' };
}
