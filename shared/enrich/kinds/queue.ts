/** Enricher for request-queue alerts. */
import type { Enricher, SignalDef } from '../enricher.js';
import { readSignals } from '../signals/read.js';
import { GENERATION_TOKENS_PER_SECOND, KV_CACHE_USAGE, PREEMPTIONS_PER_SECOND, REQUESTS_RUNNING, REQUESTS_WAITING } from '../signals/vllm.js';

/**
 * Requests waiting and running (counts), generated tokens/s (throughput), and KV-cache usage and
 * preemptions/s (a full cache is a common reason the batch cannot grow).
 */
export const QUEUE_SIGNALS: readonly SignalDef[] = [REQUESTS_WAITING, REQUESTS_RUNNING, GENERATION_TOKENS_PER_SECOND, KV_CACHE_USAGE, PREEMPTIONS_PER_SECOND];

export const queueEnricher: Enricher<'queue'> = {
  kind: 'queue',
  enrich: async (alert, ctx) => ({ signals: await readSignals(ctx, alert, QUEUE_SIGNALS) }),
};
