/**
 * What enrichment adds to an alert: fresh values from Prometheus, and for memory alerts a leak trend.
 * These are plain data: channels render them, the pipeline never interprets them.
 */
import type { Alert } from '../alertmanager/schema.js';

/** What an alert is about; decides which signals are queried. */
export type AlertKind = 'latency' | 'kv_cache' | 'queue' | 'error_rate' | 'gpu_memory' | 'unknown';

/**
 * Unit of a signal's `value`, so renderers can format it:
 * - `seconds`: a duration in seconds (rendered as ms or s);
 * - `ratio`: 0–1 (rendered as a percentage);
 * - `count`: a plain number of things (requests, sequences);
 * - `per_second`: a rate per second (e.g. preemptions/s, tokens/s);
 * - `mebibytes`: MiB (DCGM's `DCGM_FI_DEV_FB_USED` unit);
 * - `none`: unit unknown (a re-evaluated rule expression).
 */
export type SignalUnit = 'seconds' | 'ratio' | 'count' | 'per_second' | 'mebibytes' | 'none';

/** One fresh value read from Prometheus. */
export interface Signal {
  /** Stable machine name, e.g. `ttft_p95_seconds`. */
  name: string;
  /** Human label, e.g. `TTFT p95`. */
  label: string;
  /**
   * The value now. `null` means Prometheus returned no series ("no data"), which is never shown as 0.
   * May be `NaN` (e.g. `histogram_quantile` with no requests in the window) or ±Infinity.
   */
  value: number | null;
  unit: SignalUnit;
  /** The PromQL instant query that produced it. */
  query: string;
}

/** Least-squares trend of a memory series, for GPU memory-leak alerts. */
export interface MemoryTrend {
  /** Fitted growth in MiB per hour (negative when shrinking). */
  growthMiBPerHour: number;
  /** Coefficient of determination of the fit, 0–1. */
  rSquared: number;
  /** Latest observed value, MiB. */
  usedMiB: number;
  /** Memory capacity in MiB (used + free, or configured); `null` when unknown. */
  capacityMiB: number | null;
  /** Projected hours until `usedMiB` reaches `capacityMiB` at the fitted rate; `null` when not growing or capacity unknown. */
  hoursToFull: number | null;
  /** Length of the fitted window, seconds. */
  windowSeconds: number;
  /** Number of samples fitted. */
  points: number;
}

/** The outcome of enriching one alert. Enrichment never throws: failure is `unavailable`. */
export type Enrichment =
  | { status: 'enriched'; kind: AlertKind; signals: Signal[]; trend?: MemoryTrend }
  | { status: 'unavailable'; kind: AlertKind; reason: string };

/** An alert of the group, as the channels receive it. */
export type EnrichedAlert = Alert & { enrichment: Enrichment };
