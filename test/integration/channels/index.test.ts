import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildChannels } from '../../../shared/channels/index.js';
import { loadConfig } from '../../../shared/config.js';
import { startLoopback, type Loopback } from '../../helpers/loopback.js';
import { startSnsServer, type SnsStandIn } from '../../helpers/sns-server.js';
import { fixtureNotification } from '../../unit/channels/notifications.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:llm-alerts';

describe('buildChannels', () => {
  let hooks: Loopback;
  let sns: SnsStandIn;
  beforeAll(async () => {
    hooks = await startLoopback((request) =>
      request.path.startsWith('/feishu') ? { status: 200, body: '{"code":0,"msg":"success"}' } : { status: 200, body: 'ok' },
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
    expect(String(sns.requests[0]!.headers.authorization)).toMatch(/Credential=test\/\d{8}\/eu-west-1\/sns\/aws4_request/);
    expect(sns.requests[0]!.headers['amz-sdk-request']).toBe('attempt=1; max=1');
  });
});
