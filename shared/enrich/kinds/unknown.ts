/** Enricher for alerts of no known kind: re-evaluates the rule's own expression. */
import { alertExpression, type Alert } from '../../alertmanager/schema.js';
import type { Sample } from '../../prometheus/client.js';
import { stripTrailingComparison } from '../../prometheus/promql.js';
import { EnrichmentUnavailable, type Enricher } from '../enricher.js';
import { samplesAtStart } from '../signals/plan.js';

/**
 * The value the rule compared against its threshold, now and when the alert fired: the
 * `generatorURL` expression without its trailing comparison (`… > 50` → `…`), taking the series
 * whose labels all appear on the alert (unit `none`, `null` when no series matches). Alerts of one
 * rule share its queries.
 * @throws EnrichmentUnavailable when the alert carries no expression
 */
export const unknownEnricher: Enricher<'unknown'> = {
  kind: 'unknown',
  enrich: async (alert, ctx) => {
    const expr = alertExpression(alert);
    if (!expr)
      throw new EnrichmentUnavailable(
        'the alert carries no rule expression (generatorURL g0.expr)',
        '告警没有带规则表达式（generatorURL 的 g0.expr）',
      );
    const query = stripTrailingComparison(expr);
    const sameRule = ctx.peers.filter((p) => alertExpression(p) === expr);
    const [now, atStart] = await Promise.all([
      ctx.instant(query),
      samplesAtStart(ctx, query, alert, sameRule.includes(alert) ? sameRule : [...sameRule, alert]),
    ]);
    const pick = (samples: Sample[]) => samples.find((s) => belongsTo(s, alert.labels))?.value ?? null;
    return {
      signals: [
        {
          name: 'expression_value',
          label: 'Rule expression',
          value: pick(now),
          unit: 'none',
          query,
          ...(atStart === undefined ? {} : { atStart: pick(atStart) }),
        },
      ],
    };
  },
};

/**
 * A series belongs to the alert when each of its labels has the same value on the alert.
 * `__name__` is skipped: comparisons keep it, but rules drop it from alert labels.
 */
function belongsTo(sample: Sample, alertLabels: Alert['labels']): boolean {
  return Object.entries(sample.metric).every(([name, value]) => name === '__name__' || alertLabels[name] === value);
}
