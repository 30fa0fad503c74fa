/**
 * The one signal that says most about an alert of each kind (what a storm digest sorts and shows
 * its top alerts by): the first of the kind's candidates that the enrichment holds with a number.
 */
import type { AlertKind, Enrichment, Signal } from './types.js';

/** Candidates per kind, most telling first; a name absent from an enrichment is skipped. */
export const MAIN_SIGNALS: { readonly [K in AlertKind]: readonly string[] } = {
  latency: ['ttft_p95_seconds'],
  queue: ['requests_waiting'],
  kv_cache: ['kv_cache_usage_ratio'],
  error_rate: ['http_5xx_ratio', 'failed_ratio'],
  gpu_memory: ['gpu_memory_used_mib', 'memory_used_mib'],
  // Longest down first.
  target_down: ['down_for_seconds'],
  unknown: ['expression_value'],
};

/**
 * The main signal of an enriched alert.
 * @returns the first of {@link MAIN_SIGNALS}`[kind]` whose value now is a finite number, or
 *   `undefined` (not enriched, no data, NaN): such an alert has no value to rank by
 */
export function mainSignal(enrichment: Enrichment): Signal | undefined {
  if (enrichment.status !== 'enriched') return undefined;
  for (const name of MAIN_SIGNALS[enrichment.kind]) {
    const signal = enrichment.signals.find((s) => s.name === name);
    if (signal && signal.value !== null && Number.isFinite(signal.value)) return signal;
  }
  return undefined;
}
