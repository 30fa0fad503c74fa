/** Enricher for request-queue alerts. */
import type { Enricher, SignalDef } from '../enricher.js';
import { GPU_UTILIZATION, readGpuSignals, type GpuSignalDef } from '../signals/dcgm.js';
import { readEngineSignals } from '../signals/profiles.js';
import {
  GENERATION_TOKENS_PER_SECOND,
  KV_CACHE_USAGE,
  PREEMPTIONS_PER_SECOND,
  REQUESTS_DEFERRED,
  REQUESTS_RUNNING,
  REQUESTS_WAITING,
  REQUESTS_WAITING_CAPACITY,
  TPOT_MEAN,
} from '../signals/vllm.js';

/**
 * Requests waiting (all; for capacity; deferred for a KV transfer or a LoRA slot) and running (counts), generated tokens/s and the mean time per output token
 * (throughput), and KV-cache usage and preemptions/s (a full cache is a common reason the batch
 * cannot grow).
 */
export const QUEUE_SIGNALS: readonly SignalDef[] = [
  REQUESTS_WAITING,
  REQUESTS_WAITING_CAPACITY,
  REQUESTS_DEFERRED,
  REQUESTS_RUNNING,
  GENERATION_TOKENS_PER_SECOND,
  TPOT_MEAN,
  KV_CACHE_USAGE,
  PREEMPTIONS_PER_SECOND,
];

/** GPU utilization (ratio, DCGM matched to the server). */
export const QUEUE_GPU_SIGNALS: readonly GpuSignalDef[] = [GPU_UTILIZATION];

export const queueEnricher: Enricher<'queue'> = {
  kind: 'queue',
  enrich: async (alert, ctx) => {
    const [vllm, gpu] = await Promise.all([
      readEngineSignals(ctx, alert, QUEUE_SIGNALS),
      readGpuSignals(ctx, alert, QUEUE_GPU_SIGNALS),
    ]);
    return { signals: [...vllm, ...gpu] };
  },
};
