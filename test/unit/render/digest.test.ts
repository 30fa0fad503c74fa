import { describe, expect, it } from 'vitest';
import { countBy, DIGEST_ABOVE_ALERTS, isStorm, summarize } from '../../../shared/render/digest.js';
import { FEISHU_MAX_BODY_BYTES, renderFeishu, type FeishuElement } from '../../../shared/channels/feishu/index.js';
import {
  renderSlack,
  SLACK_MAX_BLOCKS,
  SLACK_MAX_HEADER_CHARS,
  SLACK_MAX_SECTION_CHARS,
  type SlackBlock,
} from '../../../shared/channels/slack/index.js';
import { renderSns, SNS_MAX_MESSAGE_BYTES } from '../../../shared/channels/sns/index.js';
import { attributeBytes } from '../../../shared/channels/sns/message.js';
import { renderText } from '../../../shared/render/text.js';
import { manyAlertsNotification, stormNotification } from '../../helpers/notifications.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:llm-alerts';
const sections = (blocks: SlackBlock[]) => blocks.flatMap((b) => (b.type === 'section' ? [b.text.text] : []));
const divs = (elements: FeishuElement[]) => elements.flatMap((e) => (e.tag === 'div' ? [e.text.content] : []));

describe('isStorm', () => {
  it('switches to a digest above 10 alerts, counting those Alertmanager truncated', () => {
    expect(DIGEST_ABOVE_ALERTS).toBe(10);
    expect(isStorm(manyAlertsNotification(10))).toBe(false);
    expect(isStorm(manyAlertsNotification(11))).toBe(true);
    expect(isStorm(manyAlertsNotification(10, 1))).toBe(true);
    expect(isStorm(manyAlertsNotification(11), 20)).toBe(false);
  });
});

describe('summarize', () => {
  it('counts by severity (most severe first), alert name and model, and picks the most severe alerts', () => {
    const d = summarize(stormNotification(5000, 1497));
    expect(d).toMatchObject({ received: 5000, firing: 5000, resolved: 0, notIncluded: 1497 });
    expect(d.bySeverity).toEqual([
      { value: 'critical', alerts: 2000 },
      { value: 'warning', alerts: 3000 },
    ]);
    expect(d.byAlertname.map((c) => c.alerts)).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(d.byModel).toHaveLength(12);
    expect(d.byModel[0]).toEqual({ value: 'model-0', alerts: 417 });
    expect(d.top).toHaveLength(10);
    expect(d.top.every((a) => a.labels.severity === 'critical')).toBe(true);
    // Among equals, Alertmanager's order: replicas 2 and 3 are the first critical ones.
    expect(d.top.slice(0, 2).map((a) => a.annotations.summary)).toEqual([
      'model-2: VLLMKVCacheNearlyFull on replica 2',
      'model-3: VLLMErrorRateHigh on replica 3',
    ]);
  });

  it('orders equal alerts and count ties by instance and model with numbers read as numbers, not as text', () => {
    // Alertmanager sends a group sorted by instance as text: 10.0.0.1, 10.0.0.10, 10.0.0.11, 10.0.0.12, 10.0.0.2, …
    const n = stormNotification(12);
    const textOrder = Array.from({ length: 12 }, (_, i) => `10.0.0.${i + 1}:8000`).sort();
    n.alerts.forEach((a, i) => {
      a.labels = {
        ...a.labels,
        severity: 'critical',
        instance: textOrder[i]!,
        model_name: `model-${textOrder[i]!.split('.')[3]!.split(':')[0]}`,
      };
    });
    const d = summarize(n);
    expect(d.top.map((a) => a.labels.instance)).toEqual(Array.from({ length: 10 }, (_, i) => `10.0.0.${i + 1}:8000`));
    expect(d.byModel.slice(0, 3).map((c) => c.value)).toEqual(['model-1', 'model-2', 'model-3']);
  });

  it('puts firing before resolved and counts a missing label as empty', () => {
    const n = stormNotification(20);
    n.alerts[0]!.status = 'resolved';
    delete n.alerts[1]!.labels.model_name;
    const d = summarize(n, 25);
    expect(d.top.at(-1)).toBe(n.alerts[0]);
    expect(countBy(n.alerts, 'model_name').find((c) => c.value === '')).toEqual({ value: '', alerts: 1 });
  });
});

describe('a resolved storm that was acknowledged', () => {
  function resolvedStorm(by: (i: number) => string | undefined) {
    const n = stormNotification(12);
    n.alerts.forEach((a, i) => {
      a.status = 'resolved';
      const who = by(i);
      if (who) a.acknowledgement = { by: who, at: `2026-12-01T03:0${i % 3}:00.000Z`, channel: 'slack' };
    });
    return n;
  }

  it('says who acknowledged them and when, on every platform', () => {
    const n = resolvedStorm(() => 'alice');
    const line = '👀 Acknowledged by alice at 2026-12-01 03:00:00 UTC (12 of 12 alerts)';
    expect(renderText(n).split('\n')).toContain(line);
    expect(sections(renderSlack(n).blocks)[0]).toContain(
      '👀 Acknowledged by *alice* at 2026-12-01 03:00:00 UTC (12 of 12 alerts)',
    );
    expect(divs(renderFeishu(n, { locale: 'en' }).card.elements)[0]).toContain(line);
  });

  it('counts per person when several acknowledged, and says nothing when nobody did', () => {
    expect(renderText(resolvedStorm((i) => (i < 8 ? 'bob' : i < 11 ? 'alice' : undefined))).split('\n')).toContain(
      '👀 Acknowledged by bob 8 · alice 3 (11 of 12 alerts)',
    );
    expect(renderText(resolvedStorm(() => undefined))).not.toContain('Acknowledged');
  });
});

