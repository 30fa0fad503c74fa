/**
 * What enrichment adds to an alert: fresh values from Prometheus (when the alert fired and now), for
 * memory alerts a leak trend, and a likely cause when a rule's evidence holds.
 * These are plain data: channels render them, the pipeline never interprets them.
 */
import type { Alert } from '../alertmanager/schema.js';

/** What an alert is about; decides which signals are queried. */
export type AlertKind = 'latency' | 'kv_cache' | 'queue' | 'error_rate' | 'gpu_memory' | 'target_down' | 'unknown';

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
  /**
   * The value when the alert fired (at its `startsAt`, or the first evaluation within one range step
   * after it), same conventions as `value`; absent when not queried.
   */
  atStart?: number | null;
  /**
   * What `NaN` means for this signal: `no_requests` — no requests in the rate window (a histogram
   * quantile, or a per-request ratio, of zero rates), to be shown as such rather than as a number.
   */
  nanMeans?: 'no_requests';
  /**
   * For a histogram quantile: the upper bound of the histogram's highest finite bucket (same unit as
   * `value`). `histogram_quantile` returns this bound when the quantile lies in the `+Inf` bucket, so
   * a value equal to it means "≥ topBucket".
   */
  topBucket?: number;
  /**
   * For `seconds`: the value is time elapsed since something (e.g. a target down for 720 s), shown as
   * a duration (`12 min`, `2 h 5 min`) rather than as a measurement (`720 s`, a latency's reading).
   */
  elapsed?: true;
  /**
   * The engine (e.g. `SGLang`) that has no metric for this signal: it was not asked, `value` is
   * `null` and `query` empty.
   */
  notExposedBy?: string;
}

/** A probable cause found by a likely-cause rule, with the evidence that made the rule hold. */
export interface LikelyCause {
  /** The rule's stable id, e.g. `kv_cache_pressure`. */
  rule: string;
  /** One line: what is probably happening. */
  cause: string;
  /** One line: what to try (vLLM flags, capacity). */
  action: string;
  /** Each condition that held, with its values and units, e.g. `KV cache usage 97% (≥ 90%)`. */
  evidence: string[];
}

/** Robust trend of a memory series, for memory-leak alerts. */
export interface MemoryTrend {
  /** Fitted growth in MiB per hour (negative when shrinking). */
  growthMiBPerHour: number;
  /** Coefficient of determination of the fit, 0–1 (for a robust fit: over the points it did not reject as outliers). */
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
  /** The regression: `theil-sen`, the median of the slopes between pairs of points. */
  method?: 'theil-sen';
  /**
   * Whether the trend is real: positive, large enough and well fitted. When `false`, there is no
   * upward trend and `hoursToFull` is `null`.
   */
  growing?: boolean;
  /** When a restart (a large drop) was detected, its time (RFC 3339); the fit covers only the time after it. */
  restartedAt?: string;
  /** Samples the robust fit rejected as outliers (spikes, garbage-collection drops). */
  outliers?: number;
  /** The memory series queried, e.g. `DCGM_FI_DEV_FB_USED` or `process_resident_memory_bytes` (values converted to MiB). */
  series?: string;
  /** The whole window's shape in Unicode blocks (`▁▂▃▄▅▆▇█`), oldest first. */
  sparkline?: string;
  /** Why there is no forecast, when `growing` is `false` (the first of these that applies). */
  noForecast?: NoForecast;
}

/**
 * Why a memory trend gives no forecast, in the order they are checked:
 * - `short_history`: the points since the last restart span `seconds`, fewer than `neededSeconds`;
 * - `few_points`: `points` samples since the last restart, fewer than `neededPoints`;
 * - `not_growing`: flat or shrinking (growth over the window below 1 MiB);
 * - `poor_fit`: growing, but the line explains too little of the variance (`rSquared` below `neededRSquared`).
 */
export type NoForecast =
  | { reason: 'short_history'; seconds: number; neededSeconds: number }
  | { reason: 'few_points'; points: number; neededPoints: number }
  | { reason: 'not_growing' }
  | { reason: 'poor_fit'; rSquared: number; neededRSquared: number };

/**
 * Why an enrichment is unavailable, as a metric label (`enrichment_unavailable_total{reason}`):
 * `not_configured` (no `PROMETHEUS_URL`), `timeout` (the group's budget ran out), `network` (no HTTP
 * answer), `prometheus_error` (an error answer), `no_query` (nothing to ask for this alert), `error`;
 * `storm` (no longer counted: storms are enriched like any group since the digest shows values; kept
 * so the metric's label values stay a superset of what earlier versions reported).
 */
export type UnavailableCause =
  | 'not_configured'
  | 'timeout'
  | 'network'
  | 'prometheus_error'
  | 'no_query'
  | 'error'
  | 'storm';

/** The outcome of enriching one alert. Enrichment never throws: failure is `unavailable`. */
export type Enrichment =
  | {
      status: 'enriched';
      kind: AlertKind;
      signals: Signal[];
      trend?: MemoryTrend;
      likelyCause?: LikelyCause;
      /** The serving engine, when the alert's rule reads another engine's metrics than vLLM's (`SGLang`, …). */
      engine?: string;
    }
  | {
      status: 'unavailable';
      kind: AlertKind;
      /** Why, in English: what the logs and English channels show. */
      reason: string;
      /** The same in Chinese, for zh-CN channels and pages; absent in records written before it existed. */
      reasonZh?: string;
      cause?: UnavailableCause;
    };

/** Who acknowledged an alert, when and from which channel's link (see `shared/ack`). */
export interface Acknowledgement {
  /** The name the person typed on the acknowledgement page (`anonymous` when none). */
  by: string;
  /** When, RFC 3339 (UTC, milliseconds). */
  at: string;
  /** The channel whose message carried the link used (`slack`, `feishu`, `sns`, …). */
  channel: string;
  /** The Alertmanager silence created with the acknowledgement, if one was asked for. */
  silenceId?: string;
  /**
   * When that silence ends, RFC 3339 (our clock, as the silence was created). A firing sent again after
   * it is announced again: the acknowledgement is over with the silence (`shared/store/occurrence.ts`).
   */
  silenceEndsAt?: string;
}

/**
 * An alert of the group, as the channels receive it; `acknowledgement` once someone acknowledged it;
 * `cut` names the fields that are not as sent (too long or not valid text, `shared/render/reduce.ts`);
 * `chartUrl` the signed, expiring URL of its chart PNG (`PUBLIC_URL/v1/chart/<token>.png`, see
 * `shared/chart/url.ts`), set for alerts shown in detail when `PUBLIC_URL`, `ACK_SECRET` and
 * `PROMETHEUS_URL` are; fetching it (GET) changes nothing.
 */
export type EnrichedAlert = Alert & {
  enrichment: Enrichment;
  acknowledgement?: Acknowledgement;
  cut?: string[];
  chartUrl?: string;
};
