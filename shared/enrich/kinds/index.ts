/**
 * The one explicit list of enrichers, one per alert kind. Adding a kind means adding its file and
 * one line here; the mapped type makes a missing or mismatched entry a type error.
 */
import type { Enricher } from '../enricher.js';
import { errorRateEnricher } from './error-rate.js';
import { gpuMemoryEnricher } from './gpu-memory.js';
import { kvCacheEnricher } from './kv-cache.js';
import { latencyEnricher } from './latency.js';
import { queueEnricher } from './queue.js';
import { targetDownEnricher } from './target-down.js';
import type { AlertKind } from '../types.js';
import { unknownEnricher } from './unknown.js';

export const ENRICHERS: { readonly [K in AlertKind]: Enricher<K> } = {
  latency: latencyEnricher,
  kv_cache: kvCacheEnricher,
  queue: queueEnricher,
  error_rate: errorRateEnricher,
  gpu_memory: gpuMemoryEnricher,
  target_down: targetDownEnricher,
  unknown: unknownEnricher,
};
