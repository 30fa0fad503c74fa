/** Enricher for alerts of no known kind: re-evaluates the rule's own expression. */
import { alertExpression } from '../alertmanager/schema.js';
import type { Sample } from '../prometheus/client.js';
import { stripTrailingComparison } from '../prometheus/promql.js';
import { EnrichmentUnavailable, type Enricher } from './enricher.js';

/**
 * The value the rule compared against its threshold, now: the `generatorURL` expression without its
 * trailing comparison (`… > 50` → `…`), taking the series whose labels all appear on the alert
 * (unit `none`, `null` when no series matches).
 * @throws EnrichmentUnavailable when the alert carries no expression
 */
export const unknownEnricher: Enricher<'unknown'> = {
  kind: 'unknown',
  enrich: async (alert, ctx) => {
    const expr = alertExpression(alert);
    if (!expr) throw new EnrichmentUnavailable('the alert carries no rule expression (generatorURL g0.expr)');
    const query = stripTrailingComparison(expr);
    const samples = await ctx.instant(query);
    const match = samples.find((s) => belongsTo(s, alert.labels));
    return { signals: [{ name: 'expression_value', label: 'Rule expression', value: match?.value ?? null, unit: 'none', query }] };
  },
};

/**
 * A series belongs to the alert when each of its labels has the same value on the alert.
 * `__name__` is skipped: comparisons keep it, but rules drop it from alert labels.
 */
function belongsTo(sample: Sample, alertLabels: Readonly<Record<string, string>>): boolean {
  return Object.entries(sample.metric).every(([name, value]) => name === '__name__' || alertLabels[name] === value);
}