describe('a 5,000-alert storm with 1,497 truncated, on every platform', () => {
  const storm = stormNotification(5000, 1497);

  it('Slack: one readable digest within every Block Kit limit', () => {
    const { text, blocks } = renderSlack(storm);
    expect(blocks.length).toBeLessThanOrEqual(SLACK_MAX_BLOCKS);
    expect(blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: '🔥 FIRING · critical · Alert storm (6,497)', emoji: true },
    });
    expect(blocks[0]!.type === 'header' && blocks[0]!.text.text.length).toBeLessThanOrEqual(SLACK_MAX_HEADER_CHARS);
    for (const s of sections(blocks)) expect(s.length).toBeLessThanOrEqual(SLACK_MAX_SECTION_CHARS);
    const [summary, top, more] = sections(blocks);
    expect(summary).toBe(
      [
        '*5,000 new alerts in this group*',
        '5,000 firing',
        '+1,497 not included by Alertmanager',
        'By severity: critical *2,000* · warning *3,000*',
        'By alert: GPUMemoryLeak *1,000* · VLLMErrorRateHigh *1,000* · VLLMKVCacheNearlyFull *1,000* · VLLMQueueBacklog *1,000* · VLLMTimeToFirstTokenHigh *1,000*',
        'By model: model-0 *417* · model-1 *417* · model-2 *417* · model-3 *417* · model-4 *417* · model-5 *417* · model-6 *417* · model-7 *417* · +4 more',
      ].join('\n'),
    );
    expect(top!.split('\n')).toHaveLength(11);
    expect(top!.split('\n')[1]).toBe(
      '🔥 critical · model-2: VLLMKVCacheNearlyFull on replica 2 · model-2 @ 10.0.0.2:8000',
    );
    expect(more).toBe('+4,990 more alerts · +1,497 not included by Alertmanager');
    expect(text).toBe(
      '🔥 FIRING · critical · Alert storm (6,497)\n*5,000 new alerts in this group*\n5,000 firing\n+1,497 not included by Alertmanager',
    );
    expect(JSON.stringify(blocks.at(-1))).toContain('silences/new?filter=%7Bcluster%3D%22prod-eu%22%7D|Silence>');
  });

  it('Feishu: one card in Chinese, the body within its byte limit with room for a signature', () => {
    const message = renderFeishu(storm);
    expect(
      Buffer.byteLength(JSON.stringify({ timestamp: '1764420000', sign: 'x'.repeat(44), ...message })),
    ).toBeLessThanOrEqual(FEISHU_MAX_BODY_BYTES);
    expect(message.card.header).toEqual({
      title: { tag: 'plain_text', content: '🔥 告警 · critical · 告警风暴 (6,497)' },
      template: 'red',
    });
    const [summary] = divs(message.card.elements);
    expect(summary).toContain(
      '本组新增 5,000 条告警\n5,000 条告警中\n另有 1,497 条未被 Alertmanager 包含\n按级别: critical 2,000 · warning 3,000',
    );
    expect(message.card.elements).toContainEqual({
      tag: 'note',
      elements: [{ tag: 'plain_text', content: '另有 4,990 条告警 · 另有 1,497 条未被 Alertmanager 包含' }],
    });
  });

  it('Feishu: drops top alerts, whole, until a digest of huge titles fits the byte limit', () => {
    // Control characters cost 6 bytes each once JSON-escaped (\u0007): the worst case per character.
    const n = stormNotification(300);
    n.alerts.forEach((a, i) => {
      a.annotations.summary = '\u0007'.repeat(2000);
      a.labels.model_name = `${i % 12}-${'\u0007'.repeat(400)}`;
    });
    const message = renderFeishu(n);
    expect(Buffer.byteLength(JSON.stringify(message)) + 128).toBeLessThanOrEqual(FEISHU_MAX_BODY_BYTES);
    const top = divs(message.card.elements)[1]!.split('\n');
    expect(top.length).toBeGreaterThan(1);
    expect(top.length).toBeLessThan(11);
    expect(top.slice(1).every((line) => line.endsWith('…') && line.startsWith('🔥 critical · '))).toBe(true);
  });

  it('SNS: a digest message with attributes within 256 KiB, plain and JSON-structured', () => {
    for (const messageStructure of ['string', 'json'] as const) {
      const input = renderSns(storm, TOPIC, { messageStructure });
      expect(Buffer.byteLength(input.Message!) + attributeBytes(input.MessageAttributes!)).toBeLessThanOrEqual(
        SNS_MAX_MESSAGE_BYTES,
      );
      expect(input.Message).toContain('+4,990 more alerts · +1,497 not included by Alertmanager');
    }
    expect(renderText(storm).split('\n\n')).toHaveLength(4);
  });
});
