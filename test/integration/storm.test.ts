/**
 * An alert storm through the real app: 5,000 alerts in one group (and 1,497 more Alertmanager left
 * out), the ledger on dynalite, the environment-variable channels (`slack`, `feishu`, `sns`) pointed
 * at stand-ins that reject anything over the platforms' limits. One readable digest per channel,
 * and nothing again when the same group comes back.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { createLogger } from '../../shared/core/logger.js';
import { createDeps } from '../../shared/runtime/deps.js';
import { startFeishuPlatform, startSlackPlatform, startSnsPlatform, type FeishuPlatform, type SlackPlatform, type SnsPlatform } from './channels/platforms.js';
import { stormWebhook } from './storm-webhook.js';

let db: LocalDynamoDb;
let slack: SlackPlatform;
let feishu: FeishuPlatform;
let sns: SnsPlatform;
let client: SNSClient;
const events: Record<string, unknown>[] = [];

beforeAll(async () => {
  [db, slack, feishu, sns] = await Promise.all([startLocalDynamoDb('storm-test'), startSlackPlatform(), startFeishuPlatform({ secret: 'storm-secret' }), startSnsPlatform()]);
  client = new SNSClient({ endpoint: sns.endpoint, region: 'eu-west-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
});
afterAll(async () => {
  client.destroy();
  await Promise.all([db.close(), slack.close(), feishu.close(), sns.close()]);
});

describe('a 5,000-alert storm', () => {
  it('becomes one digest per channel, within every platform limit, and is not sent again', async () => {
    const config = loadConfig({
      // In-process requests carry no token: serve them (the fail-closed default answers 503).
      ALLOW_UNAUTHENTICATED: 'true',
      SLACK_WEBHOOK_URL: slack.url,
      FEISHU_WEBHOOK_URL: feishu.url,
      FEISHU_SECRET: 'storm-secret',
      SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:llm-alerts',
      TABLE_NAME: 'storm-test',
      // Prometheus is set but unreachable: a storm must not query it for alerts no message shows.
      PROMETHEUS_URL: 'http://127.0.0.1:9',
    });
    const keep = new Set(['alert storm', 'flapping not tracked', 'group enriched', 'channel delivered']);
    const logger = createLogger('info', (line) => {
      const event = JSON.parse(line) as Record<string, unknown>;
      if (keep.has(event.event as string)) events.push(event);
    });
    const deps = createDeps(config, { dynamodb: db.client, sns: client }, logger);
    const app = createApp(config, deps);
    const body = JSON.stringify(stormWebhook(5000, 1497));
    const post = () => app.request('/v1/alertmanager', { method: 'POST', body, headers: { 'content-type': 'application/json' } });

    const first = await post();
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({
      received: 5000,
      notified: 5000,
      ok: true,
      channels: { slack: { status: 'delivered', alerts: 5000 }, feishu: { status: 'delivered', alerts: 5000 }, sns: { status: 'delivered', alerts: 5000 } },
    });
    expect([slack.accepted.length, feishu.accepted.length, sns.delivered.length]).toEqual([1, 1, 1]);

    const { blocks } = slack.accepted[0]!;
    expect(blocks[0]!.text!.text).toBe('🔥 FIRING · critical · Alert storm (6,497)');
    expect(blocks[1]!.text!.text).toContain('By severity: critical *2,000* · warning *3,000*');
    expect(blocks[3]!.text!.text).toBe('+4,990 more alerts · +1,497 not included by Alertmanager');
    expect(feishu.accepted[0]!.card.header.title.content).toBe('🔥 告警 · critical · 告警风暴 (6,497)');
    const publish = sns.delivered[0]!;
    expect(publish.Subject!.length).toBeLessThanOrEqual(100);
    expect(publish.Message).toContain('By model: model-0 417 · model-1 417');
    expect(publish.Message).toContain('+4,990 more alerts · +1,497 not included by Alertmanager');

    expect(events.find((e) => e.event === 'alert storm')).toMatchObject({ alerts: 5000, enriched: 0, truncatedAlerts: 1497 });
    expect(events.find((e) => e.event === 'flapping not tracked')).toMatchObject({ firing: 5000 });
    expect(events.some((e) => e.event === 'group enriched')).toBe(false);

    const repeat = await post();
    expect(await repeat.json()).toMatchObject({ received: 5000, notified: 0, duplicates: 5000, channels: {} });
    expect([slack.accepted.length, feishu.accepted.length, sns.delivered.length]).toEqual([1, 1, 1]);
  }, 120_000);
});
