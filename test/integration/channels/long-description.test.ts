/**
 * A long free-text description must never hide what identifies an alert: two alerts differing only
 * by `instance`, each with a ~3.6 KB description (the breakit probe `long-description.sh`), sent by
 * every real channel to the platform stand-ins. Each alert's text must still show its instance and
 * model line, the enrichment (here: why it is unavailable), the start time and who acknowledged it;
 * the description is what is shortened, visibly (`…`).
 */
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleChannel } from '../../../shared/channels/console.js';
import { createFeishuChannel } from '../../../shared/channels/feishu/index.js';
import { createSlackChannel } from '../../../shared/channels/slack/index.js';
import { createSnsChannel } from '../../../shared/channels/sns/index.js';
import type { Notification } from '../../../shared/render/notification.js';
import { Secret } from '../../../shared/core/secret.js';
import { fixtureNotification, UNAVAILABLE } from '../../helpers/notifications.js';
import {
  startFeishuPlatform,
  startSlackPlatform,
  startSnsPlatform,
  type FeishuPlatform,
  type SlackPlatform,
  type SnsPlatform,
} from './platforms.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:llm-long-description';
const signal = () => AbortSignal.timeout(5000);
const DESCRIPTION = `Top offenders:\n${Array.from({ length: 120 }, (_, i) => `request ${i}: prompt_tokens=8192 stuck in prefill`).join('\n')}`;
const INSTANCES = ['10.0.0.7:8000', '10.0.0.8:8000'];

/** Two KV-cache alerts differing only by `instance`, long description, no enrichment, the first acknowledged. */
function longDescriptionNotification(): Notification {
  const n = fixtureNotification('firing-kv-cache-critical');
  const base = n.alerts[0]!;
  base.annotations.description = DESCRIPTION;
  base.labels.model_name = 'qwen3-8b';
  n.alerts = INSTANCES.map((instance, i) => ({
    ...structuredClone(base),
    fingerprint: `00000000000000a${i}`,
    labels: { ...base.labels, instance },
    enrichment: UNAVAILABLE,
    ...(i === 0 && { acknowledgement: { by: 'alice', at: '2026-11-30T12:05:00Z', channel: 'slack' } }),
  }));
  return n;
}

/** What each alert's text must still say, whatever the channel's limit. */
function expectIdentified(text: string, instance: string, acknowledged: boolean): void {
  expect(text).toContain(`instance: ${instance}`);
  expect(text).toContain('model_name: qwen3-8b');
  expect(text).toMatch(/Prometheus query timed out after 2000 ms|Prometheus 查询/);
  expect(text).toMatch(/(Started|开始于?) \d{4}-\d\d-\d\d/);
  if (acknowledged) expect(text).toContain('alice');
  expect(text).toContain('Top offenders:');
  expect(text).toContain('…');
  expect(text).not.toContain('request 119:');
}

let slack: SlackPlatform;
let feishu: FeishuPlatform;
let sns: SnsPlatform;
let client: SNSClient;
beforeAll(async () => {
  [slack, feishu, sns] = await Promise.all([startSlackPlatform(), startFeishuPlatform(), startSnsPlatform()]);
  client = new SNSClient({
    endpoint: sns.endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
});
afterAll(async () => {
  client.destroy();
  await Promise.all([slack.close(), feishu.close(), sns.close()]);
});

describe('a long description never hides which alert it is', () => {
  it('Slack: each section names its instance, enrichment, start and acknowledgement; the description is cut', async () => {
    await createSlackChannel({ webhookUrl: new Secret(slack.url) }).send(longDescriptionNotification(), signal());
    const sections = slack.accepted
      .at(-1)!
      .blocks.filter((b) => b.type === 'section')
      .map((b) => b.text!.text);
    expect(sections).toHaveLength(2);
    expect(sections[0]).not.toBe(sections[1]);
    INSTANCES.forEach((instance, i) => expectIdentified(sections[i]!, instance, i === 0));
  });

  it('Feishu: each alert block names its instance, enrichment, start and acknowledgement; the description is cut', async () => {
    await createFeishuChannel({ webhookUrl: new Secret(feishu.url), locale: 'en' }).send(
      longDescriptionNotification(),
      signal(),
    );
    const divs = feishu.accepted
      .at(-1)!
      .card.elements.filter((e) => e.tag === 'div')
      .map((e) => e.text!.content);
    expect(divs).toHaveLength(2);
    INSTANCES.forEach((instance, i) => expectIdentified(divs[i]!, instance, i === 0));
  });

  it('SNS (e-mail): each alert paragraph starts with what identifies it; the description is cut', async () => {
    await createSnsChannel({ client, topicArn: TOPIC, name: 'sns-long' }).send(longDescriptionNotification(), signal());
    const paragraphs = sns.delivered.at(-1)!.Message!.split('\n\n').slice(1);
    INSTANCES.forEach((instance, i) => expectIdentified(paragraphs[i]!, instance, i === 0));
  });

  it('console: the same', async () => {
    let out = '';
    await createConsoleChannel((s) => (out += s)).send(longDescriptionNotification(), signal());
    const paragraphs = out.split('\n│\n').slice(1);
    INSTANCES.forEach((instance, i) => expectIdentified(paragraphs[i]!, instance, i === 0));
  });
});
