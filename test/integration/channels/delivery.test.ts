/**
 * Delivery through the real channels against the platform stand-ins: what is retried (429 with
 * Retry-After, Feishu's rate-limit codes, SNS throttling), what is not (configuration errors), what
 * is logged (the platform's error text with the channel's name), and the budget. The waits between
 * attempts are made on a test clock (`clock.waits`): asserted, never spent.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeishuChannel } from '../../../shared/channels/feishu/index.js';
import { createSlackChannel } from '../../../shared/channels/slack/index.js';
import { createSnsChannel } from '../../../shared/channels/sns/index.js';
import { DeliveryError } from '../../../shared/channels/channel.js';
import { deliver, UNKNOWN_OUTCOME_MIN_WAIT_MS } from '../../../shared/channels/deliver.js';
import { createLogger } from '../../../shared/core/logger.js';
import { Secret } from '../../../shared/core/secret.js';
import { testClock, withRealTime } from '../../helpers/clock.js';
import { startLoopback } from '../../helpers/loopback.js';
import { fixtureNotification } from '../../helpers/notifications.js';
import {
  startFeishuPlatform,
  startSlackPlatform,
  startSnsPlatform,
  type FeishuPlatform,
  type SlackPlatform,
  type SnsPlatform,
} from './platforms.js';

let slack: SlackPlatform;
let feishu: FeishuPlatform;
let sns: SnsPlatform;
beforeAll(async () => {
  [slack, feishu, sns] = await Promise.all([
    startSlackPlatform(),
    startFeishuPlatform({ secret: 'right-secret' }),
    startSnsPlatform(),
  ]);
});
afterAll(() => Promise.all([slack.close(), feishu.close(), sns.close()]));

function capture() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger('debug', (line) => lines.push(JSON.parse(line) as Record<string, unknown>)) };
}
const n = () => fixtureNotification('firing-kv-cache-critical');

/** The SNS channel `sns-pager` through the real AWS SDK (one attempt per call: the pipeline retries) at `endpoint`. */
function snsChannelAt(endpoint: string) {
  const client = new SNSClient({
    endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  const channel = createSnsChannel({ client, topicArn: 'arn:aws:sns:eu-west-1:123456789012:pager', name: 'sns-pager' });
  return { client, channel };
}

describe('deliver with the real channels', () => {
  it('waits out Slack’s Retry-After on 429, then delivers once', async () => {
    const { lines, logger } = capture();
    const channel = createSlackChannel({ webhookUrl: new Secret(slack.url), name: 'slack-platform' });
    slack.rateLimit(1, 2);
    const before = slack.accepted.length;
    const clock = testClock();
    expect(await deliver(channel, n(), { timeoutMs: 2000, retries: 2, budgetMs: 10_000, logger, clock })).toBe(2);
    // Exactly the 2 s Slack asked for, instead of the backoff (at most 1 s before the first retry).
    expect(clock.waits).toEqual([2000]);
    expect(slack.accepted.length - before).toBe(1);
    expect(lines.find((l) => l.event === 'channel attempt failed')).toMatchObject({
      channel: 'slack-platform',
      attempt: 1,
      retry: true,
      error: 'slack-platform: HTTP 429: rate_limited',
    });
  });

  it('gives up at once when Slack’s Retry-After outlasts the budget: a try inside the window is refused again', async () => {
    const { lines, logger } = capture();
    const channel = createSlackChannel({ webhookUrl: new Secret(slack.url), name: 'slack-platform' });
    slack.rateLimit(5, 30);
    const before = slack.arrivals.length;
    const clock = testClock();
    const err = await deliver(channel, n(), { timeoutMs: 2000, retries: 2, budgetMs: 10_000, logger, clock })
      .catch((e: unknown) => e)
      .finally(() => slack.rateLimit(0, 1));
    expect(err).toBeInstanceOf(DeliveryError);
    expect((err as DeliveryError).retryAfterMs).toBe(30_000);
    // One request: no wait cut short to fit the budget, no second request that Slack would refuse again.
    expect(slack.arrivals.length - before).toBe(1);
    expect(clock.waits).toEqual([]);
    expect(lines.find((l) => l.event === 'channel attempt failed')).toMatchObject({ attempt: 1, retry: false });
  });

  it('logs Slack’s plain-text error with the channel name and does not retry it', async () => {
    const { lines, logger } = capture();
    const hook = await startLoopback({
      status: 404,
      headers: { 'content-type': 'text/plain' },
      body: 'channel_not_found',
    });
    const channel = createSlackChannel({
      webhookUrl: new Secret(`${hook.url}/services/T/B/x`),
      name: 'slack-gpu-infra',
    });
    const err = await deliver(channel, n(), { timeoutMs: 2000, retries: 3, budgetMs: 10_000, logger }).catch(
      (e: unknown) => e,
    );
    await hook.close();
    expect(err).toMatchObject({ retryable: false, message: 'slack-gpu-infra: HTTP 404: channel_not_found' });
    expect(hook.requests).toHaveLength(1);
    expect(lines.filter((l) => l.event === 'channel attempt failed')).toEqual([
      expect.objectContaining({
        level: 'warn',
        channel: 'slack-gpu-infra',
        retry: false,
        error: 'slack-gpu-infra: HTTP 404: channel_not_found',
      }),
    ]);
  });

  it.each([9499, 11232] as const)(
    'retries Feishu’s rate-limit code %i (HTTP 200) with backoff, then delivers',
    async (code) => {
      const channel = createFeishuChannel({
        webhookUrl: new Secret(feishu.url),
        secret: new Secret('right-secret'),
        name: 'feishu-qwen',
      });
      feishu.rateLimit(2, code);
      const before = feishu.accepted.length;
      const clock = testClock();
      const options = { timeoutMs: 2000, retries: 3, budgetMs: 10_000, logger: capture().logger, clock };
      expect(await deliver(channel, n(), options)).toBe(3);
      expect(feishu.accepted.length - before).toBe(1);
      // Exponential backoff with jitter: 500 ms then 1 s, each × 1–2.
      expect(clock.waits).toHaveLength(2);
      expect(clock.waits[0]).toBeGreaterThanOrEqual(500);
      expect(clock.waits[0]).toBeLessThanOrEqual(1000);
      expect(clock.waits[1]).toBeGreaterThanOrEqual(1000);
      expect(clock.waits[1]).toBeLessThanOrEqual(2000);
    },
  );

  it('reports a Feishu signature failure as a configuration error after one attempt', async () => {
    const channel = createFeishuChannel({
      webhookUrl: new Secret(feishu.url),
      secret: new Secret('wrong-secret'),
      name: 'feishu-qwen',
    });
    const requests = feishu.server.requests.length;
    const err = await deliver(channel, n(), {
      timeoutMs: 2000,
      retries: 3,
      budgetMs: 10_000,
      logger: capture().logger,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryError);
    expect((err as Error).message).toMatch(/^feishu-qwen: code 19021: .*\(configuration error: signature check failed/);
    expect(feishu.server.requests.length - requests).toBe(1);
  });

  it('retries SNS throttling (an XML error) and delivers once', async () => {
    const { client, channel } = snsChannelAt(sns.endpoint);
    sns.failNext(400, 'Throttling', 'Rate exceeded');
    const before = sns.delivered.length;
    const clock = testClock();
    const options = { timeoutMs: 2000, retries: 2, budgetMs: 10_000, logger: capture().logger, clock };
    expect(await deliver(channel, n(), options)).toBe(2);
    expect(sns.delivered.length - before).toBe(1);
    expect(clock.waits).toHaveLength(1);
    client.destroy();
  });

  it('gives up within the budget when a platform hangs, however many retries are allowed: two tries, may have been delivered', async () => {
    const hung = await startLoopback({ hang: true });
    const channel = createSlackChannel({ webhookUrl: new Secret(`${hung.url}/services/T/B/x`) });
    // The attempts' time-outs are real; the wait between them is skipped but counted.
    const clock = withRealTime();
    const err = await deliver(channel, n(), {
      timeoutMs: 300,
      retries: 10,
      budgetMs: 1500,
      logger: capture().logger,
      clock,
    }).catch((e: unknown) => e);
    await hung.close();
    // The platform had the whole message each time and never answered: its outcome is unknown, so one
    // more try and no more (not the 11 allowed), inside the budget.
    expect(err).toBeInstanceOf(DeliveryError);
    expect(err).toMatchObject({
      retryable: true,
      outcomeUnknown: true,
      reason: 'timeout',
      message: 'slack: request timed out or was aborted after the whole message was sent: it may have been delivered',
    });
    expect(hung.requests).toHaveLength(2);
    expect(clock.waits).toHaveLength(1);
    expect(clock.waits[0]).toBeLessThan(1500);
  });

  it('a slow success is an unknown outcome: one more try after a longer wait, not a copy per attempt', async () => {
    // The platform takes the whole message and answers 200 only after the attempt's time-out.
    const slow = await startLoopback({ status: 200, body: 'ok', delayMs: 600 });
    const channel = createSlackChannel({ webhookUrl: new Secret(`${slow.url}/services/T/B/x`) });
    const { lines, logger } = capture();
    const clock = withRealTime();
    const attempts = await deliver(channel, n(), { timeoutMs: 300, retries: 3, budgetMs: 10_000, logger, clock });
    await slow.close();
    // Two copies at most (four before: every attempt timed out after Slack had the message).
    expect(attempts).toBe(2);
    expect(slow.requests).toHaveLength(2);
    // The wait before the last try is longer than the backoff (≤ 1 s, ≥ 500 ms) would be at this time-out.
    expect(clock.waits).toEqual([UNKNOWN_OUTCOME_MIN_WAIT_MS]);
    expect(lines.find((l) => l.event === 'channel attempt failed')).toMatchObject({
      attempt: 1,
      retry: true,
      outcome: 'unknown',
    });
  });

  it('a slow success through the AWS SDK (SNS) is an unknown outcome too: two publishes, not one per attempt', async () => {
    const published = `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>m-1</MessageId></PublishResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></PublishResponse>`;
    const slow = await startLoopback({
      status: 200,
      headers: { 'content-type': 'text/xml' },
      body: published,
      delayMs: 600,
    });
    const { client, channel } = snsChannelAt(slow.url);
    const { lines, logger } = capture();
    const clock = withRealTime();
    const attempts = await deliver(channel, n(), { timeoutMs: 300, retries: 3, budgetMs: 10_000, logger, clock });
    await slow.close();
    client.destroy();
    expect(attempts).toBe(2);
    expect(slow.requests).toHaveLength(2);
    expect(clock.waits).toEqual([UNKNOWN_OUTCOME_MIN_WAIT_MS]);
    expect(lines.find((l) => l.event === 'channel attempt failed')).toMatchObject({ attempt: 1, outcome: 'unknown' });
  });

  it('sends one reduced rendering after a refusal of the content, which the platform accepts', async () => {
    const { lines, logger } = capture();
    const channel = createSlackChannel({ webhookUrl: new Secret(slack.url), name: 'slack-content' });
    slack.refuse((raw) => (raw.includes('\\u0000') ? 'invalid_blocks' : undefined));
    const bad = n();
    bad.alerts[0]!.annotations.description = 'dump\u0000end';
    const before = slack.accepted.length;
    try {
      expect(await deliver(channel, bad, { timeoutMs: 2000, retries: 2, budgetMs: 10_000, logger })).toBe(2);
    } finally {
      slack.refuse(undefined);
    }
    expect(slack.accepted.length - before).toBe(1);
    expect(JSON.stringify(slack.accepted.at(-1))).toContain('dumpend (cut)');
    expect(lines.find((l) => l.event === 'channel content refused')).toMatchObject({
      channel: 'slack-content',
      retry: 'reduced rendering',
      error: 'slack-content: HTTP 400: invalid_blocks',
    });
  });

  it('a channel that cannot render the content gets the reduced rendering too; a failure to render that as well is not a refusal', async () => {
    const { logger } = capture();
    const rendered: string[] = [];
    const fragile = {
      name: 'fragile',
      async send(notification: ReturnType<typeof n>) {
        // Stands in for a renderer bug triggered by one alert's text.
        rendered.push(notification.alerts[0]!.annotations.description ?? '');
        if (/\u0000/.test(notification.alerts[0]!.annotations.description ?? '')) throw new TypeError('cannot render');
      },
    };
    const bad = n();
    bad.alerts[0]!.annotations.description = 'a\u0000b';
    expect(await deliver(fragile, bad, { timeoutMs: 2000, retries: 2, budgetMs: 10_000, logger })).toBe(2);
    expect(rendered).toEqual(['a\u0000b', 'ab (cut)']);
    const broken = { name: 'broken', send: async () => Promise.reject(new TypeError('bug')) };
    const err = await deliver(broken, n(), { timeoutMs: 2000, retries: 2, budgetMs: 10_000, logger }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TypeError);
    expect(err).not.toBeInstanceOf(DeliveryError);
  });
});
