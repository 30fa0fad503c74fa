/** Enricher for latency alerts (TTFT, end-to-end, per output token): the quantiles and what usually explains them. */
import { readEngineSignals } from '../signals/profiles.js';
import type { Enricher, SignalDef } from '../enricher.js';
import { GPU_UTILIZATION, readGpuSignals, type GpuSignalDef } from '../signals/dcgm.js';
import {
  DECODE_TIME_MEAN,
  E2E_P50,
  E2E_P99,
  GENERATION_TOKENS_PER_SECOND,
  ITL_P95,
  KV_CACHE_USAGE,
  latencyQuantile,
  PREEMPTIONS_PER_SECOND,
  PREFILL_TIME_MEAN,
  PREFIX_CACHE_HIT_RATIO,
  PROMPT_TOKENS_MEAN,
  PROMPT_TOKENS_PER_SECOND,
  QUEUE_TIME_MEAN,
  REQUESTS_DEFERRED,
  REQUESTS_RUNNING,
  REQUESTS_WAITING,
  REQUESTS_WAITING_CAPACITY,
  TPOT_MEAN,
  TTFT_BUCKETS,
} from '../signals/vllm.js';

/**
 * TTFT p50/p95/p99, inter-token latency p95 and mean, end-to-end p50/p99 (seconds; quantiles per
 * engine generation), the queue (waiting: all, for capacity, deferred; running), KV-cache usage (ratio) and preemptions/s, prompt
 * and generation tokens/s, the mean prompt length (tokens), the mean queue, prefill and decode times
 * (seconds) and the prefix-cache hit rate (ratio): enough to tell queueing from slow prefill from
 * KV-cache pressure, decode-bound from too little concurrency, and a tail from preemptions.
 */
export const LATENCY_SIGNALS: readonly SignalDef[] = [
  latencyQuantile('ttft_p50_seconds', 'TTFT p50', 0.5, TTFT_BUCKETS),
  latencyQuantile('ttft_p95_seconds', 'TTFT p95', 0.95, TTFT_BUCKETS),
  latencyQuantile('ttft_p99_seconds', 'TTFT p99', 0.99, TTFT_BUCKETS),
  ITL_P95,
  TPOT_MEAN,
  E2E_P50,
  E2E_P99,
  REQUESTS_WAITING,
  REQUESTS_WAITING_CAPACITY,
  REQUESTS_DEFERRED,
  REQUESTS_RUNNING,
  KV_CACHE_USAGE,
  PREEMPTIONS_PER_SECOND,
  PROMPT_TOKENS_PER_SECOND,
  GENERATION_TOKENS_PER_SECOND,
  PROMPT_TOKENS_MEAN,
  QUEUE_TIME_MEAN,
  PREFILL_TIME_MEAN,
  DECODE_TIME_MEAN,
  PREFIX_CACHE_HIT_RATIO,
];

/** GPU utilization (ratio, DCGM matched to the server): high with flat throughput is decode-bound, low is too little work. */
export const LATENCY_GPU_SIGNALS: readonly GpuSignalDef[] = [GPU_UTILIZATION];

export const latencyEnricher: Enricher<'latency'> = {
  kind: 'latency',
  enrich: async (alert, ctx) => {
    const [vllm, gpu] = await Promise.all([
      readEngineSignals(ctx, alert, LATENCY_SIGNALS),
      readGpuSignals(ctx, alert, LATENCY_GPU_SIGNALS),
    ]);
    return { signals: [...vllm, ...gpu] };
  },
};
