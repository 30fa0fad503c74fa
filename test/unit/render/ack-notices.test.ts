/**
 * How the channels show acknowledgements: the Acknowledge link (Slack button, Feishu primary button,
 * a URL line in SNS/console text), who acked and time-to-ack under an alert, the short ACKNOWLEDGED
 * follow-up and the UNACKNOWLEDGED escalation header, in en and zh-CN.
 */
import { describe, expect, it } from 'vitest';
import { elapsed } from '../../../shared/render/elapsed.js';
import { noticeFromRecords } from '../../../shared/escalation/notices.js';
import type { AlertRecord } from '../../../shared/store/alert-record.js';
import { acknowledgementLine, PLAIN } from '../../../shared/render/content.js';
import { renderFeishu } from '../../../shared/channels/feishu/index.js';
import { renderSlack } from '../../../shared/channels/slack/index.js';
import { renderSns } from '../../../shared/channels/sns/message.js';
import { renderText } from '../../../shared/render/text.js';
import type { Notification } from '../../../shared/render/notification.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const URL_ = 'https://ack.example.com/v1/ack/eyJ2IjoxfQ.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmUtc2lnbmF0';
const ACK = { by: 'alice <ops>', at: '2026-11-29T12:46:05.000Z', channel: 'slack', silenceId: 'b7c0f4e2-1' };

function firing(): Notification {
  return { ...fixtureNotification('firing-kv-cache-critical'), acknowledgeUrl: URL_ };
}

function record(): AlertRecord {
  const n = fixtureNotification('firing-kv-cache-critical');
  const { enrichment, ...alert } = n.alerts[0]!;
  return {
    fingerprint: alert.fingerprint,
    startsAt: alert.startsAt,
    status: 'firing',
    alert,
    enrichment,
    groupKey: n.groupKey,
    externalURL: n.externalURL,
    channels: ['slack'],
    notifiedAt: alert.startsAt,
    acknowledgement: ACK,
  };
}

describe('the Acknowledge link', () => {
  it('is a primary link button right under the Slack header', () => {
    const blocks = renderSlack(firing()).blocks;
    expect(blocks[1]).toEqual({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Acknowledge', emoji: true },
          url: URL_,
          style: 'primary',
          action_id: 'acknowledge',
        },
      ],
    });
    expect(renderSlack(fixtureNotification('firing-kv-cache-critical')).blocks.some((b) => b.type === 'actions')).toBe(
      false,
    );
  });

  it("is a primary button first in the Feishu card, labelled in the channel's language", () => {
    const card = renderFeishu(firing()).card;
    expect(card.elements[0]).toEqual({
      tag: 'action',
      actions: [{ tag: 'button', text: { tag: 'plain_text', content: '认领' }, type: 'primary', url: URL_ }],
    });
    expect(renderFeishu(firing(), { locale: 'en' }).card.elements[0]).toMatchObject({
      actions: [{ text: { content: 'Acknowledge' } }],
    });
  });

  it('is a line under the headline in SNS and console text', () => {
    const lines = renderText(firing()).split('\n');
    expect(lines.slice(0, 2)).toEqual(['🔥 FIRING · critical · VLLMKVCacheNearlyFull (1)', `Acknowledge: ${URL_}`]);
  });
});

