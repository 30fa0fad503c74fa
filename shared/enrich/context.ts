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
  const cache = new QueryCache(logger);
  return {
    forKind: (kind, peers) => ({
      instant: (expr, at = now) =>
        cache.once(kind, `instant @${at.getTime() / 1000}`, expr, () => batcher.instant(expr, at, alone(kind))),
      range: (expr, windowSeconds, stepSeconds) => {
        const step = Math.max(stepSeconds ?? 0, rangeStep(windowSeconds));
        const window = { start: new Date(now.getTime() - windowSeconds * 1000), end: now, step };
        return cache.once(kind, `range ${windowSeconds}s/${step}s`, expr, () =>
          batcher.range(expr, window, alone(kind)),
        );
      },
      now,
      peers,
      memory: options.memory,
    }),
    queryCount: () => cache.sent,
    queriesByKind: () => ({ ...cache.byKind }),
    requestCount: () => batcher.requests,
  };
}

/**
 * The queries of one group, each sent once: keyed by when (or over what window), then by the expression
 * itself. A storm's expressions run to 100 KB, and concatenating one into a key per alert would copy it
 * for every lookup.
 */
class QueryCache {
  readonly #pending = new Map<string, Map<string, Promise<unknown>>>();
  /** Distinct queries sent so far, in all and by the kind that first asked. */
  sent = 0;
  readonly byKind: Partial<Record<AlertKind, number>> = {};

  constructor(private readonly logger: Logger) {}

  /** The answer to `expr` at `when`: `run`'s, started by the first kind that asks, shared with the later ones. */
  once<T>(kind: AlertKind, when: string, expr: string, run: () => Promise<T>): Promise<T> {
    let exprs = this.#pending.get(when);
    if (!exprs) {
      exprs = new Map();
      this.#pending.set(when, exprs);
    }
    let pending = exprs.get(expr) as Promise<T> | undefined;
    if (!pending) {
      this.byKind[kind] = (this.byKind[kind] ?? 0) + 1;
      this.sent += 1;
      this.logger.debug('enrich.query', { kind, query: `${when} ${expr}` });
      pending = run();
      exprs.set(expr, pending);
    }
    return pending;
  }
}
