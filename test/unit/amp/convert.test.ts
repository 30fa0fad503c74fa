/**
 * The recorded AMP SNS events (test/fixtures/amp, rendered by the real Alertmanager template engine)
 * converted back into webhook messages: what each body carries comes back exactly as the equivalent
 * webhook has it; what the default text cannot carry is filled as `default-text.ts` says.
 */
import { readFileSync } from 'node:fs';
import type { SNSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { GO_ZERO_TIME, webhookSchema, type WebhookMessage } from '../../../shared/alertmanager/schema.js';
import { convertAmpMessage, MAX_RAW_BYTES, UNPARSED_ALERTNAME } from '../../../shared/amp/convert.js';
import { isSnsEvent } from '../../../shared/amp/is-sns-event.js';
import { syntheticGroupKey } from '../../../shared/amp/json-body.js';
import { ampMessages } from '../../../shared/amp/sns-event.js';
import { CASES } from '../../fixtures/amp/record.js';

function recorded(name: string): SNSEvent {
  return JSON.parse(
    readFileSync(new URL(`../../fixtures/amp/${name}.event.json`, import.meta.url), 'utf8'),
  ) as SNSEvent;
}
const convert = (name: string) => convertAmpMessage(ampMessages(recorded(name))[0]!);
const webhook = (name: string) => webhookSchema.parse(CASES[name]!.webhook);
const PUBLISHED = '2026-11-29T12:43:05.512Z';
const omit = (m: WebhookMessage, ...keys: (keyof WebhookMessage)[]) =>
  Object.fromEntries(Object.entries(m).filter(([k]) => !keys.includes(k as keyof WebhookMessage)));

/**
 * The webhook as the default text carries it: no start time, no external URL; the group labels read back
 * from the default subject the real template rendered (`default-text-group.ts`).
 */
function asText(m: WebhookMessage): WebhookMessage {
  return {
    ...m,
    receiver: 'amp-alerts',
    groupKey: syntheticGroupKey('amp-alerts', m.groupLabels),
    groupLabels: m.groupLabels,
    externalURL: '',
    alerts: m.alerts.map((a) => ({
      ...a,
      startsAt: GO_ZERO_TIME,
      endsAt: a.status === 'resolved' ? PUBLISHED : GO_ZERO_TIME,
    })),
  };
}

describe('recorded AMP events', () => {
  it('are SNS events, and Function URL or schedule events are not', () => {
    expect(isSnsEvent(recorded('firing-json'))).toBe(true);
    expect(isSnsEvent({ version: '2.0', rawPath: '/v1/alertmanager', body: '{}' })).toBe(false);
    expect(isSnsEvent({ source: 'llm-alert-pipeline', 'detail-type': 'heartbeat-check' })).toBe(false);
    expect(isSnsEvent({ Records: [{ eventSource: 'aws:sqs' }] })).toBe(false);
    expect(isSnsEvent(null)).toBe(false);
  });

  it.each(['firing-json', 'resolved-json', 'several-json'])(
    '%s (the shipped JSON template) gives the webhook back',
    (name) => {
      const c = convert(name);
      expect(c).toMatchObject({ kind: 'json', truncated: false, lost: 0 });
      const expected = webhook(name.replace('-json', '-json'));
      expect(omit(c.message, 'groupKey')).toEqual(omit(expected, 'groupKey'));
      expect(c.message.groupKey).toBe(`amp/pipe:{alertname="${expected.groupLabels.alertname}"}`);
    },
  );

  it.each(['firing-default', 'resolved-default', 'several-default'])(
    '%s (the default text) gives the webhook back, less what the text lacks',
    (name) => {
      const c = convert(name);
      expect(c).toMatchObject({ kind: 'text', truncated: false, lost: 0 });
      expect(c.message).toEqual(asText(webhook(name)));
      // Fingerprints are computed from the labels: the ones Alertmanager sent.
      expect(c.message.alerts.map((a) => a.fingerprint)).toEqual(webhook(name).alerts.map((a) => a.fingerprint));
    },
  );

  it('delivers a JSON body AMP did not mark cut but that breaks mid-way unparsed, whole, not as a cut prefix', () => {
    const [message] = ampMessages(recorded('several-json'));
    let seen = 0;
    // An unescaped quote in the third alert (what AMP's documented template produces for such a value).
    const broken = message!.body.replace(/"summary":"/g, (m) => (++seen === 3 ? '"summary":"a "quoted" ' : m));
    expect(seen).toBeGreaterThan(3);
    const c = convertAmpMessage({ ...message!, body: broken });
    expect(c).toMatchObject({ kind: 'unparsed', truncated: false, lost: 0 });
    // Every alert's text reaches the channels in the raw body, none is lost as "cut".
    const raw = JSON.stringify(c.message.alerts[0]!.annotations);
    for (const alert of webhook('several-json').alerts)
      expect(raw).toContain(alert.labels.model_name ?? alert.labels.alertname);
  });

  it('keeps every alert a truncated JSON body holds whole, and counts the rest as left out', () => {
    const c = convert('truncated-json');
    const all = webhook('truncated-json');
    const kept = c.message.alerts.length;
    expect(kept).toBeGreaterThan(20);
    expect(kept).toBeLessThan(all.alerts.length);
    expect(c).toMatchObject({ kind: 'json', truncated: true, lost: all.alerts.length - kept });
    expect(c.message.truncatedAlerts).toBe(all.alerts.length - kept);
    expect(c.message.alerts).toEqual(all.alerts.slice(0, kept));
    expect(omit(c.message, 'groupKey', 'alerts', 'truncatedAlerts')).toEqual(
      omit(all, 'groupKey', 'alerts', 'truncatedAlerts'),
    );
  });

  it('drops the cut alert of a truncated default text, and counts what the subject says fired', () => {
    const c = convert('truncated-default');
    const all = asText(webhook('truncated-default'));
    const kept = c.message.alerts.length;
    expect(kept).toBeGreaterThan(20);
    expect(c).toMatchObject({ kind: 'text', truncated: true, lost: all.alerts.length - kept });
    expect(c.message.alerts).toEqual(all.alerts.slice(0, kept));
  });

  it('turns a body it cannot read into one unparsed alert with the raw text, the subject and the attributes', () => {
    const c = convert('unparsable-custom');
    expect(c).toMatchObject({ kind: 'unparsed', truncated: false });
    expect(c.message.alerts).toHaveLength(1);
    const [alert] = c.message.alerts;
    expect(alert!.labels).toEqual({
      alertname: UNPARSED_ALERTNAME,
      source: 'amp',
      sns_message_id: recorded('unparsable-custom').Records[0]!.Sns.MessageId,
    });
    expect(alert!.annotations).toMatchObject({
      summary: 'Unparsed alert from AMP: vLLM alert',
      description: 'KV cache is nearly full on qwen3-8b, see the dashboard',
      sns_message_attributes: 'team=inference',
      sns_topic_arn: 'arn:aws:sns:eu-west-1:123456789012:amp-alerts',
    });
    expect(alert).toMatchObject({ status: 'firing', startsAt: PUBLISHED, endsAt: GO_ZERO_TIME });
  });

  it('delivers what AMP put in place of a body that was not UTF-8, with its "modified" attribute', () => {
    const c = convert('unparsable-not-utf8');
    expect(c).toMatchObject({ kind: 'unparsed', truncated: true });
    expect(c.message.alerts[0]!.annotations.description).toBe('Error - not a valid UTF-8 encoded string');
    expect(c.message.alerts[0]!.annotations.sns_message_attributes).toBe(
      'truncated=true; modified=Message: Error - not a valid UTF-8 encoded string',
    );
  });
});

describe('unparsable bodies', () => {
  const message = (body: string, attributes: Record<string, string> = {}) =>
    convertAmpMessage({
      messageId: 'm-1',
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:amp-alerts',
      publishedAt: PUBLISHED,
      body,
      attributes,
    });

  it.each([
    ['JSON of another shape', '{"alarm": "cpu"}'],
    ['broken JSON', '{"receiver": "x", "status": '],
    ['JSON alerts without labels', '{"status":"firing","alerts":[{"status":"firing"}]}'],
    ['plain words', 'disk full'],
    ['an empty body', ''],
    ['a text whose section has no labels', 'Alerts Firing:\nsomething else\n'],
  ])('%s is delivered unparsed, with the reason', (_, body) => {
    const c = message(body);
    expect(c.kind).toBe('unparsed');
    expect(c.reason).toBeTruthy();
    expect(c.message.alerts[0]!.annotations.description).toBe(body === '' ? '(empty message)' : body);
  });

  it(`cuts the raw text to ${MAX_RAW_BYTES} bytes`, () => {
    const c = message('x'.repeat(300_000));
    expect(Buffer.byteLength(c.message.alerts[0]!.annotations.description!)).toBeLessThanOrEqual(MAX_RAW_BYTES);
    expect(c.message.alerts[0]!.annotations.description!.endsWith('…')).toBe(true);
  });

  it('gives two messages two alerts, and the same message (a retry) the same one', () => {
    const a = message('disk full');
    const b = convertAmpMessage({
      messageId: 'm-2',
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:amp-alerts',
      publishedAt: PUBLISHED,
      body: 'disk full',
      attributes: {},
    });
    expect(a.message.alerts[0]!.fingerprint).not.toBe(b.message.alerts[0]!.fingerprint);
    expect(message('disk full').message.alerts[0]!.fingerprint).toBe(a.message.alerts[0]!.fingerprint);
  });
});

describe('malformed SNS events', () => {
  it('are refused naming the field', () => {
    const event = recorded('firing-json');
    (event.Records[0]!.Sns as { Message?: unknown }).Message = undefined;
    expect(() => ampMessages(event)).toThrow(/Records\.0\.Sns\.Message/);
  });

  it('read a null Subject and missing attributes as none', () => {
    const event = recorded('firing-json');
    (event.Records[0]!.Sns as { Subject?: unknown }).Subject = null;
    (event.Records[0]!.Sns as { MessageAttributes?: unknown }).MessageAttributes = undefined;
    expect(ampMessages(event)[0]).toMatchObject({ subject: undefined, attributes: {} });
  });
});
