/**
 * The {@link EnrichContext} of one enrichment call: every query runs at the same instant, under the
 * same abort signal, and an expression asked for twice is sent once.
 */
import type { Logger } from '../logger.js';
import { PrometheusClient, type QueryResult } from '../prometheus/client.js';
import { rangeStep } from '../prometheus/step.js';
import type { EnrichContext } from './enricher.js';

export interface ContextOptions {
  /** Aborts every query (the whole call's budget). */
  signal: AbortSignal;
  now: Date;
  memoryTrendWindowHours: number;
  gpuMemoryCapacityMiB?: number;
  logger: Logger;
}

/** An {@link EnrichContext} plus the number of distinct queries it sent. */
export interface CountingContext {
  ctx: EnrichContext;
  queryCount(): number;
}

/**
 * @param client the Prometheus to ask
 * @returns a context whose queries are cached by kind, expression and window for its lifetime
 */
export function createContext(client: PrometheusClient, options: ContextOptions): CountingContext {
  const { signal, now, logger } = options;
  const cache = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, run: () => Promise<QueryResult<T>>): Promise<T> => {
    let pending = cache.get(key) as Promise<T> | undefined;
    if (!pending) {
      pending = run().then(({ result, warnings }) => {
        if (warnings.length > 0) logger.debug('enrich.prometheus_warnings', { key, warnings });
        return result;
      });
      cache.set(key, pending);
    }
    return pending;
  };
  const ctx: EnrichContext = {
    instant: (expr) => once(`instant ${expr}`, () => client.instantQuery(expr, { time: now, signal })),
    range: (expr, windowSeconds) =>
      once(`range ${windowSeconds} ${expr}`, () =>
        client.rangeQuery(expr, { start: new Date(now.getTime() - windowSeconds * 1000), end: now, step: rangeStep(windowSeconds), signal }),
      ),
    now,
    memoryTrendWindowHours: options.memoryTrendWindowHours,
    gpuMemoryCapacityMiB: options.gpuMemoryCapacityMiB,
  };
  return { ctx, queryCount: () => cache.size };
}
