/**
 * The contract every enricher implements, and the signal definitions they share.
 * One file per alert kind implements {@link Enricher}; `kinds/index.ts` lists them.
 */
import type { Alert } from '../alertmanager/schema.js';
import type { Sample, Series } from '../prometheus/client.js';
import type { MemoryTrend, Signal, SignalUnit, AlertKind } from './types.js';
import { PipelineError } from '../core/errors.js';

/** Unit of a configured memory series' samples; values are converted to MiB. */
export type MemoryUnit = 'bytes' | 'KiB' | 'MiB' | 'GiB';

/** Bytes in one {@link MemoryUnit}. */
export const MEMORY_UNIT_BYTES: Readonly<Record<MemoryUnit, number>> = {
  bytes: 1,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
};

/** Which memory series the leak trend reads, and how. */
export interface MemorySettings {
  /** Metric name, e.g. `DCGM_FI_DEV_FB_USED` (MiB) or `process_resident_memory_bytes` (bytes). */
  series: string;
  /** Unit of the series' samples. */
  unit: MemoryUnit;
  /** Window of the regression, hours. */
  windowHours: number;
  /** Configured capacity, MiB; overrides `DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE`. */
  capacityMiB?: number;
}

/** What an enricher may use. Queries run at one instant per group and are sent once per expression. */
export interface EnrichContext {
  /** Instant query at `at` (default {@link now}). Throws what the Prometheus client throws. */
  instant(expr: string, at?: Date): Promise<Sample[]>;
  /**
   * Range query over `[now - windowSeconds, now]`; `stepSeconds` (default: about 360 points) is raised
   * when needed to stay under Prometheus's point limit.
   */
  range(expr: string, windowSeconds: number, stepSeconds?: number): Promise<Series[]>;
  /** The group's evaluation time. */
  now: Date;
  /** The group's alerts of the kind being enriched: queries are aggregated over all of them. */
  peers: readonly Alert[];
  memory: MemorySettings;
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
   * @param alert one of `ctx.peers`
   * @throws whatever a query throws, or {@link EnrichmentUnavailable}; the caller turns it into an
   *   `unavailable` enrichment
   */
  enrich(alert: Alert, ctx: EnrichContext): Promise<EnrichResult>;
}

/** Thrown by an enricher that cannot query anything for this alert; `message` is the human reason, `reasonZh` in Chinese. */
export class EnrichmentUnavailable extends PipelineError<'enrichment_unavailable'> {
  constructor(
    reason: string,
    readonly reasonZh: string,
  ) {
    super(reason, 'enrichment_unavailable');
    this.name = 'EnrichmentUnavailable';
  }
}

/** Where one query looks: the series of every peer alert, kept apart by their identifying labels. */
export interface QueryScope {
  /** PromQL matchers selecting the peers' series, e.g. `['model_name=~"a|b"']`. */
  matchers: string[];
  /** Labels to aggregate `by`, e.g. `['model_name']`; empty for a fleet-wide value. */
  by: string[];
}

/**
 * A signal as data: how to query it for many alerts at once, and how to show it.
 * The expression must aggregate `by` the scope's labels so each alert finds its own series.
 */
export interface SignalDef {
  name: string;
  label: string;
  unit: SignalUnit;
  /** Labels of the alert that identify this signal's series (e.g. `VLLM_SCOPE_LABELS`). */
  scopeLabels: readonly string[];
  /** The PromQL for a scope. */
  expr(scope: QueryScope): string;
  /** A label whose values split the signal into one reading each (e.g. `finished_reason`). */
  breakdown?: string;
  /** See `Signal.nanMeans`. */
  nanMeans?: 'no_requests';
  /** See `Signal.elapsed`. */
  elapsed?: true;
  /**
   * A label whose value, a number written as text, is the reading (the largest of the alert's
   * series), for settings an engine exposes only as labels of an info gauge (e.g.
   * `vllm:cache_config_info{gpu_memory_utilization="0.9"}`); the expression keeps the label.
   */
  valueLabel?: string;
  /** Bucket metrics (`…_bucket`, either vLLM generation's name) whose highest finite `le` bounds a quantile. */
  histogram?: readonly string[];
  /**
   * A label the expression adds whose values must not be summed together (e.g. `engine_generation`:
   * V0 and V1 histograms have different bucket sets). One value present reads as the plain signal;
   * several read as one signal each, named `name:value` and labelled with `splitLabels[value]`.
   */
  split?: SignalSplit;
}

/** See {@link SignalDef.split}. */
export interface SignalSplit {
  /** The label the expression adds, e.g. `engine_generation`. */
  label: string;
  /** Human text of each value, e.g. `{ v1: 'V1, engine label' }`. */
  labels: Readonly<Record<string, string>>;
  /** Adds `label` to any expression's series (used for the histogram's bucket bounds too). */
  tag(expr: string): string;
}

/** Rate window of every `rate()` the enrichers send. */
export const RATE_WINDOW = '5m';
