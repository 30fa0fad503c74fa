/**
 * Routing end to end in-process: a routing file loaded by `loadConfig`, the app and pipeline wired by
 * `createDeps`, the ledger on dynalite, and every channel instance a platform stand-in that enforces
 * the real limits. Asserts who receives what, and that a partial failure is repaired by
 * Alertmanager's retry without a duplicate anywhere.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { silentLogger } from '../../shared/core/logger.js';
import { createDeps } from '../../shared/runtime/deps.js';
import { fixture, fixtureText } from '../helpers/fixtures.js';
import {
  startFeishuPlatform,
  startSlackPlatform,
  startSnsPlatform,
  type FeishuPlatform,
  type SlackPlatform,
  type SnsPlatform,
} from './channels/platforms.js';

const PAGER_TOPIC = 'arn:aws:sns:eu-west-1:123456789012:llm-oncall';

// The fixtures carry `kind` values of an older rule set (cache, memory, queue), so this file routes by alertname.
const ROUTING = `
channels:
  pager: { type: sns, topicArn: ${PAGER_TOPIC}, messageStructure: json }
  platform-slack: { type: slack, webhookUrl: { secret: SLACK_PLATFORM_URL } }
  gpu-slack: { type: slack, webhookUrl: { secret: SLACK_GPU_URL } }
  qwen-feishu: { type: feishu, webhookUrl: { secret: FEISHU_QWEN_URL }, signingSecret: { secret: FEISHU_QWEN_SECRET } }
routes:
  - matchers: ['model_name=~"qwen3-.*"']
    channels: [qwen-feishu]
    continue: true
  - matchers: ['severity="critical"', 'alertname="VLLMKVCacheNearlyFull"']
    channels: [pager, platform-slack]
  - matchers: ['alertname="GPUMemoryLeak"']
    channels: [gpu-slack]
default:
  channels: [platform-slack]
`;

let db: LocalDynamoDb;
let platform: SlackPlatform;
let gpu: SlackPlatform;
let feishu: FeishuPlatform;
let sns: SnsPlatform;
let client: SNSClient;
let dir: string;
let tables = 0;

beforeAll(async () => {
  [db, platform, gpu, feishu, sns] = await Promise.all([
    startLocalDynamoDb('routing-0'),
    startSlackPlatform(),
    startSlackPlatform(),
    startFeishuPlatform({ secret: 'qwen-signing-secret' }),
    startSnsPlatform(),
  ]);
  client = new SNSClient({
    endpoint: sns.endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  dir = mkdtempSync(join(tmpdir(), 'routing-it-'));
  writeFileSync(join(dir, 'routing.yml'), ROUTING);
});
afterAll(async () => {
  client.destroy();
  rmSync(dir, { recursive: true, force: true });
  await Promise.all([db.close(), platform.close(), gpu.close(), feishu.close(), sns.close()]);
});

let app: ReturnType<typeof createApp>;
beforeEach(async () => {
  const tableName = `routing-${++tables}`;
  await ensureTable(db.client, tableName);
  const config = loadConfig({
    // In-process requests carry no token: serve them (the fail-closed default answers 503).
    ALLOW_UNAUTHENTICATED: 'true',
    ROUTING_FILE: join(dir, 'routing.yml'),
    SLACK_PLATFORM_URL: platform.url,
    SLACK_GPU_URL: gpu.url,
    FEISHU_QWEN_URL: feishu.url,
    FEISHU_QWEN_SECRET: 'qwen-signing-secret',
    TABLE_NAME: tableName,
    DELIVERY_RETRIES: '1',
    DELIVERY_TIMEOUT_MS: '2000',
  });
  app = createApp(config, createDeps(config, { dynamodb: db.client, sns: client }, silentLogger));
});

const post = (body: string) =>
  app.request('/v1/alertmanager', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
const counts = () => ({
  platform: platform.accepted.length,
  gpu: gpu.accepted.length,
  feishu: feishu.accepted.length,
  pager: sns.delivered.length,
});
const delta = (before: ReturnType<typeof counts>) => {
  const now = counts();
  return {
    platform: now.platform - before.platform,
    gpu: now.gpu - before.gpu,
    feishu: now.feishu - before.feishu,
    pager: now.pager - before.pager,
  };
};

describe('routing through the app', () => {
  it('pages, posts and tells the model team about a critical KV-cache alert on qwen3-8b', async () => {
    const before = counts();
    const res = await post(fixtureText('firing-kv-cache-critical'));
    expect(res.status).toBe(200);
    expect(Object.keys(((await res.json()) as { channels: object }).channels).sort()).toEqual([
      'pager',
      'platform-slack',
      'qwen-feishu',
    ]);
    expect(delta(before)).toEqual({ platform: 1, gpu: 0, feishu: 1, pager: 1 });
    expect(feishu.accepted.at(-1)!.card.header.title.content).toBe('🔥 告警 · critical · VLLMKVCacheNearlyFull (1)');
    const pager = sns.delivered.at(-1)!;
    expect(pager.TopicArn).toBe(PAGER_TOPIC);
    expect(JSON.parse(pager.Message!).sms).toBe(
      'FIRING critical VLLMKVCacheNearlyFull (1): KV cache 97% full on qwen3-8b',
    );
  });

  it('splits one group by route; a continue route that matched alone means no default (as in Alertmanager)', async () => {
    const before = counts();
    await post(fixtureText('firing-queue-backlog-two-models'));
    expect(delta(before)).toEqual({ platform: 1, gpu: 0, feishu: 1, pager: 0 });
    // llama-3.1-70b matches no route: the default. qwen3-8b matches only the continue route: its team only.
    expect(platform.accepted.at(-1)!.text).toBe(
      '🔥 FIRING · warning · VLLMQueueBacklog (1)\nllama-3.1-70b: 85 requests waiting',
    );
    const feishuText = JSON.stringify(feishu.accepted.at(-1));
    expect(feishuText).toContain('qwen3-8b: 80 requests waiting');
    expect(feishuText).not.toContain('llama-3.1-70b');
  });

  it('sends GPU memory to the hardware channel only', async () => {
    const before = counts();
    await post(fixtureText('firing-gpu-memory-leak'));
    expect(delta(before)).toEqual({ platform: 0, gpu: 1, feishu: 0, pager: 0 });
  });

  it('after a partial failure, Alertmanager’s retry reaches only the failed instance: no duplicate anywhere', async () => {
    const before = counts();
    // Both attempts of the request fail with 5xx (DELIVERY_RETRIES=1).
    platform.server.reply({ status: 500, body: 'internal_error' }, { status: 503, body: 'service_unavailable' });
    const first = await post(fixtureText('firing-kv-cache-critical'));
    expect(first.status).toBe(502);
    expect(((await first.json()) as { channels: Record<string, { status: string }> }).channels).toMatchObject({
      pager: { status: 'delivered' },
      'qwen-feishu': { status: 'delivered' },
      'platform-slack': { status: 'failed' },
    });
    expect(delta(before)).toEqual({ platform: 0, gpu: 0, feishu: 1, pager: 1 });

    const retry = await post(fixtureText('firing-kv-cache-critical'));
    expect(retry.status).toBe(200);
    expect(Object.keys(((await retry.json()) as { channels: object }).channels)).toEqual(['platform-slack']);
    const again = await post(fixtureText('firing-kv-cache-critical'));
    expect(await again.json()).toMatchObject({ notified: 0, duplicates: 1, channels: {} });
    expect(delta(before)).toEqual({ platform: 1, gpu: 0, feishu: 1, pager: 1 });
  });

  it('an alert no route matches goes to the default route', async () => {
    const body = fixture('firing-kv-cache-critical');
    body.alerts[0]!.labels = { alertname: 'SomethingNew', severity: 'info' };
    body.alerts[0]!.fingerprint = 'f-something-new';
    const before = counts();
    await post(JSON.stringify(body));
    expect(delta(before)).toEqual({ platform: 1, gpu: 0, feishu: 0, pager: 0 });
  });
});
