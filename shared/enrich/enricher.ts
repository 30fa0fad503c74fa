/**
 * The contract every enricher implements, and the helpers they share.
 * One file per alert kind implements {@link Enricher}; `enrichers.ts` lists them.
 */
import type { Alert } from '../alertmanager/schema.js';
import type { Sample, Series } from '../prometheus/client.js';
import type { AlertKind, MemoryTrend, Signal, SignalUnit } from './types.js';

/** What an enricher may use. Queries run at one instant per group and are sent once per expression. */
export interface EnrichContext {
  /** Instant query at {@link now}. Throws what the Prometheus client throws. */
  instant(expr: string): Promise<Sample[]>;
  /** Range query over `[now - windowSeconds, now]`, step chosen to stay under Prometheus's point limit. */
  range(expr: string, windowSeconds: number): Promise<Series[]>;
  /** The group's evaluation time. */
  now: Date;
  /** Window of the GPU memory regression, hours. */
  memoryTrendWindowHours: number;
  /** Configured GPU memory capacity, MiB; overrides used + free. */
  gpuMemoryCapacityMiB?: number;
}

/** What an enricher found. */
export interface EnrichResult {
  signals: Signal[];
  trend?: MemoryTrend;
}

/** Reads the fresh values for one kind of alert. */
export interface Enricher<K extends AlertKind = AlertKind> {
  readonly kind: K;
  /**
   * @throws whatever a query throws, or {@link EnrichmentUnavailable}; the caller turns it into an
   *   `unavailable` enrichment
   */
  enrich(alert: Alert, ctx: EnrichContext): Promise<EnrichResult>;
}

/** Thrown by an enricher that cannot query anything for this alert; `message` is the human reason. */
export class EnrichmentUnavailable extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'EnrichmentUnavailable';
  }
}

/** A signal before its value is known. */
export type SignalSpec = Omit<Signal, 'value'>;

/** Rate window of every `rate()` the enrichers send. */
export const RATE_WINDOW = '5m';

/**
 * Runs one signal's instant query.
 * @returns the signal with the first series' value, or `null` when Prometheus returned no series.
 *   The queries are aggregations, so there is at most one series.
 */
export async function readSignal(ctx: EnrichContext, spec: SignalSpec): Promise<Signal> {
  const samples = await ctx.instant(spec.query);
  return { ...spec, value: samples[0]?.value ?? null };
}

/** {@link readSignal} for several signals, concurrently, in the given order. */
export function readSignals(ctx: EnrichContext, specs: readonly SignalSpec[]): Promise<Signal[]> {
  return Promise.all(specs.map((spec) => readSignal(ctx, spec)));
}
