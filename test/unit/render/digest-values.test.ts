/**
 * A storm digest that still explains: the top alerts by severity and then by their kind's main
 * value (shown beside each), and the likely cause most alerts share with what to try, on every platform.
 */
import { describe, expect, it } from 'vitest';
import { summarize } from '../../../shared/render/digest.js';
import { renderSlack, type SlackBlock } from '../../../shared/channels/slack/index.js';
import { renderFeishu, type FeishuElement } from '../../../shared/channels/feishu/index.js';
import { renderText } from '../../../shared/render/text.js';
import { CAUSE_RULES } from '../../../shared/enrich/causes/rules.js';
import type { EnrichedAlert, Enrichment, LikelyCause } from '../../../shared/enrich/types.js';
import type { Notification } from '../../../shared/render/notification.js';
import { stormNotification } from '../../helpers/notifications.js';

const QUEUEING = CAUSE_RULES.find((r) => r.id === 'queueing')!;
const queueing: LikelyCause = {
  rule: 'queueing',
  cause: QUEUEING.cause,
  action: QUEUEING.action,
  evidence: ['Requests waiting 40 (≥ 1)'],
};
const kvPressure: LikelyCause = {
  rule: 'kv_cache_pressure',
  cause: 'KV-cache pressure: …',
  action: 'Give the KV cache more memory.',
  evidence: [],
};

/** A queue alert enrichment with `waiting` requests waiting now, and a cause. */
function waiting(value: number | null, cause?: LikelyCause): Enrichment {
  const signals = [{ name: 'requests_waiting', label: 'Requests waiting', unit: 'count' as const, value, query: 'q' }];
  return { status: 'enriched', kind: 'queue', signals, ...(cause ? { likelyCause: cause } : {}) };
}

/** 1,000 queue alerts of one severity: alert i waits i requests; 700 share queueing, 200 KV-cache pressure. */
function enrichedStorm(): Notification {
  const n = stormNotification(1000);
  n.alerts = n.alerts.map(
    (a, i): EnrichedAlert => ({
      ...a,
      labels: { ...a.labels, alertname: 'VLLMQueueBacklog', severity: 'warning', kind: 'queue' },
      enrichment: waiting(i === 3 ? null : i, i < 700 ? queueing : i < 900 ? kvPressure : undefined),
    }),
  );
  return n;
}

describe('a digest of an enriched storm', () => {
  it('ranks the top alerts by the main value among equal severity, and finds the cause most share', () => {
    const d = summarize(enrichedStorm());
    expect(d.top.map((a) => (a.enrichment.status === 'enriched' ? a.enrichment.signals[0]!.value : undefined))).toEqual(
      [999, 998, 997, 996, 995, 994, 993, 992, 991, 990],
    );
    expect(d.sharedCause).toMatchObject({ cause: queueing, alerts: 700, found: { likelyCause: queueing } });
  });

  it('keeps severity first, and alerts without a value after those with one', () => {
    const n = enrichedStorm();
    n.alerts[3]!.labels.severity = 'critical';
    n.alerts[5]!.labels.severity = 'critical';
    const d = summarize(n);
    expect(d.top.slice(0, 3).map((a) => a.fingerprint)).toEqual([
      n.alerts[5]!.fingerprint,
      n.alerts[3]!.fingerprint,
      n.alerts[999]!.fingerprint,
    ]);
  });

  it('Slack: each top line carries its value, the summary the shared cause and what to try', () => {
    const blocks = renderSlack(enrichedStorm()).blocks.flatMap((b: SlackBlock) =>
      b.type === 'section' ? [b.text.text] : [],
    );
    expect(blocks[0]).toContain('*Likely cause of 700 of 1,000 alerts*: Queueing: requests wait');
    expect(blocks[0]).toContain('Try: Add capacity (replicas), or raise --max-num-seqs');
    expect(blocks[1]).toContain('*Top 10 by severity, then value*');
    expect(blocks[1]).toContain('on replica 999 · model-3 @ 10.0.3.249:8000 · Requests waiting 999');
  });

  it('Feishu (zh-CN) and text say the same', () => {
    const n = enrichedStorm();
    const divs = renderFeishu(n).card.elements.flatMap((e: FeishuElement) => (e.tag === 'div' ? [e.text.content] : []));
    expect(divs[0]).toContain('1,000 条告警中 700 条的可能原因：请求排队：');
    expect(divs[0]).toContain('建议：扩容（加副本）');
    expect(divs[0]).not.toContain('Try:');
    expect(divs[1]).toContain('最严重的 10 条（同级按数值）');
    expect(divs[1]).toContain('排队请求数 999');
    const text = renderText(n);
    expect(text).toContain('Likely cause of 700 of 1,000 alerts: Queueing');
    expect(text).toContain('· Requests waiting 998');
  });

  it('a storm without enrichment reads as before: no cause line, top by severity', () => {
    const d = summarize(stormNotification(60));
    expect(d.sharedCause).toBeUndefined();
    const text = renderText(stormNotification(60));
    expect(text).toContain('Top 10 by severity\n');
    expect(text).not.toContain('Likely cause');
  });
});
