/**
 * The serving engines an alert may be about, told from what its rule reads: vLLM (`vllm:*`), SGLang
 * (`sglang:*`), Ray Serve LLM (vLLM's names as Ray's metrics agent re-exports them: `ray_vllm_*`, and
 * `ray_vllm:*` before Ray sanitised the colon) and NVIDIA NIM (vLLM's names without the prefix).
 * Each engine has a profile of signals (`signals/profiles.ts`) and its own flags in the likely
 * causes' actions (`causes/rules.ts`). An alert whose rule names none of their metrics (a DCGM or
 * `up` rule, an alert without an expression) is read as vLLM, whose names the other profiles mirror.
 */
import { alertExpression, type Alert } from '../alertmanager/schema.js';
import { metricNames } from '../prometheus/metric-names.js';

/** A serving engine with a profile. */
export type Engine = 'vllm' | 'sglang' | 'ray' | 'ray_colon' | 'nim';

/** How each engine is named to a person. */
export const ENGINE_NAMES: Readonly<Record<Engine, string>> = {
  vllm: 'vLLM',
  sglang: 'SGLang',
  ray: 'Ray Serve LLM',
  ray_colon: 'Ray Serve LLM',
  nim: 'NVIDIA NIM',
};

/**
 * vLLM's names that NIM exposes without the `vllm:` prefix (NIM's LLM container, vLLM backend): a
 * rule reading one of them bare is about a NIM.
 * @see https://docs.nvidia.com/nim/large-language-models/latest/observability.html
 */
const NIM_NAMES = new Set([
  'num_requests_running',
  'num_requests_waiting',
  'num_requests_swapped',
  'gpu_cache_usage_perc',
  'kv_cache_usage_perc',
  'num_preemptions_total',
  'prompt_tokens_total',
  'generation_tokens_total',
  'request_success_total',
  'time_to_first_token_seconds',
  'time_per_output_token_seconds',
  'e2e_request_latency_seconds',
  'request_prompt_tokens',
  'request_generation_tokens',
]);

/** A histogram sample's family name (`…_bucket` → its base). */
const family = (name: string) => name.replace(/_(?:bucket|sum|count)$/, '');

/** The engine a metric name belongs to, if any. */
function engineOfName(name: string): Engine | undefined {
  if (name.startsWith('vllm:')) return 'vllm';
  if (name.startsWith('sglang:')) return 'sglang';
  if (name.startsWith('ray_vllm:')) return 'ray_colon';
  if (name.startsWith('ray_vllm_')) return 'ray';
  return NIM_NAMES.has(name) || NIM_NAMES.has(family(name)) ? 'nim' : undefined;
}

const ENGINES = new WeakMap<Alert, Engine>();

/**
 * The engine of the alert's rule: the first engine metric its expression (`generatorURL`) reads; vLLM
 * when it reads none. Remembered per alert object (a storm asks once per alert and signal list).
 */
export function engineOf(alert: Alert): Engine {
  let engine = ENGINES.get(alert);
  if (!engine) {
    const expr = alertExpression(alert);
    engine =
      (expr === undefined
        ? undefined
        : metricNames(expr)
            .map(engineOfName)
            .find((e) => e)) ?? 'vllm';
    ENGINES.set(alert, engine);
  }
  return engine;
}
