/**
 * What an alert's chart shows, decided when the message is built (from the alert and its enrichment)
 * and carried, signed, in the chart URL: the GET reads the series again from Prometheus, so the
 * picture runs to the moment it is opened, and nothing is stored for it.
 *
 * The main signal, in order of preference:
 * 1. a memory alert with a fitted trend: the memory series the trend was fitted on (MiB), with its
 *    capacity, so the chart can draw the fit and its projection to capacity;
 * 2. an alert whose rule expression (`generatorURL` `g0.expr`) ends in a comparison with a number:
 *    the compared value (the expression without the comparison) and that number as the threshold —
 *    the line the alert crossed, in the rule's own terms;
 * 3. otherwise the kind's first signal (e.g. TTFT p95 for a latency alert), without a threshold.
 */
import { alertExpression, hasKnownStart } from '../alertmanager/schema.js';
import { equalityMatchers, selector, stripTrailingComparison, topLevelComparison } from '../prometheus/promql.js';
import { DCGM_SCOPE_LABELS, TARGET_SCOPE_LABELS, VLLM_SCOPE_LABELS } from '../enrich/signals/scope.js';
import type { Alert } from '../alertmanager/schema.js';
import type { Enrichment, SignalUnit } from '../enrich/types.js';

/** An alert as the pipeline sends it (`EnrichedAlert`) or as the alert record keeps it (`enrichment` optional). */
export type ChartableAlert = Alert & { enrichment?: Enrichment };

/** A threshold comparison as the rule wrote it. */
export interface Threshold {
  op: '>' | '>=' | '<' | '<=' | '==' | '!=';
  value: number;
}

/** The chart of one alert, as signed into its URL. */
export interface ChartSpec {
  /** PromQL the GET evaluates as a range query; may return several series (a group's query). */
  query: string;
  /** The alert's labels: the chart takes the series whose labels all appear here with the same values. */
  labels: Record<string, string>;
  /** Heading, e.g. `KVCacheHigh · rule expression`. */
  title: string;
  unit: SignalUnit;
  /** The alert's `startsAt`, epoch seconds: the fire time marked on the chart. */
  firedAt: number;
  threshold?: Threshold;
  /** For a memory trend: the fitted window (seconds) and capacity (MiB, `null` unknown), as the enrichment used them. */
  memory?: { windowSeconds: number; capacityMiB: number | null };
}

/**
 * The rule's threshold: the number its top-level comparison compares with, e.g. `… > 0.9` →
 * `{ op: '>', value: 0.9 }` (see {@link topLevelComparison}: `a > 1 and b > 5` has none).
 * @returns `undefined` when the expression is not one comparison with a finite number
 */
export function ruleThreshold(expr: string): Threshold | undefined {
  const comparison = topLevelComparison(expr);
  const value = comparison ? Number(comparison.literal) : Number.NaN;
  return comparison && Number.isFinite(value) ? { op: comparison.op, value } : undefined;
}

/**
 * The chart for an alert, or `undefined` when there is nothing to draw: no rule expression and no
 * enriched signal, or an unknown `startsAt`.
 * @param alert the alert with its enrichment, if any (its `startsAt` is RFC 3339)
 */
export function chartSpec(alert: ChartableAlert): ChartSpec | undefined {
  const firedAtMs = Date.parse(alert.startsAt);
  // Alertmanager's zero time (`0001-01-01…`, AMP's default text) is an unknown start: nothing to mark.
  if (!hasKnownStart(alert) || !Number.isFinite(firedAtMs)) return undefined;
  const base = { labels: alert.labels, firedAt: Math.floor(firedAtMs / 1000) };
  const name = alert.labels.alertname ?? 'alert';
  const e = alert.enrichment;
  if (e?.status === 'enriched' && e.kind === 'gpu_memory' && e.trend) {
    const used = e.signals.find((s) => s.unit === 'mebibytes');
    if (used) return { ...base, query: used.query, title: `${name} · ${used.label}`, unit: 'mebibytes', memory: { windowSeconds: e.trend.windowSeconds, capacityMiB: e.trend.capacityMiB } };
  }
  const expr = alertExpression(alert);
  const threshold = expr ? ruleThreshold(expr) : undefined;
  if (expr && threshold) return { ...base, query: scoped(stripTrailingComparison(expr), alert.labels), title: `${name} · rule expression`, unit: 'none', threshold };
  const main = e?.status === 'enriched' ? e.signals[0] : undefined;
  if (main) return { ...base, query: main.query, title: `${name} · ${main.label}`, unit: main.unit };
  return expr ? { ...base, query: scoped(expr.trim(), alert.labels), title: `${name} · rule expression`, unit: 'none' } : undefined;
}

const BARE_METRIC = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/**
 * A bare metric name narrowed to the alert's series: the alert's identifying labels (as the
 * enrichment scopes its queries, `enrich/signals/scope.ts`) as escaped equality matchers, so a GET
 * reads one alert's series, not the whole fleet's. Other expressions are kept as written: adding
 * matchers inside them could change what they compute (a fleet-wide denominator, an `on()` join).
 */
function scoped(query: string, labels: Readonly<Record<string, string>>): string {
  if (!BARE_METRIC.test(query)) return query;
  const names = query.startsWith('vllm:') ? VLLM_SCOPE_LABELS : query.startsWith('DCGM_') ? DCGM_SCOPE_LABELS : TARGET_SCOPE_LABELS;
  return selector(query, equalityMatchers(labels, names));
}
