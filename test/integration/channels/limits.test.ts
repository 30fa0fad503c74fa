/**
 * The extreme cases, sent by the real channels to stand-ins that reject what the platforms reject
 * (platforms.ts): every message must be accepted, and say what it left out.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeishuChannel } from '../../../shared/channels/feishu/index.js';
import { createPagerDutyChannel } from '../../../shared/channels/pagerduty/index.js';
import { createSlackChannel } from '../../../shared/channels/slack/index.js';
import { createSnsChannel } from '../../../shared/channels/sns/index.js';
import { Secret } from '../../../shared/core/secret.js';
import { fixtureNotification, manyAlertsNotification, stormNotification } from '../../helpers/notifications.js';
import {
  startFeishuPlatform,
  startPagerDutyPlatform,
  startSlackPlatform,
  startSnsPlatform,
  type FeishuPlatform,
  type PagerDutyPlatform,
  type SlackPlatform,
  type SnsPlatform,
} from './platforms.js';

const SIGNING_SECRET = 'feishu-limits-secret';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:llm-oncall';
const signal = () => AbortSignal.timeout(5000);
const wellFormed = (s: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

let slack: SlackPlatform;
let feishu: FeishuPlatform;
let sns: SnsPlatform;
let pagerduty: PagerDutyPlatform;
let client: SNSClient;
beforeAll(async () => {
  [slack, feishu, sns, pagerduty] = await Promise.all([
    startSlackPlatform(),
    startFeishuPlatform({ secret: SIGNING_SECRET }),
    startSnsPlatform(),
    startPagerDutyPlatform(),
  ]);
  client = new SNSClient({
    endpoint: sns.endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
});
afterAll(async () => {
  client.destroy();
  await Promise.all([slack.close(), feishu.close(), sns.close(), pagerduty.close()]);
});

describe('Slack accepts the extremes', () => {
  const channel = (digestAbove?: number) =>
    createSlackChannel({ webhookUrl: new Secret(slack.url), name: 'slack-limits', digestAbove });

  it('60 alerts in detail: 50 blocks, the last one saying how many are left out', async () => {
    await channel(1000).send(manyAlertsNotification(60), signal());
    const { blocks } = slack.accepted.at(-1)!;
    expect(blocks).toHaveLength(50);
    expect(blocks.at(-1)!.text!.text).toBe('+36 more alerts');
  });

  it('a section cut right at an emoji, for every alignment, stays well-formed and at most 3,000 characters', async () => {
    for (let shift = 0; shift < 4; shift++) {
      const n = fixtureNotification('firing-kv-cache-critical');
      n.alerts[0]!.annotations.description = 'x'.repeat(2900 + shift) + '👨‍👩‍👧‍👦🔥'.repeat(40);
      await channel().send(n, signal());
      const section = slack.accepted.at(-1)!.blocks[1]!.text!.text;
      expect(section.length).toBeLessThanOrEqual(3000);
      expect(section.endsWith('…')).toBe(true);
      expect(wellFormed(section)).toBe(true);
    }
  });

  it('a header cut at 150 characters in the middle of emoji', async () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.commonLabels.alertname = `${'A'.repeat(120)}${'🔥'.repeat(40)}`;
    await channel().send(n, signal());
    const header = slack.accepted.at(-1)!.blocks[0]!.text!.text;
    expect(header.length).toBeLessThanOrEqual(150);
    expect(wellFormed(header)).toBe(true);
  });

  it('label values cannot mention @channel or forge links', async () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.alerts[0]!.labels.model_name = '<!channel> & <https://evil.example|click>';
    n.alerts[0]!.annotations.summary = '<@U024BE7LH> look';
    await channel().send(n, signal());
    const body = JSON.stringify(slack.accepted.at(-1));
    expect(body).not.toContain('<!channel>');
    expect(body).not.toContain('<@U024BE7LH>');
    expect(body).toContain('model_name: &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;');
  });

  it('a 5,000-alert storm as one digest', async () => {
    await channel().send(stormNotification(5000, 1497), signal());
    const { text, blocks } = slack.accepted.at(-1)!;
    expect(text.startsWith('🔥 FIRING · critical · Alert storm (6,497)')).toBe(true);
    expect(blocks.length).toBeLessThanOrEqual(50);
  });
});

describe('Feishu accepts the extremes (signed, in Chinese)', () => {
  const channel = (digestAbove?: number) =>
    createFeishuChannel({ webhookUrl: new Secret(feishu.url), secret: new Secret(SIGNING_SECRET), digestAbove });
  const bytesOf = (m: unknown) => Buffer.byteLength(JSON.stringify(m));

  it('60 alerts of Chinese text in detail: under 20 KB in bytes, saying how many are left out', async () => {
    const n = manyAlertsNotification(60);
    for (const a of n.alerts) a.annotations.description = '显存占用持续上升，疑似内存泄漏。'.repeat(20);
    await channel(1000).send(n, signal());
    const card = feishu.accepted.at(-1)!;
    expect(bytesOf(card)).toBeLessThanOrEqual(20 * 1024);
    const note = card.card.elements.at(-1) as unknown as { tag: string; elements: { content: string }[] };
    expect(note.tag).toBe('note');
    expect(note.elements[0]!.content).toMatch(/^另有 \d+ 条告警$/);
  });

  it('an alert text cut at an emoji stays well-formed', async () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.alerts[0]!.annotations.description = '告'.repeat(2950) + '🇨🇳👍🏽'.repeat(30);
    await channel().send(n, signal());
    const div = feishu.accepted.at(-1)!.card.elements[0]!.text!.content;
    expect(div.length).toBeLessThanOrEqual(3000);
    expect(wellFormed(div)).toBe(true);
    expect(div.endsWith('…')).toBe(true);
  });

  it('a 5,000-alert storm as one digest', async () => {
    await channel().send(stormNotification(5000, 1497), signal());
    expect(feishu.accepted.at(-1)!.card.header.title.content).toBe('🔥 告警 · critical · 告警风暴 (6,497)');
  });

  it('an alert too big for a card on its own is shown reduced, and does not hide the alerts after it', async () => {
    const n = fixtureNotification('firing-queue-backlog-two-models');
    const bad = structuredClone(n.alerts[0]!);
    bad.fingerprint = 'd3b07384d113edec';
    bad.annotations.summary = 'mistral-7b: 500 requests waiting';
    // Each control character is 6 bytes of JSON (\\u0001): 3,000 of them and two long links are over 20 KB.
    bad.annotations.description = '\u0001'.repeat(3000);
    bad.annotations.runbook_url = `https://runbooks.example.com/${'r'.repeat(2900)}`;
    bad.generatorURL = `http://prometheus.example.com:9090/graph?g0.expr=${'e'.repeat(2900)}`;
    n.alerts.unshift(bad);
    await channel().send(n, signal());
    const body = JSON.stringify(feishu.accepted.at(-1));
    for (const summary of [
      'mistral-7b: 500 requests waiting',
      'llama-3.1-70b: 85 requests waiting',
      'qwen3-8b: 80 requests waiting',
    ])
      expect(body).toContain(summary);
    expect(body).toContain('(cut)');
    expect(body).not.toContain('另有');
  });
});

describe('SNS accepts the extremes', () => {
  const channel = (topicArn = TOPIC, messageStructure?: 'json', digestAbove?: number) =>
    createSnsChannel({ client, topicArn, name: 'sns-limits', messageStructure, digestAbove });

  it('a message filled to 256 KiB with its attributes, plain and JSON-structured', async () => {
    const n = manyAlertsNotification(400);
    for (const a of n.alerts) a.annotations.description = 'é"\n'.repeat(300);
    await channel(TOPIC, undefined, 1000).send(n, signal());
    await channel(TOPIC, 'json', 1000).send(n, signal());
    const [plain, structured] = sns.delivered.slice(-2);
    expect(Buffer.byteLength(plain!.Message!)).toBeGreaterThan(250_000);
    expect(plain!.Message).toMatch(/\+\d+ more alerts$/);
    expect(structured!.params.MessageStructure).toBe('json');
    const body = JSON.parse(structured!.Message!) as Record<string, string>;
    expect(Object.keys(body)).toEqual(['default', 'email', 'sms']);
    expect(body.sms!.length).toBeLessThanOrEqual(140);
  });

  it('an alert with a description over the whole message limit is shown with it shortened, and does not hide the alerts after it', async () => {
    const n = fixtureNotification('firing-queue-backlog-two-models');
    const bad = structuredClone(n.alerts[0]!);
    bad.annotations.summary = 'mistral-7b: 500 requests waiting';
    bad.annotations.description = 'z'.repeat(300 * 1024);
    n.alerts.unshift(bad);
    await channel().send(n, signal());
    const message = sns.delivered.at(-1)!.Message!;
    for (const summary of [
      'mistral-7b: 500 requests waiting',
      'llama-3.1-70b: 85 requests waiting',
      'qwen3-8b: 80 requests waiting',
    ])
      expect(message).toContain(summary);
    expect(message).toMatch(/\nz{100,2999}…\n/);
    expect(message).not.toContain('more alert');
  });

  it('a subject of line breaks, tabs and Chinese reduced to printable ASCII', async () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.commonLabels.alertname = `内存\r\n泄漏\t${'X'.repeat(200)}`;
    await channel().send(n, signal());
    expect(sns.delivered.at(-1)!.Subject).toMatch(/^\[FIRING:1\] X+$/);
  });

  it('a FIFO topic drops the retry of the same events: delivered once', async () => {
    const fifo = channel(`${TOPIC}.fifo`);
    const before = sns.delivered.length;
    await fifo.send(fixtureNotification('firing-queue-backlog-two-models'), signal());
    await fifo.send(fixtureNotification('firing-queue-backlog-two-models'), signal());
    expect(sns.delivered.length - before).toBe(1);
    await fifo.send(fixtureNotification('resolved-queue-backlog-two-models'), signal());
    expect(sns.delivered.length - before).toBe(2);
  });

  it('a 5,000-alert storm as one digest', async () => {
    await channel(TOPIC, 'json').send(stormNotification(5000, 1497), signal());
    const body = JSON.parse(sns.delivered.at(-1)!.Message!) as Record<string, string>;
    expect(body.sms).toBe('FIRING critical Alert storm (6,497): model-2: VLLMKVCacheNearlyFull on replica 2');
    expect(body.email).toContain('+4,990 more alerts · +1,497 not included by Alertmanager');
  });
});

describe('PagerDuty accepts the extremes', () => {
  const channel = (digestAbove?: number) =>
    createPagerDutyChannel({
      routingKey: new Secret('e93facc04764012d7bfb002500d5d1a6'),
      eventsUrl: pagerduty.url,
      name: 'pagerduty-limits',
      digestAbove,
    });

  it('50 alerts in detail: 50 triggers, each its own dedup_key', async () => {
    const before = pagerduty.accepted.length;
    await channel().send(manyAlertsNotification(50), signal());
    const events = pagerduty.accepted.slice(before);
    expect(events).toHaveLength(50);
    expect(new Set(events.map((e) => e.dedup_key)).size).toBe(50);
  });

  it('a 5,000-alert storm as one trigger for the group', async () => {
    const before = pagerduty.accepted.length;
    await channel().send(stormNotification(5000, 1497), signal());
    const events = pagerduty.accepted.slice(before);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event_action: 'trigger',
      dedup_key: expect.stringMatching(/^group\/[0-9a-f]{64}$/),
      payload: { summary: expect.stringMatching(/^Alert storm: 6497 alerts \(5000 firing\)/), severity: 'critical' },
    });
  });

  it('an alert over 512 KB on its own, a summary of emoji, an odd fingerprint: accepted, the others too', async () => {
    const n = fixtureNotification('firing-queue-backlog-two-models');
    const bad = structuredClone(n.alerts[0]!);
    bad.fingerprint = `sender-without-fingerprints:${'x'.repeat(300)}`;
    bad.annotations.summary = '🔥'.repeat(800);
    bad.annotations.description = 'd'.repeat(600 * 1024);
    n.alerts.unshift(bad);
    const before = pagerduty.accepted.length;
    await channel().send(n, signal());
    const events = pagerduty.accepted.slice(before);
    expect(events).toHaveLength(3);
    expect(events[0]!.payload!.summary.length).toBeLessThanOrEqual(1024);
    expect(wellFormed(events[0]!.payload!.summary)).toBe(true);
    expect(events[0]!.payload!.custom_details).toMatchObject({ details_cut: expect.any(String) });
    expect(events.slice(1).map((e) => e.payload!.summary)).toEqual(
      n.alerts.slice(1).map((a) => expect.stringContaining(a.annotations.summary!)),
    );
  });
});
