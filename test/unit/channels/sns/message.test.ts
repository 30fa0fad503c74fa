import { describe, expect, it } from 'vitest';
import {
  attributeBytes,
  renderSns,
  smsText,
  SNS_MAX_MESSAGE_BYTES,
  SNS_MAX_SUBJECT_CHARS,
  SNS_SMS_MAX_CHARS,
  snsAttributes,
  snsSubject,
} from '../../../../shared/channels/sns/message.js';
import { renderText } from '../../../../shared/render/text.js';
import { eventKey } from '../../../../shared/store/keys.js';
import { createHash } from 'node:crypto';
import { fixtureNotification, manyAlertsNotification } from '../../../helpers/notifications.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:llm-oncall';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('MessageStructure json', () => {
  it('sends default and email as the full text and a short sms body', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    const input = renderSns(n, TOPIC, { messageStructure: 'json' });
    expect(input.MessageStructure).toBe('json');
    expect(JSON.parse(input.Message!)).toEqual({
      default: renderText(n),
      email: renderText(n),
      sms: 'FIRING critical VLLMKVCacheNearlyFull (1): KV cache 97% full on qwen3-8b',
    });
    // Still sent (and counted), though SNS delivers no attributes with a JSON-structured message.
    expect(Object.keys(input.MessageAttributes!)).toEqual(['severity', 'alertname', 'status']);
  });

  it('keeps the whole JSON, after escaping, and the attributes within 256 KiB', () => {
    const n = manyAlertsNotification(400);
    // Quotes and line breaks grow when JSON-escaped; the size limit applies to the escaped form.
    for (const a of n.alerts) a.annotations.description = '"\n'.repeat(400) + '内存'.repeat(300);
    const input = renderSns(n, TOPIC, { messageStructure: 'json', digestAbove: 1000 });
    const size = Buffer.byteLength(input.Message!) + attributeBytes(input.MessageAttributes!);
    expect(size).toBeLessThanOrEqual(SNS_MAX_MESSAGE_BYTES);
    // Alerts are left out whole: one is ~3.7 KB escaped, and it is in the message twice.
    expect(size).toBeGreaterThan(SNS_MAX_MESSAGE_BYTES - 20_000);
    const body = JSON.parse(input.Message!) as { default: string; email: string; sms: string };
    expect(body.email).toBe(body.default);
    expect(body.default).toMatch(/\n\n\+\d+ more alerts$/);
  });
});

describe('smsText', () => {
  it('is at most 140 characters, without emoji, and never cuts a character in half', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.alerts[0]!.annotations.summary = `${'x'.repeat(95)}🔥🔥🔥🔥🔥🔥🔥🔥`;
    const sms = smsText(n);
    expect(sms.length).toBeLessThanOrEqual(SNS_SMS_MAX_CHARS);
    expect(sms.endsWith('…')).toBe(true);
    expect(sms.startsWith('FIRING critical VLLMKVCacheNearlyFull (1): xxx')).toBe(true);
    expect(sms).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('counts alerts Alertmanager truncated, names a storm and speaks the locale', () => {
    expect(smsText(manyAlertsNotification(3, 1497), { locale: 'zh-CN' })).toBe(
      '告警 warning 告警风暴 (1,500): model-1: requests waiting',
    );
  });
});

describe('subject and attributes at their limits', () => {
  it('cuts the subject at exactly 100 ASCII characters', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    delete n.commonLabels.severity;
    n.alerts[0]!.labels.severity = '';
    for (const [length, expected] of [
      [88, 100],
      [89, 100],
      [87, 99],
    ] as const) {
      n.commonLabels.alertname = 'A'.repeat(length);
      // "[FIRING:1] " is 11 characters.
      expect(snsSubject(n)).toHaveLength(Math.min(expected, 11 + length));
    }
    n.commonLabels.alertname = 'A'.repeat(500);
    expect(snsSubject(n)).toHaveLength(SNS_MAX_SUBJECT_CHARS);
  });

  it('marks flapping in the subject and as an attribute', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.flapping = { [n.alerts[0]!.fingerprint]: { count: 3, sinceMs: Date.parse('2026-11-29T12:00:00Z') } };
    expect(snsSubject(n)).toBe('[FLAPPING:1] VLLMKVCacheNearlyFull critical');
    expect(snsAttributes(n).flapping).toEqual({ DataType: 'String', StringValue: 'true' });
    expect(snsAttributes(fixtureNotification('firing-kv-cache-critical')).flapping).toBeUndefined();
  });
});

describe('FIFO topics', () => {
  it('derive the deduplication id from the dedupe keys of the events, whatever their order', () => {
    const n = fixtureNotification('firing-queue-backlog-two-models');
    const input = renderSns(n, `${TOPIC}.fifo`);
    const keys = n.alerts.map(eventKey).sort().join('\n');
    expect(input.MessageDeduplicationId).toBe(sha256(keys));
    expect(input.MessageGroupId).toBe(sha256(n.groupKey));
    const reversed = { ...n, alerts: [...n.alerts].reverse() };
    expect(renderSns(reversed, `${TOPIC}.fifo`).MessageDeduplicationId).toBe(input.MessageDeduplicationId);
    // The same events re-rendered with other text (another locale) are still the same message to SNS.
    expect(renderSns(n, `${TOPIC}.fifo`, { locale: 'zh-CN' }).MessageDeduplicationId).toBe(
      input.MessageDeduplicationId,
    );
    const resolved = fixtureNotification('resolved-queue-backlog-two-models');
    expect(renderSns(resolved, `${TOPIC}.fifo`).MessageDeduplicationId).not.toBe(input.MessageDeduplicationId);
  });
});
