import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildChannels } from '../../../shared/runtime/channels.js';
import { loadConfig } from '../../../shared/runtime/config.js';
import { startLoopback, type Loopback } from '../../helpers/loopback.js';
import { startSnsServer, type SnsStandIn } from '../../helpers/sns-server.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:llm-alerts';

describe('buildChannels', () => {
  let hooks: Loopback;
  let sns: SnsStandIn;
  beforeAll(async () => {
    hooks = await startLoopback((request) =>
      request.path.startsWith('/feishu')
        ? { status: 200, body: '{"code":0,"msg":"success"}' }
        : { status: 200, body: 'ok' },
    );
    sns = await startSnsServer();
  });
  afterAll(async () => {
    await hooks.close();
    await sns.close();
  });
  afterEach(() => vi.unstubAllEnvs());

  it('falls back to the console when nothing is configured', async () => {
    const written: string[] = [];
    const channels = buildChannels(loadConfig({}), { write: (s) => written.push(s) });
    expect(channels.map((c) => c.name)).toEqual(['console']);
    await channels[0]!.send(fixtureNotification('firing-kv-cache-critical'), AbortSignal.timeout(5000));
    expect(written.join('')).toContain('🔥 FIRING · critical · VLLMKVCacheNearlyFull (1)');
  });

  it('builds slack, feishu and sns, in that order, and each delivers', async () => {
    // The SDK's own settings: the stand-in endpoint and test credentials. AWS_REGION differs
    // from the topic's region on purpose: the ARN's region must win.
    vi.stubEnv('AWS_ENDPOINT_URL_SNS', sns.endpoint);
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    vi.stubEnv('AWS_REGION', 'us-west-2');
    vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
    const config = loadConfig({
      SLACK_WEBHOOK_URL: `${hooks.url}/slack/T1/B2/x`,
      FEISHU_WEBHOOK_URL: `${hooks.url}/feishu/hook/y`,
      FEISHU_SECRET: 'signing-secret',
      SNS_TOPIC_ARN: TOPIC,
    });
    const channels = buildChannels(config, { now: () => new Date('2026-11-29T12:00:00Z') });
    expect(channels.map((c) => c.name)).toEqual(['slack', 'feishu', 'sns']);
    const n = fixtureNotification('firing-gpu-memory-leak');
    const results = await Promise.allSettled(channels.map((c) => c.send(n, AbortSignal.timeout(5000))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(hooks.requests.map((r) => r.path)).toEqual(['/slack/T1/B2/x', '/feishu/hook/y']);
    const feishuBody = JSON.parse(hooks.requests[1]!.body.toString('utf8')) as { timestamp?: string };
    expect(feishuBody.timestamp).toBe(String(Date.parse('2026-11-29T12:00:00Z') / 1000));
    expect(sns.publishes.map((p) => p.TopicArn)).toEqual([TOPIC]);
    expect(String(sns.requests[0]!.headers.authorization)).toMatch(
      /Credential=test\/\d{8}\/eu-west-1\/sns\/aws4_request/,
    );
    expect(sns.requests[0]!.headers['amz-sdk-request']).toBe('attempt=1; max=1');
  });

  it('adds the routing file instances after the environment ones, each with its own URL, locale and topic region', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_SNS', sns.endpoint);
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
    const dir = mkdtempSync(join(tmpdir(), 'channels-'));
    const file = join(dir, 'routing.yml');
    writeFileSync(
      file,
      `channels:
  platform: { type: slack, webhookUrl: { secret: PLATFORM_URL } }
  qwen: { type: feishu, webhookUrl: { secret: QWEN_URL }, locale: en }
  pager: { type: sns, topicArn: arn:aws:sns:us-east-1:123456789012:pager }
default: { channels: [platform, qwen, pager, sns] }
`,
    );
    const config = loadConfig({
      SNS_TOPIC_ARN: TOPIC,
      ROUTING_FILE: file,
      PLATFORM_URL: `${hooks.url}/slack/platform`,
      QWEN_URL: `${hooks.url}/feishu/qwen`,
    });
    rmSync(dir, { recursive: true, force: true });
    const channels = buildChannels(config);
    expect(channels.map((c) => c.name)).toEqual(['sns', 'platform', 'qwen', 'pager']);
    const before = { hooks: hooks.requests.length, sns: sns.requests.length };
    const n = fixtureNotification('firing-kv-cache-critical');
    const results = await Promise.allSettled(channels.map((c) => c.send(n, AbortSignal.timeout(5000))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    const posted = hooks.requests.slice(before.hooks);
    expect(posted.map((r) => r.path).sort()).toEqual(['/feishu/qwen', '/slack/platform']);
    const feishuCard = JSON.parse(posted.find((r) => r.path === '/feishu/qwen')!.body.toString('utf8')) as {
      card: { header: { title: { content: string } } };
    };
    expect(feishuCard.card.header.title.content).toBe('🔥 FIRING · critical · VLLMKVCacheNearlyFull (1)');
    const regions = sns.requests
      .slice(before.sns)
      .map((r) => /Credential=test\/\d{8}\/([a-z0-9-]+)\//.exec(String(r.headers.authorization))?.[1])
      .sort();
    expect(regions).toEqual(['eu-west-1', 'us-east-1']);
  });
});
