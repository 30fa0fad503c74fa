/** Enricher for KV-cache pressure alerts. */
import type { Enricher, SignalDef } from '../enricher.js';
import { readSignals } from '../signals/read.js';
import { KV_CACHE_USAGE, PREEMPTIONS_PER_SECOND, REQUESTS_RUNNING, REQUESTS_WAITING } from '../signals/vllm.js';

/** KV-cache usage (ratio 0–1, either generation's gauge), preemptions/s, requests running and waiting. */
export const KV_CACHE_SIGNALS: readonly SignalDef[] = [KV_CACHE_USAGE, PREEMPTIONS_PER_SECOND, REQUESTS_RUNNING, REQUESTS_WAITING];

export const kvCacheEnricher: Enricher<'kv_cache'> = {
  kind: 'kv_cache',
  enrich: async (alert, ctx) => ({ signals: await readSignals(ctx, alert, KV_CACHE_SIGNALS) }),
};
