/** Enricher for KV-cache pressure alerts. */
import type { Enricher, SignalDef } from '../enricher.js';
import { GPU_UTILIZATION, readGpuSignals, type GpuSignalDef } from '../signals/dcgm.js';
import { readEngineSignals } from '../signals/profiles.js';
import { KV_CACHE_USAGE, PREEMPTIONS_PER_SECOND, REQUESTS_RUNNING, REQUESTS_WAITING } from '../signals/vllm.js';

/** KV-cache usage (ratio 0–1, either generation's gauge), preemptions/s, requests running and waiting. */
export const KV_CACHE_SIGNALS: readonly SignalDef[] = [
  KV_CACHE_USAGE,
  PREEMPTIONS_PER_SECOND,
  REQUESTS_RUNNING,
  REQUESTS_WAITING,
];

/** GPU utilization (ratio, DCGM matched to the server): low with a full cache means memory is the bottleneck. */
export const KV_CACHE_GPU_SIGNALS: readonly GpuSignalDef[] = [GPU_UTILIZATION];

export const kvCacheEnricher: Enricher<'kv_cache'> = {
  kind: 'kv_cache',
  enrich: async (alert, ctx) => {
    const [vllm, gpu] = await Promise.all([
      readEngineSignals(ctx, alert, KV_CACHE_SIGNALS),
      readGpuSignals(ctx, alert, KV_CACHE_GPU_SIGNALS),
    ]);
    return { signals: [...vllm, ...gpu] };
  },
};
