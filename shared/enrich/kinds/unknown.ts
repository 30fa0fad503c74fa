/** Enricher for alerts of no known kind: re-evaluates the rule's own expression. */
import { alertExpression, type Alert } from '../../alertmanager/schema.js';
import type { Sample } from '../../prometheus/client.js';
import { stripTrailingComparison } from '../../prometheus/promql.js';
import { EnrichmentUnavailable, type Enricher } from '../enricher.js';
import { samplesAtStart } from '../signals/plan.js';
import { scopedToLabels } from '../signals/scope.js';

/**
 * The value the rule compared against its threshold, now and when the alert fired: the
 * `generatorURL` expression without its trailing comparison (`… > 50` → `…`), taking the series
 * whose labels all appear on the alert (unit `none`, `null` when no series matches). The expression is
 * alert text, so it is run only scoped (`scopedToLabels`): every selector narrowed to the identifying
 * labels the alerts of the rule share (the alert's own when it is alone), so they share its queries; one
 * those labels cannot narrow and that does not name its metric exactly (`{__name__=~".+"}`) is not run.
 * @throws EnrichmentUnavailable when the alert carries no expression, or none to run scoped
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
    const sameRule = ctx.peers.filter((p) => alertExpression(p) === expr);
    const query = scopedToLabels(stripTrailingComparison(expr), sharedLabels([alert, ...sameRule]));
    if (query === undefined)
      throw new EnrichmentUnavailable(
        "the rule expression reads series the alert's labels cannot narrow: not run",
        '规则表达式读取的序列无法用告警的标签限定：不执行',
      );
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

/** The labels every one of `alerts` carries with the same value. */
function sharedLabels(alerts: readonly Alert[]): Record<string, string> {
  const [first, ...rest] = alerts;
  return Object.fromEntries(
    Object.entries(first!.labels).filter(([name, value]) => rest.every((a) => a.labels[name] === value)),
  );
}

/**
 * A series belongs to the alert when each of its labels has the same value on the alert.
 * `__name__` is skipped: comparisons keep it, but rules drop it from alert labels.
 */
function belongsTo(sample: Sample, alertLabels: Alert['labels']): boolean {
  return Object.entries(sample.metric).every(([name, value]) => name === '__name__' || alertLabels[name] === value);
}
