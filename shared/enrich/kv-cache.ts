/** Enricher for KV-cache pressure alerts. */
import { selector } from '../prometheus/promql.js';
import { RATE_WINDOW, readSignals, type Enricher } from './enricher.js';
import { scopeOf, VLLM_SCOPE_LABELS } from './scope.js';
import { requestsRunning } from './vllm-signals.js';

/**
 * KV-cache usage as a ratio 0–1 (vLLM v1's `vllm:kv_cache_usage_perc`, or the older
 * `vllm:gpu_cache_usage_perc`; despite "perc" both are ratios), preemptions per second over the last
 * 5 minutes, and requests running.
 */
export const kvCacheEnricher: Enricher<'kv_cache'> = {
  kind: 'kv_cache',
  enrich: async (alert, ctx) => {
    const scope = scopeOf(alert, VLLM_SCOPE_LABELS);
    const usage = `max(${selector('vllm:kv_cache_usage_perc', scope)} or ${selector('vllm:gpu_cache_usage_perc', scope)})`;
    const preemptions = `sum(rate(${selector('vllm:num_preemptions_total', scope)}[${RATE_WINDOW}]))`;
    const signals = await readSignals(ctx, [
      { name: 'kv_cache_usage_ratio', label: 'KV cache usage', unit: 'ratio', query: usage },
      { name: 'preemptions_per_second', label: 'Preemptions', unit: 'per_second', query: preemptions },
      requestsRunning(scope),
    ]);
    return { signals };
  },
};
