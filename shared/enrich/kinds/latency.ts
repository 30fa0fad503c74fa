/** Enricher for time-to-first-token alerts: TTFT quantiles and what usually explains them. */
import { readSignals } from '../signals/read.js';
import type { Enricher, SignalDef } from '../enricher.js';
import {
  ITL_BUCKETS, KV_CACHE_USAGE, latencyQuantile, PREEMPTIONS_PER_SECOND, PROMPT_TOKENS_MEAN, PROMPT_TOKENS_PER_SECOND,
  REQUESTS_RUNNING, REQUESTS_WAITING, TTFT_BUCKETS,
} from '../signals/vllm.js';

/**
 * TTFT p50/p95/p99 and inter-token latency p95 (seconds), the queue (waiting, running), KV-cache
 * usage (ratio) and preemptions/s, prompt tokens/s and the mean prompt length (tokens): enough to
 * tell queueing from slow prefill from KV-cache pressure.
 */
export const LATENCY_SIGNALS: readonly SignalDef[] = [
  latencyQuantile('ttft_p50_seconds', 'TTFT p50', 0.5, TTFT_BUCKETS),
  latencyQuantile('ttft_p95_seconds', 'TTFT p95', 0.95, TTFT_BUCKETS),
  latencyQuantile('ttft_p99_seconds', 'TTFT p99', 0.99, TTFT_BUCKETS),
  latencyQuantile('itl_p95_seconds', 'Inter-token latency p95', 0.95, ITL_BUCKETS),
  REQUESTS_WAITING,
  REQUESTS_RUNNING,
  KV_CACHE_USAGE,
  PREEMPTIONS_PER_SECOND,
  PROMPT_TOKENS_PER_SECOND,
  PROMPT_TOKENS_MEAN,
];

export const latencyEnricher: Enricher<'latency'> = {
  kind: 'latency',
  enrich: async (alert, ctx) => ({ signals: await readSignals(ctx, alert, LATENCY_SIGNALS) }),
};
