/**
 * An alert storm through the real app: 60 alerts in one group (and 1,497 more Alertmanager left
 * out; a storm is anything over a channel's `digestAbove`, so 60 shows the behaviour of 5,000,
 * whose size and time `npm run bench -- floor` measures), the ledger on dynalite, the environment-variable channels (`slack`, `feishu`, `sns`) pointed
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
import {
  startFeishuPlatform,
  startSlackPlatform,
  startSnsPlatform,
  type FeishuPlatform,
  type SlackPlatform,
  type SnsPlatform,
} from './channels/platforms.js';
import { stormWebhook } from './storm-webhook.js';

/** Alerts in the storm: over every channel's `digestAbove` and over the flap-tracking limit (50). */
const STORM = 60;
let db: LocalDynamoDb;
let slack: SlackPlatform;
let feishu: FeishuPlatform;
let sns: SnsPlatform;
let client: SNSClient;
const events: Record<string, unknown>[] = [];

beforeAll(async () => {
  [db, slack, feishu, sns] = await Promise.all([
    startLocalDynamoDb('storm-test'),
    startSlackPlatform(),
    startFeishuPlatform({ secret: 'storm-secret' }),
    startSnsPlatform(),
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
  await Promise.all([db.close(), slack.close(), feishu.close(), sns.close()]);
});

describe('an alert storm (60 alerts)', () => {
  it('becomes one digest per channel, within every platform limit, and is not sent again', async () => {
    const config = loadConfig({
      // In-process requests carry no token: serve them (the fail-closed default answers 503).
      ALLOW_UNAUTHENTICATED: 'true',
      SLACK_WEBHOOK_URL: slack.url,
      FEISHU_WEBHOOK_URL: feishu.url,
      FEISHU_SECRET: 'storm-secret',
      SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:llm-alerts',
      TABLE_NAME: 'storm-test',
      // Prometheus is set but unreachable: the storm is enriched once for the group (O(kinds) queries)
      // and the digest goes out without values.
      PROMETHEUS_URL: 'http://127.0.0.1:9',
    });
    const keep = new Set(['alert storm', 'flapping not tracked', 'group enriched', 'channel delivered']);
    const logger = createLogger('info', (line) => {
      const event = JSON.parse(line) as Record<string, unknown>;
      if (keep.has(event.event as string)) events.push(event);
    });
    const deps = createDeps(config, { dynamodb: db.client, sns: client }, logger);
    const app = createApp(config, deps);
    const body = JSON.stringify(stormWebhook(STORM, 1497));
    const post = () =>
      app.request('/v1/alertmanager', { method: 'POST', body, headers: { 'content-type': 'application/json' } });

    const first = await post();
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({
      received: STORM,
      notified: STORM,
      ok: true,
      channels: {
        slack: { status: 'delivered', alerts: STORM },
        feishu: { status: 'delivered', alerts: STORM },
        sns: { status: 'delivered', alerts: STORM },
      },
    });
    expect([slack.accepted.length, feishu.accepted.length, sns.delivered.length]).toEqual([1, 1, 1]);

    const { blocks } = slack.accepted[0]!;
    expect(blocks[0]!.text!.text).toBe('🔥 FIRING · critical · Alert storm (1,557)');
    expect(blocks[1]!.text!.text).toContain('By severity: critical *24* · warning *36*');
    expect(blocks[3]!.text!.text).toBe('+50 more alerts · +1,497 not included by Alertmanager');
    expect(feishu.accepted[0]!.card.header.title.content).toBe('🔥 告警 · critical · 告警风暴 (1,557)');
    const publish = sns.delivered[0]!;
    expect(publish.Subject!.length).toBeLessThanOrEqual(100);
    expect(publish.Message).toContain('By model: model-0 5 · model-1 5');
    expect(publish.Message).toContain('+50 more alerts · +1,497 not included by Alertmanager');

    expect(events.find((e) => e.event === 'alert storm')).toMatchObject({ alerts: STORM, truncatedAlerts: 1497 });
    expect(events.find((e) => e.event === 'flapping not tracked')).toMatchObject({ firing: STORM });
    expect(events.filter((e) => e.event === 'group enriched')).toEqual([expect.objectContaining({ alerts: STORM })]);

    const repeat = await post();
    expect(await repeat.json()).toMatchObject({ received: STORM, notified: 0, duplicates: STORM, channels: {} });
    expect([slack.accepted.length, feishu.accepted.length, sns.delivered.length]).toEqual([1, 1, 1]);
  }, 120_000);
});
