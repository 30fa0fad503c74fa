/**
 * What an alert's chart shows, decided when the message is built (from the alert and its enrichment)
 * and carried, signed, in the chart URL: the GET reads the series again from Prometheus, so the
 * picture runs to the moment it is opened, and nothing is stored for it.
 *
 * The main signal, in order of preference:
 * 1. a memory alert with a fitted trend: the memory series the trend was fitted on (MiB), with its
 *    capacity, so the chart can draw the fit and its projection to capacity;
 * 2. an alert about a scrape target not answering (its rule compares `up` with 0, e.g. `up == 0 or …`):
 *    that target's `up` (job and instance from the alert), 1 → 0 around the fire time;
 * 3. an alert whose rule expression (`generatorURL` `g0.expr`) ends in a comparison with a number:
 *    the compared value (the expression without the comparison) and that number as the threshold —
 *    the line the alert crossed, in the rule's own terms. When an enriched signal reads the same
 *    metrics, the chart takes its unit and name, so it reads as the message does (`66.3%`, not `0.6626`);
 * 4. otherwise the kind's first signal (e.g. TTFT p95 for a latency alert), without a threshold.
 *
 * The rule expression is the alert's text (whoever posts to Alertmanager's API writes it) and a chart
 * link re-runs it for days: every selector in it is narrowed to the alert's identifying labels
 * (`scopedToLabels`, `enrich/signals/scope.ts`), and one that would still read series it does not name exactly is not charted.
 * The range, step and series a GET reads are bounded in `data.ts` and `routes.ts`.
 */
import { alertExpression, hasKnownStart } from '../alertmanager/schema.js';
import { equalityMatchers, selector, stripTrailingComparison, topLevelComparison } from '../prometheus/promql.js';
import { comparesUpWithZero, metricNames } from '../prometheus/scan.js';
import { scopedToLabels } from '../enrich/signals/scope.js';
import type { Alert } from '../alertmanager/schema.js';
import type { Enrichment, Signal, SignalUnit } from '../enrich/types.js';
import type { Locale } from '../core/locale.js';
import { signalLabel } from '../enrich/signals/labels.js';
import { chartWords } from './words.js';

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
  /** Heading, e.g. `VLLMKVCacheNearlyFull · KV cache usage`, or the alert's name alone. */
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
 * @param locale the title's language: the signal's name in it (the alert's name stays as sent); default `en`
 */
export function chartSpec(alert: ChartableAlert, locale: Locale = 'en'): ChartSpec | undefined {
  const firedAtMs = Date.parse(alert.startsAt);
  // Alertmanager's zero time (`0001-01-01…`, AMP's default text) is an unknown start: nothing to mark.
  if (!hasKnownStart(alert) || !Number.isFinite(firedAtMs)) return undefined;
  const base = { labels: alert.labels, firedAt: Math.floor(firedAtMs / 1000) };
  const name = alert.labels.alertname ?? chartWords(locale).unnamed;
  const e = alert.enrichment;
  if (e?.status === 'enriched' && e.kind === 'gpu_memory' && e.trend) {
    const used = e.signals.find((s) => s.unit === 'mebibytes');
    if (used)
      return {
        ...base,
        query: used.query,
        title: `${name} · ${signalLabel(used, locale)}`,
        unit: 'mebibytes',
        memory: { windowSeconds: e.trend.windowSeconds, capacityMiB: e.trend.capacityMiB },
      };
  }
  const expr = alertExpression(alert);
  if (expr && comparesUpWithZero(expr)) {
    const query = selector('up', equalityMatchers(alert.labels, ['job', 'instance']));
    // No threshold line: `== 0` would lie on the x-axis, and the drop from 1 to 0 says it.
    return { ...base, query, title: `${name} · ${chartWords(locale).upTitle}`, unit: 'count' };
  }
  const threshold = expr ? ruleThreshold(expr) : undefined;
  const signals = e?.status === 'enriched' ? e.signals : [];
  const compared = expr && threshold ? stripTrailingComparison(expr) : undefined;
  const comparedQuery = compared === undefined ? undefined : scopedToLabels(compared, alert.labels);
  if (compared !== undefined && comparedQuery !== undefined) {
    const signal = comparedSignal(compared, signals);
    const title = signal ? `${name} · ${signalLabel(signal, locale)}` : name;
    return { ...base, query: comparedQuery, title, unit: signal?.unit ?? 'none', threshold };
  }
  const main = signals[0];
  if (main) return { ...base, query: main.query, title: `${name} · ${signalLabel(main, locale)}`, unit: main.unit };
  const query = expr && compared === undefined ? scopedToLabels(expr.trim(), alert.labels) : undefined;
  return query === undefined ? undefined : { ...base, query, title: name, unit: 'none' };
}

/**
 * The enriched signal the rule compares: the first whose query reads a metric of the compared
 * expression (so its unit and name describe the charted value), `undefined` when none does.
 */
function comparedSignal(compared: string, signals: readonly Signal[]): Signal | undefined {
  const names = metricNames(compared);
  return signals.find((s) => [...metricNames(s.query)].some((m) => names.has(m)));
}