describe('acknowledgements in messages', () => {
  it('says who acked, when, how long after firing and the silence, escaped for the platform', () => {
    const alert = { ...firing().alerts[0]!, acknowledgement: ACK };
    expect(acknowledgementLine(alert, PLAIN)).toBe(
      '👀 Acknowledged by alice <ops> at 2026-11-29 12:46:05 UTC (3 min after it fired) · silenced (b7c0f4e2-1)',
    );
    const slack = JSON.stringify(renderSlack({ ...firing(), alerts: [alert] }));
    expect(slack).toContain('Acknowledged by *alice &lt;ops&gt;*');
    expect(acknowledgementLine(alert, PLAIN, 'zh-CN')).toBe(
      '👀 由 alice <ops> 于 2026-11-29 12:46:05 UTC 认领（触发后 3 分钟） · 已静默（b7c0f4e2-1）',
    );
  });

  it('renders the follow-up short, without the button, on every platform', () => {
    const followUp = noticeFromRecords('acknowledged', [record()], URL_);
    const slack = renderSlack(followUp);
    expect(slack.blocks.map((b) => b.type)).toEqual(['header', 'section']);
    expect(slack.blocks[0]).toMatchObject({ text: { text: '👀 ACKNOWLEDGED · critical · VLLMKVCacheNearlyFull (1)' } });
    expect(slack.text).toContain('KV cache 97% full on qwen3-8b');
    const feishu = renderFeishu(followUp).card;
    expect(feishu.header).toEqual({
      title: { tag: 'plain_text', content: '👀 已认领 · critical · VLLMKVCacheNearlyFull (1)' },
      template: 'blue',
    });
    expect(feishu.elements).toHaveLength(1);
    expect(renderText(followUp)).toBe(
      '👀 ACKNOWLEDGED · critical · VLLMKVCacheNearlyFull (1)\n\nKV cache 97% full on qwen3-8b\n👀 Acknowledged by alice <ops> at 2026-11-29 12:46:05 UTC (3 min after it fired) · silenced (b7c0f4e2-1)',
    );
  });

  it('heads an escalation UNACKNOWLEDGED and keeps the alert in full with its link', () => {
    const { acknowledgement: _none, ...unacked } = record();
    const escalation = noticeFromRecords('escalation', [unacked], URL_);
    const slack = renderSlack(escalation);
    expect(slack.blocks[0]).toMatchObject({
      text: { text: '🚨 UNACKNOWLEDGED · critical · VLLMKVCacheNearlyFull (1)' },
    });
    expect(slack.blocks[1]).toMatchObject({ type: 'actions' });
    expect(JSON.stringify(slack)).toContain('KV cache usage');
    expect(renderFeishu(escalation).card.header.template).toBe('red');
  });
});

describe('SNS', () => {
  it('names follow-ups and escalations in the subject and a kind attribute, and keeps FIFO from dropping them', () => {
    const fifo = 'arn:aws:sns:eu-west-1:123456789012:alerts.fifo';
    const { acknowledgement: _none, ...unacked } = record();
    const alert = renderSns(noticeFromRecords('escalation', [unacked]), fifo);
    const followUp = renderSns(noticeFromRecords('acknowledged', [record()]), fifo);
    const original = renderSns(fixtureNotification('firing-kv-cache-critical'), fifo);
    expect(alert.Subject).toBe('[UNACKNOWLEDGED:1] VLLMKVCacheNearlyFull critical');
    expect(followUp.Subject).toBe('[ACKNOWLEDGED:1] VLLMKVCacheNearlyFull critical');
    expect(alert.MessageAttributes?.kind).toEqual({ DataType: 'String', StringValue: 'escalation' });
    expect(original.MessageAttributes?.kind).toBeUndefined();
    expect(
      new Set([alert.MessageDeduplicationId, followUp.MessageDeduplicationId, original.MessageDeduplicationId]).size,
    ).toBe(3);
  });
});

describe('elapsed', () => {
  it.each([
    [0, '0 s'],
    [59_999, '59 s'],
    [60_000, '1 min'],
    [3_599_000, '59 min'],
    [3_600_000, '1 h'],
    [3_900_000, '1 h 5 min'],
    [47 * 3_600_000, '47 h'],
    [48 * 3_600_000, '2 d'],
    [50 * 3_600_000, '2 d 2 h'],
    [-5_000, '0 s'],
    [Number.NaN, '?'],
  ])('%d ms → %s', (ms, text) => {
    expect(elapsed(0, ms)).toBe(text);
  });
});
