/**
 * The {@link EnrichContext}s of one enrichment call: every query runs under the same abort signal,
 * "now" is one instant for the whole group, an expression asked for twice (at the same time or
 * over the same window) is sent once, whichever kind asked, and the expressions asked at one time
 * go to Prometheus together, a few requests per group ({@link QueryBatcher}).
 */
import type { Alert } from '../alertmanager/schema.js';
import type { Logger } from '../core/logger.js';
import { QueryBatcher } from '../prometheus/batch.js';
import type { PrometheusClient } from '../prometheus/client.js';
import { rangeStep } from '../prometheus/step.js';
import type { EnrichContext, MemorySettings } from './enricher.js';
import type { AlertKind } from './types.js';

export interface ContextOptions {
  /** Aborts every query (the whole call's budget). */
  signal: AbortSignal;
  now: Date;
  memory: MemorySettings;
  logger: Logger;
}

/** A rule's own expression (`unknown`) may be a scalar, which no batch can hold: it is sent alone. */
const alone = (kind: AlertKind) => kind === 'unknown';

/** Contexts per kind sharing one query cache, and what the group cost. */
export interface GroupContext {
  /** The context for the alerts of one kind (`peers`). */
  forKind(kind: AlertKind, peers: readonly Alert[]): EnrichContext;
  /** Distinct queries sent so far. */
  queryCount(): number;
  /** Distinct queries sent so far, by the kind that first asked. */
  queriesByKind(): Partial<Record<AlertKind, number>>;
  /** HTTP requests those queries took (batched: several queries per request). */
  requestCount(): number;
}

/**
 * @param client the Prometheus to ask (its own per-query time-out and retry apply)
 * @returns contexts whose queries are cached by expression and time (or window) for their lifetime
 */
export function createContext(client: PrometheusClient, options: ContextOptions): GroupContext {
  const { signal, now, logger } = options;
  const batcher = new QueryBatcher(client, {
    signal,
    onWarnings: (query, warnings) => logger.warn('prometheus warnings', { query, warnings }),
  });
  // Keyed by when (or over what window), then by the expression itself: a storm's expressions run to
  // 100 KB, and concatenating one into a key per alert would copy it for every lookup.
  const cache = new Map<string, Map<string, Promise<unknown>>>();
  let sent = 0;
  const byKind: Partial<Record<AlertKind, number>> = {};
  const once = <T>(kind: AlertKind, when: string, expr: string, run: () => Promise<T>): Promise<T> => {
    let exprs = cache.get(when);
    if (!exprs) {
      exprs = new Map();
      cache.set(when, exprs);
    }
    let pending = exprs.get(expr) as Promise<T> | undefined;
    if (!pending) {
      byKind[kind] = (byKind[kind] ?? 0) + 1;
      sent += 1;
      logger.debug('enrich.query', { kind, query: `${when} ${expr}` });
      pending = run();
      exprs.set(expr, pending);
    }
    return pending;
  };
  return {
    forKind: (kind, peers) => ({
      instant: (expr, at = now) =>
        once(kind, `instant @${at.getTime() / 1000}`, expr, () => batcher.instant(expr, at, alone(kind))),
      range: (expr, windowSeconds, stepSeconds) => {
        const step = Math.max(stepSeconds ?? 0, rangeStep(windowSeconds));
        return once(kind, `range ${windowSeconds}s/${step}s`, expr, () =>
          batcher.range(expr, new Date(now.getTime() - windowSeconds * 1000), now, step, alone(kind)),
        );
      },
      now,
      peers,
      memory: options.memory,
    }),
    queryCount: () => sent,
    queriesByKind: () => ({ ...byKind }),
    requestCount: () => batcher.requests,
  };
}
